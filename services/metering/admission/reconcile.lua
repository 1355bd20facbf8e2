-- Apply usage counted while Redis was unreachable.
-- KEYS[1] quota hash
-- ARGV: 1 count, 2 limit, 3 allow_overage, 4 price, 5 ttl ms
-- Requests past the included volume accrue overage as they would have; caps
-- could not be enforced during the outage, so none is applied here.
local n = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local used = tonumber(redis.call('HGET', KEYS[1], 'used')) or 0
local beyond = math.max(0, used + n - math.max(used, limit))
redis.call('HINCRBY', KEYS[1], 'used', n)
if ARGV[3] == '1' and beyond > 0 then
  redis.call('HINCRBY', KEYS[1], 'over', beyond * tonumber(ARGV[4]))
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return used + n
