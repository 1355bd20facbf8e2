-- Abandon one admission whose caller gave up on Redis and failed open (it
-- runs the request and counts it in its journal): undo what the admission
-- did if it ran, and make sure it never runs later.
-- KEYS[1] attempt record (admit.lua KEYS[4]), KEYS[2] quota hash,
-- KEYS[3] idempotency hash
-- ARGV: 1 units, 2 price per overage unit (milli-minor), 3 attempt ttl ms,
--       4 the day field the units were counted in (admit.lua ARGV[17])
-- Returns 1 when the admission had run and was undone, else 0.
local a = redis.call('GET', KEYS[1])
if a == 'void' then
  return 0
end
local undone = 0
if a then
  undone = 1
  local _, ov = string.match(a, '^(%d+):(%d+):')
  if redis.call('EXISTS', KEYS[2]) == 1 and tonumber(ARGV[1]) > 0 then
    redis.call('HINCRBY', KEYS[2], 'used', -tonumber(ARGV[1]))
    if redis.call('HINCRBY', KEYS[2], ARGV[4], -tonumber(ARGV[1])) == 0 then
      redis.call('HDEL', KEYS[2], ARGV[4])
    end
    ov = tonumber(ov) or 0
    if ov > 0 then
      redis.call('HINCRBY', KEYS[2], 'over', -ov * tonumber(ARGV[2]))
    end
  end
  -- Its reservation of the key, unless a settle got there (it cannot: the
  -- caller never had the decision): the key is free for a retry, which the
  -- journal has already billed if the backend answers it from its own
  -- record.
  if redis.call('HGET', KEYS[3], 'st') == 'run' then
    redis.call('DEL', KEYS[3])
  end
end
redis.call('SET', KEYS[1], 'void', 'PX', tonumber(ARGV[3]))
return undone
