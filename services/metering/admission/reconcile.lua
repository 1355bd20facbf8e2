-- Apply usage counted while Redis was unreachable.
-- KEYS[1] quota hash, KEYS[2] the account's index of live windows
-- ARGV: 1 count, 2 limit, 3 allow_overage, 4 price, 5 ttl ms,
--       6 day field of KEYS[1] (counted with used, as admit.lua does),
--       7 the window's end in ms for KEYS[2] ('' for the test pool),
--       8 index members ending before this (ms) are dropped
-- Requests past the included volume accrue overage as they would have; caps
-- could not be enforced during the outage, so none is applied here.
local n = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local used = tonumber(redis.call('HGET', KEYS[1], 'used')) or 0
local beyond = math.max(0, used + n - math.max(used, limit))
redis.call('HINCRBY', KEYS[1], 'used', n)
if redis.call('HINCRBY', KEYS[1], ARGV[6], n) == 0 then
  redis.call('HDEL', KEYS[1], ARGV[6])
end
if ARGV[3] == '1' and beyond > 0 then
  redis.call('HINCRBY', KEYS[1], 'over', beyond * tonumber(ARGV[4]))
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
if ARGV[7] ~= '' and used == 0 and n > 0 then
  redis.call('ZADD', KEYS[2], ARGV[7], KEYS[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[8])
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return used + n
