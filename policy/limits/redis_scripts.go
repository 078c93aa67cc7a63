package limits

import "github.com/redis/go-redis/v9"

// Times in the scripts are seconds since 2017-01-01 UTC as floats, the
// representation redis_rate stores, so that a GCRA key written by the
// admit script and one written by redis_rate are the same key. ARGV "now"
// is empty in production, and the scripts read the server's clock (TIME):
// one clock for every node, whatever their own clocks say.

// nowLua opens the scripts whose ARGV[1] is "now": it sets the local now.
const nowLua = `local now
if ARGV[1] == "" then
  local t = redis.call("TIME")
  now = (tonumber(t[1]) - 1483228800) + tonumber(t[2]) / 1000000
else
  now = tonumber(ARGV[1])
end
`

// expireLua defines expire_after_longest, which makes a sorted set of
// expiry scores (leases, holds) live as long as its longest member, and
// a second more.
const expireLua = `local function expire_after_longest(key, now)
  local longest = redis.call("ZRANGE", key, -1, -1, "WITHSCORES")
  redis.call("PEXPIRE", key, math.ceil((tonumber(longest[2]) - now) * 1000) + 1000)
end
`

// admitScript reserves money against an account's balance, checks a rate
// and takes a lease in one round trip.
//
// KEYS[1]: the rate key (GCRA string or rolling-window sorted set)
// KEYS[2]: the lease sorted set (member: lease id, score: expiry)
// KEYS[3]: with a reservation only, the account's mirrored balance (hash:
// bal, the balance less the charges settled since; base, the ledger
// balance last taken in)
// KEYS[4]: with a reservation only, the account's holds (sorted set:
// member "<id>|<cents>", score: expiry)
// ARGV: now, mode ("0" no rate, "1" GCRA, "2" rolling), limit, period
// (seconds), burst, lease limit (0: no lease), id (lease id, hold id and
// rolling member), lease and hold TTL (seconds), then for a reservation:
// cents wanted, cents needed at least, ledger balance, balance TTL
// (seconds)
//
// Returns {allowed, lease, remaining, retry_after, reset_after, hold,
// available}: allowed 1 when admitted; lease 0 none asked, 1 taken, 2
// refused; the durations as strings of seconds; hold the cents held (0
// none asked, -1 refused for lack of balance, with available the balance
// less the holds). Nothing is consumed unless the request is admitted by
// every check; keeping the mirror up to date and dropping expired holds
// happen either way.
var admitScript = redis.NewScript(nowLua + expireLua + `
local mode = ARGV[2]
local limit = tonumber(ARGV[3])
local period = tonumber(ARGV[4])
local burst = tonumber(ARGV[5])
local lease_limit = tonumber(ARGV[6])
local id = ARGV[7]
local ttl = tonumber(ARGV[8])
-- Times near 3e8 seconds carry about 1e-7 of rounding: compare with a
-- microsecond of slack, the resolution of TIME.
local eps = 0.000001

-- The balance first: an account that cannot pay is refused before its
-- rate is looked at, and spends none of it.
local hold, hold_member = 0, nil
if #KEYS >= 4 then
  local want = tonumber(ARGV[9])
  local need = tonumber(ARGV[10])
  local ledger = tonumber(ARGV[11])
  local balance_ttl = tonumber(ARGV[12])
  redis.call("ZREMRANGEBYSCORE", KEYS[4], "-inf", now + eps)
  local held = 0
  for _, m in ipairs(redis.call("ZRANGE", KEYS[4], 0, -1)) do
    held = held + tonumber(string.match(m, "|(%-?%d+)$"))
  end
  local mirror = redis.call("HMGET", KEYS[3], "bal", "base")
  local bal, base = tonumber(mirror[1]), tonumber(mirror[2])
  if not bal or not base then
    bal, base = ledger, ledger
    redis.call("HSET", KEYS[3], "bal", string.format("%d", bal), "base", string.format("%d", base))
    redis.call("PEXPIRE", KEYS[3], math.ceil(balance_ttl * 1000))
  elseif ledger > base then
    -- Charges only lower the ledger: a rise is a credit since.
    bal = bal + (ledger - base)
    base = ledger
    redis.call("HSET", KEYS[3], "bal", string.format("%d", bal), "base", string.format("%d", base))
  end
  local available = bal - held
  if available < need then
    return {0, 0, 0, "0", "0", -1, available}
  end
  hold = math.min(want, available)
  hold_member = id .. "|" .. string.format("%d", hold)
end

local remaining, reset_after = 0, 0
local tat, new_tat, held
if mode == "1" then
  local interval = period / limit
  tat = tonumber(redis.call("GET", KEYS[1]) or now)
  if tat < now then tat = now end
  new_tat = tat + interval
  local diff = now - (new_tat - interval * burst)
  if diff < -eps then
    return {0, 0, 0, tostring(-diff), tostring(tat - now)}
  end
  remaining = math.max(math.floor(diff / interval + eps), 0)
  reset_after = new_tat - now
elseif mode == "2" then
  -- The window is (now - period, now]. Times are whole microseconds
  -- (TIME, or ARGV now with six decimals), so half a microsecond of slack
  -- absorbs the rounding without letting an admission one microsecond
  -- inside the window fall out of it.
  redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - period + eps / 2)
  held = redis.call("ZCARD", KEYS[1])
  if held >= limit then
    local first = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")
    local last = redis.call("ZRANGE", KEYS[1], -1, -1, "WITHSCORES")
    return {0, 0, 0, tostring(tonumber(first[2]) + period - now), tostring(tonumber(last[2]) + period - now)}
  end
  remaining = limit - held - 1
  reset_after = period
end

local lease = 0
if lease_limit > 0 then
  redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now + eps)
  if redis.call("ZCARD", KEYS[2]) >= lease_limit then
    -- Refused by concurrency: report the rate budget as it stands.
    if mode == "1" then
      return {0, 2, remaining + 1, "0", tostring(tat - now)}
    elseif mode == "2" then
      local reset = 0
      if held > 0 then
        local last = redis.call("ZRANGE", KEYS[1], -1, -1, "WITHSCORES")
        reset = tonumber(last[2]) + period - now
      end
      return {0, 2, remaining + 1, "0", tostring(reset)}
    end
    return {0, 2, 0, "0", "0"}
  end
  redis.call("ZADD", KEYS[2], now + ttl, id)
  expire_after_longest(KEYS[2], now)
  lease = 1
end

if hold_member then
  redis.call("ZADD", KEYS[4], now + ttl, hold_member)
  expire_after_longest(KEYS[4], now)
end

if mode == "1" then
  redis.call("SET", KEYS[1], new_tat, "EX", math.ceil(reset_after))
elseif mode == "2" then
  redis.call("ZADD", KEYS[1], now, id)
  redis.call("PEXPIRE", KEYS[1], math.ceil(period * 1000))
end
return {1, lease, remaining, "0", tostring(reset_after), hold, 0}
`)

