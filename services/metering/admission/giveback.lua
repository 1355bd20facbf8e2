-- Give back the units of an admitted request whose answer does not count
-- (Controller.Settle): the count, its overage and the day field it was
-- counted in, which is removed once it is back to zero (a day whose
-- requests were all given back leaves nothing behind).
-- KEYS[1] quota hash
-- ARGV: 1 units, 2 overage (milli-minor), 3 day field (admit.lua ARGV[17])
local n = tonumber(ARGV[1])
redis.call('HINCRBY', KEYS[1], 'used', -n)
if tonumber(ARGV[2]) > 0 then
  redis.call('HINCRBY', KEYS[1], 'over', -tonumber(ARGV[2]))
end
if redis.call('HINCRBY', KEYS[1], ARGV[3], -n) == 0 then
  redis.call('HDEL', KEYS[1], ARGV[3])
end
return n
