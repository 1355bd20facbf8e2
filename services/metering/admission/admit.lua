-- Admit one request: token bucket, idempotency, quota, reservation.
-- KEYS[1] bucket hash {t = tokens, ts = ms}
-- KEYS[2] quota hash {used, over}   (live window or test pool)
-- KEYS[3] idempotency hash {st, fp, code, hdr, body or sb}: sb is the body
--         sealed (Controller.Sealer), body one kept in the clear
-- KEYS[4] attempt record of this admission (Request.Attempt): the string
--         "<used_before>:<overage_units>:<prior_refunded>", or "void" once its
--         caller abandoned it (abandon.lua)
-- KEYS[5] the account's index of live windows (sorted set: window key by
--         its end), written only when a window counts its first units
-- ARGV: 1 now_ms, 2 rate/s, 3 burst, 4 metered, 5 limit, 6 allow_overage,
--       7 price (milli-minor units per request), 8 cap (milli-minor, -1 none),
--       9 quota ttl ms (0 = keep), 10 idem (0/1), 11 fingerprint, 12 in-flight ttl ms,
--       13 units (conversions this request stands for: 1, or a batch's items),
--       14 peek (1: only say what a metered request of that many units would
--          meet, changing nothing: no token, no reservation, no count),
--       15 void_at (Redis TIME in ms after which the script changes nothing
--          and answers 7: its caller has given up waiting; 0: no deadline),
--       16 attempt ttl ms (how long KEYS[4] is kept; 0: no attempt record),
--       17 day field of KEYS[2] ("d:<yyyymmdd>:<credential>"), counted with used,
--       18 the window's end in ms for KEYS[5] ('' for the test pool),
--       19 index members ending before this (ms) are dropped
-- Returns {outcome, tokens, full_ms, retry_ms, used_before, overage_units, code, hdr, body}
--   (admitted: {0, tokens, full_ms, 0, used_before, overage_units, prior_refunded}, where
--   prior_refunded is 1 when the key's last attempt was answered without being kept and
--   its units were given back: see Settle's 'released' record)
-- outcome: 0 admitted, 1 rate limited, 2 quota exceeded, 3 cap reached,
--          4 idempotency conflict, 5 in flight, 6 replay, 7 void (too late)
-- The client library's retry of this very admission (the first run's reply
-- was lost to a stall): answer what the first run decided, changing
-- nothing, so the request is neither refused as in flight by its own
-- reservation nor counted twice. An abandoned attempt stays void.
local attempt_ttl = tonumber(ARGV[16]) or 0
if attempt_ttl > 0 and ARGV[14] ~= '1' then
  local a = redis.call('GET', KEYS[4])
  if a == 'void' then
    return {7, 0, 0, 0, 0, 0}
  end
  if a then
    local ub, ov, pr = string.match(a, '^(%d+):(%d+):(%d)$')
    return {0, 0, 0, 0, tonumber(ub), tonumber(ov), tonumber(pr)}
  end
end

local void_at = tonumber(ARGV[15])
if void_at and void_at > 0 then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > void_at then
    return {7, 0, 0, 0, 0, 0}
  end
end

local now = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])

local peek = ARGV[14] == '1'
local tokens = 0
local function full_ms()
  return math.ceil((burst - tokens) * 1000 / rate)
end
if not peek then
  local b = redis.call('HMGET', KEYS[1], 't', 'ts')
  tokens = tonumber(b[1])
  local ts = tonumber(b[2])
  if tokens == nil or ts == nil then
    tokens = burst
    ts = now
  end
  if now > ts then
    tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
  end
  local function save_bucket()
    redis.call('HSET', KEYS[1], 't', tostring(tokens), 'ts', tostring(now))
    redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
  end
  if tokens < 1 then
    save_bucket()
    return {1, 0, full_ms(), math.ceil((1 - tokens) * 1000 / rate), 0, 0}
  end
  tokens = tokens - 1
  save_bucket()
end

local prior = 0
if not peek and ARGV[10] == '1' then
  local rec = redis.call('HMGET', KEYS[3], 'st', 'fp', 'code', 'hdr', 'body', 'sb')
  if rec[1] == 'released' then
    -- The last attempt was answered 5xx or 429 and settled: the key is free
    -- again (any body), and whatever it reserved was given back.
    prior = 1
  elseif rec[1] then
    if rec[2] ~= ARGV[11] then
      return {4, math.floor(tokens), full_ms(), 0, 0, 0}
    end
    if rec[1] == 'run' then
      return {5, math.floor(tokens), full_ms(), 0, 0, 0}
    end
    return {6, math.floor(tokens), full_ms(), 0, 0, 0, rec[3], rec[4], rec[5] or '', rec[6]}
  end
end

local used = 0
local overage = 0
if ARGV[4] == '1' then
  local q = redis.call('HMGET', KEYS[2], 'used', 'over')
  used = tonumber(q[1]) or 0
  local over = tonumber(q[2]) or 0
  local limit = tonumber(ARGV[5])
  local units = tonumber(ARGV[13])
  -- All or nothing: the units past the included volume are overage.
  overage = math.max(0, used + units - math.max(used, limit))
  if overage > 0 then
    if ARGV[6] ~= '1' then
      return {2, math.floor(tokens), full_ms(), 0, used, 0}
    end
    local cost = overage * tonumber(ARGV[7])
    local cap = tonumber(ARGV[8])
    -- The request that would reach the cap is the first refused. This is
    -- the one statement of the rule: the usage summary asks it with peek.
    if cap >= 0 and over + cost >= cap then
      return {3, math.floor(tokens), full_ms(), 0, used, 0}
    end
    if peek then
      return {0, 0, 0, 0, used, overage}
    end
    redis.call('HINCRBY', KEYS[2], 'over', cost)
  end
  if peek then
    return {0, 0, 0, 0, used, 0}
  end
  local n = redis.call('HINCRBY', KEYS[2], 'used', units)
  -- The day and key it was counted for: the fields add up to used.
  redis.call('HINCRBY', KEYS[2], ARGV[17], units)
  local ttl = tonumber(ARGV[9])
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
  if ARGV[18] ~= '' and n == units then
    redis.call('ZADD', KEYS[5], ARGV[18], KEYS[2])
    redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', '(' .. ARGV[19])
    redis.call('PEXPIRE', KEYS[5], ttl)
  end
end

if ARGV[10] == '1' then
  redis.call('HSET', KEYS[3], 'st', 'run', 'fp', ARGV[11])
  redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[12]))
end
if attempt_ttl > 0 and (ARGV[4] == '1' or ARGV[10] == '1') then
  redis.call('SET', KEYS[4], used .. ':' .. overage .. ':' .. prior, 'PX', attempt_ttl)
end
return {0, math.floor(tokens), full_ms(), 0, used, overage, prior}