// settleScript frees a hold and lowers the mirrored balance by the
// request's charge. A mirror that expired is left alone: the next
// admission seeds it from a ledger balance that has the charge.
//
// KEYS[1]: the account's mirrored balance; KEYS[2]: its holds
// ARGV: hold member, charge in cents
var settleScript = redis.NewScript(`
redis.call("ZREM", KEYS[2], ARGV[1])
local charge = tonumber(ARGV[2])
if charge > 0 and redis.call("EXISTS", KEYS[1]) == 1 then
  redis.call("HINCRBY", KEYS[1], "bal", -charge)
end
return 1
`)

// dropHoldScript removes the hold of an admission whose answer was lost,
// whatever amount it held.
//
// KEYS[1]: the account's holds; ARGV: hold id
var dropHoldScript = redis.NewScript(`
local prefix = ARGV[1] .. "|"
for _, m in ipairs(redis.call("ZRANGE", KEYS[1], 0, -1)) do
  if string.sub(m, 1, #prefix) == prefix then
    redis.call("ZREM", KEYS[1], m)
  end
end
return 1
`)

// renewScript extends a lease that is still held.
//
// KEYS[1]: the lease sorted set
// ARGV: now, lease id, lease TTL (seconds)
//
// Returns 1 when renewed, 0 when the lease was gone: it expired because
// renewals failed for a whole TTL, and its slot may belong to another
// holder by now.
var renewScript = redis.NewScript(nowLua + expireLua + `
local ttl = tonumber(ARGV[3])
local score = redis.call("ZSCORE", KEYS[1], ARGV[2])
if not score then
  return 0
end
if tonumber(score) <= now then
  redis.call("ZREM", KEYS[1], ARGV[2])
  return 0
end
redis.call("ZADD", KEYS[1], "XX", now + ttl, ARGV[2])
expire_after_longest(KEYS[1], now)
return 1
`)

// heldScript sums an account's unexpired holds, without changing them.
//
// KEYS[1]: the account's holds; ARGV: now
var heldScript = redis.NewScript(nowLua + `
local held = 0
for _, m in ipairs(redis.call("ZRANGEBYSCORE", KEYS[1], "(" .. tostring(now + 0.000001), "+inf")) do
  held = held + tonumber(string.match(m, "|(%-?%d+)$"))
end
return held
`)
