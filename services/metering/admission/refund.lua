-- Give back units counted for work that we failed (not the client), once per
-- reference.
-- KEYS[1] quota hash, KEYS[2] the reference's marker
-- ARGV: 1 units, 2 limit, 3 price per 1000 (0: no overage), 4 marker ttl ms,
--       5 the day field the units were counted in (admit.lua ARGV[17])
-- The units given back are the last counted: those past the included volume
-- give their overage back too. Returns the units given back (0: the reference
-- was refunded before).
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[4]) then
  return 0
end
local used = tonumber(redis.call('HGET', KEYS[1], 'used')) or 0
local n = math.min(tonumber(ARGV[1]), used)
if n <= 0 then
  return 0
end
local beyond = math.max(0, math.min(n, used - tonumber(ARGV[2])))
redis.call('HINCRBY', KEYS[1], 'used', -n)
if redis.call('HINCRBY', KEYS[1], ARGV[5], -n) == 0 then
  redis.call('HDEL', KEYS[1], ARGV[5])
end
if beyond > 0 and tonumber(ARGV[3]) > 0 then
  local over = tonumber(redis.call('HGET', KEYS[1], 'over')) or 0
  redis.call('HINCRBY', KEYS[1], 'over', -math.min(over, beyond * tonumber(ARGV[3])))
end
return n
