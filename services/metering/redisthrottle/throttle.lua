local key, op = KEYS[1], ARGV[1]
local now, window, max = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
-- an attempt at 'at' counts while now < at + window
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if op == 'fail' then
  redis.call('ZADD', key, now, ARGV[5])
  -- only the newest max attempts decide the wait: keep no more
  redis.call('ZREMRANGEBYRANK', key, 0, -(max + 1))
  redis.call('PEXPIRE', key, math.ceil(window / 1000) + 60000)
  return 0
end
local n = redis.call('ZCARD', key)
if n < max then return 0 end
local oldest = redis.call('ZRANGE', key, n - max, n - max, 'WITHSCORES')
return tonumber(oldest[2]) + window - now
