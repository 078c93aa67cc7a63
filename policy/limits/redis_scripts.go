package limits

import "github.com/redis/go-redis/v9"

// Times in the scripts are seconds since 2017-01-01 UTC as floats, the
// representation redis_rate stores, so that a GCRA key written by the
// admit script and one written by redis_rate are the same key. ARGV "now"
// is empty in production (the admit script's: no clock given), and the
// scripts read the server's clock (TIME): one clock for every node,
// whatever their own clocks say.
//
// An expiry written as the score of a slot or a hold (admitScript,
// renewScript) is that time rounded up to a whole second, in the same
// unit. A sorted set of up to 128 members is a listpack, and ZADD finds
// a new member's place by walking it from the head, reading every
// member's score: a whole number is kept as an integer and read as one,
// where any other is kept as 17 digits of text and parsed again with
// strtod for every member walked, about 1,000 instructions each; a new
// member expires after all those there, so it walks them all. What it
// costs: the slot or hold of a holder that died lives up to a second
// longer than its TTL. Every reader compares scores as numbers, so an
// older gateway's fractional scores in the same set, and the new ones
// in its, are read as they always were. The expiry's text is made with
// string.format("%d"): about 1,300 instructions fewer an admission than
// the "%.14g" of the number made a string (expires .. ""), and 4,500
// fewer than passing the number to redis.call, which Redis formats with
// "%.17g" for each call.

// nowLua opens the scripts whose ARGV[1] is "now": it sets the local now.
const nowLua = `local now
if ARGV[1] == "" then
  local t = redis.call("TIME")
  now = (t[1] - 1483228800) + t[2] / 1000000
else
  now = ARGV[1] + 0
end
`

// expireLua defines expire_at_least(key, ms, created), which makes a
// sorted set of expiry scores (leases, holds) live at least ms more: as
// long as its longest member, and a second more, when ms is the new
// member's. PEXPIRE GT (Redis 7) keeps the later of the two expiries
// instead of reading the longest member first, which was a command per
// write. A set with an expiry always has one as long as its longest
// member's: every script that adds or extends a member extends it, or,
// for an admission with a reservation, knows it already lives longer
// (admitScript, "the sets' lives"), and removing members leaves it as it
// was (the set then outlives its longest member, which costs memory for
// at most a TTL). GT takes a set without
// an expiry for one that never expires and leaves it so: a set this
// script created (created: the set was empty) gets a plain PEXPIRE, and
// one GT left alone is checked for having none, which only happens to a
// set written by something else.
const expireLua = `local function expire_at_least(key, ms, created)
  if created then
    redis.call("PEXPIRE", key, ms)
  elseif redis.call("PEXPIRE", key, ms, "GT") == 0 and redis.call("PTTL", key) == -1 then
    redis.call("PEXPIRE", key, ms)
  end
end
`

// heldLua defines what the scripts that add or remove holds share. An
// account's holds are a sorted set (member "<id>|<cents>", score: its
// expiry); the account's mirrored balance (a hash) also keeps their
// cents' sum ("sum") and their number ("n"), which every script that
// adds or removes a member keeps up to date: the admission reads the sum
// with the balance, in one command, instead of adding up every hold in
// flight, which cost it about half a microsecond per hold (48 µs with
// 100 in flight) on Redis's one thread. The sum lives and dies with the
// mirror: a mirror that expired is seeded again with the holds counted
// from their members.
//
// The sum is trusted only while it counts as many holds as the set has
// and is not negative; otherwise the admission counts it again from the
// members. That covers a writer that does not keep it here: an older
// gateway during an upgrade kept it in a key of its own (":held"), and
// its holds make the counts differ. It cannot tell a writer that
// removed as many holds as it added between two admissions; the sum
// then stays off until the counts differ or the mirror expires (the
// balance TTL), which bounds an upgrade's error to the holds of the
// older gateways in that time.
//
//   - fmt_cents(c) is c as an integer string, for HSET.
//   - put(fields, field, value) adds a field and its value to the
//     arguments of an HSET.
//   - hold_cents(m) is the cents of member m.
//   - lower_sum(mirror, cents, n) takes n holds of cents in all off the
//     sum, if the mirror keeps one: a missing sum is counted again by
//     the next admission.
const heldLua = `local function fmt_cents(c)
  return string.format("%d", c)
end
local function put(fields, field, value)
  fields[#fields + 1] = field
  fields[#fields + 1] = value
end
local function hold_cents(m)
  return tonumber(string.match(m, "|(%-?%d+)$"))
end
local function lower_sum(mirror, cents, n)
  local kept = redis.call("HMGET", mirror, "sum", "n")
  local sum, count = tonumber(kept[1]), tonumber(kept[2])
  if sum and count then
    redis.call("HSET", mirror, "sum", fmt_cents(sum - cents), "n", count - n)
  end
end
`

// logLua defines what the admit script reads of a rolling window's log:
// a string of admission times, oldest first, each an 8-byte double
// (struct "<d"), the same number the sorted set it replaces kept as a
// score. The times are exact, so the window is as exact as the set was,
// and an entry costs 8 bytes instead of about 52 in a listpack or 133 in
// a skip list.
//
// An admission reads the log (GET) and appends its time (APPEND): the
// times that have left the window stay at the head of the string, where
// the binary search for the window's start steps over them, until they
// are 32; then the admission writes the log anew without them (SET).
// Writing the log anew on every admission cost more than the calls it
// replaced: with 130 times in the log, building the new string in Lua
// and copying it into Redis took about two thirds of the window's 13 µs.
// Every string Lua is given or makes costs about 11 instructions a byte
// (Redis hashes all of it), so the times left at the head cost every
// admission that reads them; 32 of them, dropped at once, cost less than
// as many as the window holds (docs/performance.md, "Where the log's
// bytes go"). So the log holds at most the window's times and 32 more
// (2.3 KB for a limit of 256); the window of a larger limit stays a
// sorted set, whose calls cost about the same whatever its size. A time earlier than the log's
// last (the clock went back: a failover to a server whose clock is
// behind, or a test's clock) is put in order, the log written anew.
//
// The log lives until a Period after its last time, and up to a second
// longer: an APPEND leaves the expiry as it was, and the admission
// extends it (PEXPIRE to a Period and a second) only when its time is
// the log's first in this second (the whole seconds of its time and of
// the log's last differ) or the log was empty; a log written anew gets
// a Period and a second after its last time. Why that is enough: the
// first time of this second was written at t >= the second's start by
// an admission that extended the log to at least t + Period + 1 s,
// which is later than this admission's time plus a Period, and only a
// rewrite, which extends it as far, removes times.
//
//   - log_at(log, i) is the i-th time (1-based).
//   - log_after(log, n, t) is the index of the first of the n times that
//     is after t, n + 1 if none is. Its loop reads the times itself and
//     halves without math.floor: it runs eight or nine times an
//     admission, and each function call it saves is a few hundred
//     instructions of Redis's one thread.
const logLua = `local unpack_time = struct.unpack
local function log_at(log, i)
  return (unpack_time("<d", log, i * 8 - 7))
end
local function log_after(log, n, t)
  local lo, hi = 1, n + 1
  while lo < hi do
    local mid = lo + hi
    mid = (mid - mid % 2) / 2
    if unpack_time("<d", log, mid * 8 - 7) > t then
      hi = mid
    else
      lo = mid + 1
    end
  end
  return lo
end
`

// noScript reports whether err is Redis's answer to an EVALSHA of a
// script it does not have. redis.HasErrorPrefix allocates even for a nil
// error, which nearly every call passes it.
func noScript(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") }

// admitScript reserves money against an account's balance, checks a rate
// and takes a lease in one round trip.
//
// KEYS[1]: the rate key (GCRA string, rolling window's sorted set or
// log: logLua)
// KEYS[2]: the lease sorted set (member: lease id, score: expiry)
// KEYS[3]: with a reservation only, the account's mirrored balance (hash:
// bal, the balance less the charges settled since; base, the ledger
// balance last taken in; sum and n, the holds' (heldLua); hx and
// sx:<key>, the hints below; hl and sl:<key>, the sets' lives below)
// KEYS[4]: with a reservation only, the account's holds (sorted set:
// member "<id>|<cents>", score: expiry)
// ARGV[1]: the numbers, packed (admitNums in redis_admit.go: mode, 0 no
// rate, 1 GCRA, 2 rolling in a sorted set, 3 rolling in a log; whether
// now is given, and now; the rate's limit, period in seconds and burst;
// the lease limit, 0 for no lease; the lease and hold TTL in seconds;
// cents wanted, 0 to check the balance and hold nothing; cents needed at
// least; the balance TTL in seconds; the key's spend limit, 0 for none,
// and its spend read with the lookup)
// ARGV[2]: the id (lease id, hold id and rolling member)
// ARGV[3], ARGV[4]: with a reservation only, the member of a hold of all
// the cents wanted ("<id>|<cents>") and the ledger balance
// ARGV[5], ARGV[6]: for a key with a spend limit only, its id and the
// period's name (the id then ends in "|k:<key>", so that the hold's
// member names its key)
//
// The numbers are one string read by one struct.unpack, and the strings
// only those the script writes or compares as they are: each argument
// is a Lua string made and interned and a slot of the ARGV table, and a
// number sent as text was parsed again (a billed stream's admission took
// about 8,000 instructions fewer with twelve arguments made four).
//
// Hints: the mirror keeps a time before which none of the account's
// holds can expire (hx) and one for each key's stream slots (sx:<key>):
// the earliest expiry in the set when it was last looked at, lowered by
// every hold or slot added since, or, for an empty set, now + TTL, as
// whatever is added later expires later (that hint is not rounded up:
// an older gateway's member added later is not). Renewals only
// push expiries back and releases only remove, so a hint never claims
// more than holds. A member added lowers the hint to its expiry when
// that expiry, rounded up, is earlier: compared as now + TTL, an
// expiry that rounding moved past the hint (an older gateway's member
// of a longer TTL, or renewed, expiring between the two) would raise
// the hint past that member.
// Before its hint the admission trusts the mirror's sum and number of
// holds, and the slot set's ZCARD, instead of removing expired members
// and counting the holds first (three calls); at or after it, or when
// the mirror lacks it (seeded anew, an older gateway's), it does both
// and takes a new hint from the set's first member.
//
// The sets' lives: a set of holds or of a key's slots must live as long
// as its longest member (expire_at_least). The mirror keeps a time until
// which each is known to live (hl for the holds, sl:<key> for a key's
// slots): when the admission extends a set, to now + TTL and a second,
// which is no earlier than its new member's expiry (rounded up, less
// than a second later), it records that time, to the whole second below:
// a whole expiry compares with it as with the exact time, and a whole
// number is formatted and, by every admission, read for less (about
// 1,200 instructions an admission on the server's clock; an older
// gateway reads it as the earlier time it is). A later admission whose
// member expires no later adds it without a PEXPIRE (whole numbers are
// compared with no slack): with one TTL, every admission until its now +
// TTL passes the recorded time, which comes within a second of the
// admission that extended. An account admitting many requests a second
// extends each set about once a second instead of on every admission.
// Why the set still
// lives as long as its longest member: it lived until the recorded time
// when that was written, and since then its expiry has only been pushed
// back (PEXPIRE GT, by admissions and renewals), or it was emptied,
// which removed it, and then set anew by the admission that created it
// again, to its own time + TTL + 1 s, no earlier than the recorded time,
// whichever gateway created it (an older one included), as long as they
// run with the same lease TTL, or the older ones with a longer one. An admission that finds the set empty
// (no holds counted, no slots) extends it whatever the mirror says. A
// set that something else left without an expiry (PERSIST) gets one
// again at the next extension, at most a second later.
//
// Returns eight numbers packed in one string, each a little-endian
// double (struct "<d"): allowed, lease, remaining, retry_after,
// reset_after, hold, and two more that a refusal by the balance or the
// key's spend limit fills (admitReplyLen in redis_admit.go says what
// each is). The durations are whole microseconds and a half, which the
// caller truncates. A string answer is copied into the client's reply
// whole, where an array was a Lua table built and then read back by
// Redis element by element, about 7,500 instructions an admission;
// struct.pack of eight doubles takes about 3,400. Nothing is consumed
// unless the request is admitted by every check; keeping the mirror up
// to date and dropping expired holds happen either way. Every way out sets the
// answer and leaves the repeat ... until true loop that holds the
// script's steps (not indented, to keep them as they were), after which
// the mirror is written: a function called on each way out, as it was,
// was a closure of sixteen upvalues made on every call, about 2,000
// instructions.
//
// What costs Redis's thread in a script besides its calls is mostly
// turning numbers into strings and back (a string.format of a time is
// about 5,000 instructions, a tonumber about 2,000, a number passed to
// redis.call is formatted too): the script converts only what its path
// uses, passes strings to redis.call, formats an expiry once for both
// sets, and answers durations as numbers that the caller truncates to
// whole microseconds, so adding half a microsecond rounds them, with no
// string made on either side. It reads a number by
// arithmetic on its string (s + 0), which parses it once where tonumber
// parses it twice; leaves the ledger balance unparsed when it is the
// string the mirror took in last; and holds the cents as the caller
// sent them when it holds all it wanted. It also defines only
// the functions its common path uses: Redis runs the whole chunk on
// every call, and each local function is a closure made anew each time.
// The three it makes cost about 1,800 instructions a call: as a Redis
// Function (FCALL), whose library makes them once when it is loaded,
// the admission took 0.6 – 2.1 % fewer instructions, too little for a
// library to load on every primary and to version across an upgrade
// (docs/performance.md, "The admission as a Redis Function").
var admitScript = redis.NewScript(expireLua + logLua + `
local mode, clock, now, limit, period, burst, lease_limit, ttl, want, need, balance_ttl, key_limit, key_seed =
  struct.unpack("` + admitNumsFormat + `", ARGV[1])
if clock == 0 then
  local t = redis.call("TIME")
  now = (t[1] - 1483228800) + t[2] / 1000000
end
local id = ARGV[2]
-- Times near 3e8 seconds carry about 1e-7 of rounding: compare with a
-- microsecond of slack, the resolution of TIME.
local eps = 0.000001
-- A hold's cents end its member (heldLua's hold_cents).
local cents_pattern = "|(%-?%d+)$"

-- The balance first: an account that cannot pay is refused before its
-- rate is looked at, and spends none of it. The mirror, the holds' sum
-- and the key's spend are read in one command, and what changed of them
-- is written back in one, on every way out (after the loop below):
-- each w_ variable is a field's new value, nil to leave it as it is.
local hold, hold_member, holds_sum, holds_n, holds_hint, holds_live = 0, nil, 0, 0, nil, nil
local seeded = false
local slot_field, slot_hint, slot_live_field, slot_live = nil, nil, nil, nil
local w_bal, w_base, w_holds, w_hx, w_hl, w_sx, w_sl, w_kp, w_ks
local key
-- The answer (admitReplyLen): every way out sets it and leaves the
-- loop, which runs once, so that the mirror is written on each.
local r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold, r_x, r_y = 0, 0, 0, 0, 0, 0, 0, 0
repeat
if #KEYS >= 4 then
  local key_period
  if lease_limit > 0 then
    -- The lease key ends "}:key:<key>:streams" (Redis.leaseKey).
    local at = string.find(KEYS[2], "}:key:", 1, true)
    if at then
      local slot_key = string.sub(KEYS[2], at + 6, -9)
      slot_field, slot_live_field = "sx:" .. slot_key, "sl:" .. slot_key
    end
  end
  local mirror, key_at
  if key_limit > 0 then
    local fields = {"bal", "base", "sum", "n", "hx", "hl"}
    if slot_field then
      fields[7], fields[8] = slot_field, slot_live_field
    end
    key_at = #fields + 1
    key, key_period = ARGV[5], ARGV[6]
    fields[key_at], fields[key_at + 1] = "kp:" .. key, "ks:" .. key
    mirror = redis.call("HMGET", KEYS[3], unpack(fields))
  elseif slot_field then
    mirror = redis.call("HMGET", KEYS[3], "bal", "base", "sum", "n", "hx", "hl", slot_field, slot_live_field)
  else
    mirror = redis.call("HMGET", KEYS[3], "bal", "base", "sum", "n", "hx", "hl")
  end
  -- A string in arithmetic is read as tonumber reads it, in one parse
  -- instead of tonumber's two; a missing field is false.
  local sum, n, hint = mirror[3], mirror[4], mirror[5]
  sum, n, hint = sum and sum + 0, n and n + 0, hint and hint + 0
  holds_live = mirror[6]
  if slot_field then
    slot_hint, slot_live = mirror[7], mirror[8]
    slot_hint = slot_hint and slot_hint + 0
  end
  if sum and n and hint and sum >= 0 and n >= 0 and now < hint - eps then
    -- No hold has expired since the hint was taken.
    holds_sum, holds_n, holds_hint = sum, n, hint
  else
    -- Drop the expired holds, and take them off the sum.
    local expired = redis.call("ZRANGEBYSCORE", KEYS[4], "-inf", now + eps)
    if #expired > 0 then
      redis.call("ZREMRANGEBYSCORE", KEYS[4], "-inf", now + eps)
      if sum and n then
        for _, m in ipairs(expired) do
          sum = sum - tonumber(string.match(m, cents_pattern))
        end
        n = n - #expired
      end
    end
    holds_n = redis.call("ZCARD", KEYS[4])
    if holds_n == 0 then
      -- Whatever the mirror says, nothing is held.
      holds_sum = 0
      holds_hint = now + ttl
    else
      if sum and sum >= 0 and n == holds_n then
        holds_sum = sum
      else
        holds_sum = 0
        for _, m in ipairs(redis.call("ZRANGE", KEYS[4], 0, -1)) do
          holds_sum = holds_sum + tonumber(string.match(m, cents_pattern))
        end
      end
      holds_hint = tonumber(redis.call("ZRANGE", KEYS[4], 0, 0, "WITHSCORES")[2])
    end
    w_holds, w_hx = true, string.format("%.6f", holds_hint)
  end
  local bal, base = mirror[1], mirror[2]
  if not bal or not base then
    bal = ARGV[4] + 0
    base, seeded = bal, true
    w_bal, w_base = string.format("%d", bal), string.format("%d", base)
  else
    bal = bal + 0
    -- Charges only lower the ledger: a rise is a credit since. The
    -- same string is the same number, and needs no parse.
    if base ~= ARGV[4] then
      local ledger = ARGV[4] + 0
      base = base + 0
      if ledger > base then
        bal = bal + (ledger - base)
        base = ledger
        w_bal, w_base = string.format("%d", bal), string.format("%d", base)
      end
    end
  end
  -- The key's spend limit: its spend in the period (kept in the mirror
  -- as ks:<key>, of period kp:<key>) and its holds in flight, whose
  -- members carry "|k:<key>|", must leave room for the whole estimate.
  local spent = 0
  if key_limit > 0 then
    spent = key_seed
    if mirror[key_at] == key_period then
      spent = math.max(tonumber(mirror[key_at + 1]) or 0, key_seed)
    end
    w_kp, w_ks = key_period, string.format("%d", spent)
  end
  local available = bal - holds_sum
  if available < need then
    r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold, r_x, r_y = 0, 0, 0, 0, 0, -1, available, 0
    break
  end
  if key_limit > 0 then
    local tag, key_held = "|k:" .. key .. "|", 0
    for _, m in ipairs(redis.call("ZRANGE", KEYS[4], 0, -1)) do
      if string.find(m, tag, 1, true) then
        key_held = key_held + tonumber(string.match(m, cents_pattern))
      end
    end
    if spent + key_held + math.max(want, need) > key_limit then
      r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold, r_x, r_y = 0, 0, 0, 0, 0, -2, spent, key_held
      break
    end
  end
  if want > 0 then
    -- The cents as the caller sent them when it is all of them: the
    -- same digits, without formatting the number.
    if available < want then
      hold = available
      hold_member = id .. "|" .. string.format("%d", hold)
    else
      hold = want
      hold_member = ARGV[3]
    end
  end
end

local remaining, reset_after = 0, 0
local tat, new_tat, held, interval, log, log_n, log_first
if mode == 1 then
  interval = period / limit
  tat = tonumber(redis.call("GET", KEYS[1]) or now)
  if tat < now then tat = now end
  new_tat = tat + interval
  local diff = now - (new_tat - interval * burst)
  if diff < -eps then
    r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold, r_x, r_y = 0, 0, 0, -diff * 1e6 + 0.5, (tat - now) * 1e6 + 0.5, 0, 0, 0
    break
  end
  remaining = math.max(math.floor(diff / interval + eps), 0)
  reset_after = new_tat - now
elseif mode == 2 then
  -- The window is (now - period, now]. Times are whole microseconds
  -- (TIME, or a given now, to the microsecond), so half a microsecond of slack
  -- absorbs the rounding without letting an admission one microsecond
  -- inside the window fall out of it.
  redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - period + eps / 2)
  held = redis.call("ZCARD", KEYS[1])
  if held >= limit then
    local first = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")
    local last = redis.call("ZRANGE", KEYS[1], -1, -1, "WITHSCORES")
    r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold, r_x, r_y = 0, 0, 0, (first[2] + period - now) * 1e6 + 0.5, (last[2] + period - now) * 1e6 + 0.5, 0, 0, 0
    break
  end
  remaining = limit - held - 1
  reset_after = period
elseif mode == 3 then
  -- The same window, in a log: the times from log_first on are in it.
  log = redis.call("GET", KEYS[1]) or ""
  log_n = #log / 8
  log_first = log_after(log, log_n, now - period + eps / 2)
  held = log_n - log_first + 1
  if held >= limit then
    r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold, r_x, r_y = 0, 0, 0, (log_at(log, log_first) + period - now) * 1e6 + 0.5, (log_at(log, log_n) + period - now) * 1e6 + 0.5, 0, 0, 0
    break
  end
  remaining = limit - held - 1
  reset_after = period
end

-- The new slot's and hold's expiry, now + TTL rounded up to a whole
-- second (expires; x - x % 1 is math.floor(x) for the positive times
-- here, without the call), and as ZADD takes it (expiry).
local expires, expiry
if lease_limit > 0 or hold_member then
  expires = now + ttl
  local part = expires % 1
  if part > 0 then
    expires = expires - part + 1
  end
  expiry = string.format("%d", expires)
end
local lease = 0
if lease_limit > 0 then
  local leases
  if slot_hint and now < slot_hint - eps then
    leases = redis.call("ZCARD", KEYS[2])
  else
    redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now + eps)
    leases = redis.call("ZCARD", KEYS[2])
    if slot_field then
      if leases > 0 then
        slot_hint = tonumber(redis.call("ZRANGE", KEYS[2], 0, 0, "WITHSCORES")[2])
      else
        slot_hint = now + ttl
      end
      w_sx = string.format("%.6f", slot_hint)
    end
  end
  if leases >= lease_limit then
    -- Refused by concurrency: report the rate budget as it stands.
    if mode == 1 then
      r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold, r_x, r_y = 0, 2, remaining + 1, 0, (tat - now) * 1e6 + 0.5, 0, 0, 0
      break
    elseif mode == 2 or mode == 3 then
      local reset = 0
      if held > 0 and mode == 2 then
        local last = redis.call("ZRANGE", KEYS[1], -1, -1, "WITHSCORES")
        reset = tonumber(last[2]) + period - now
      elseif held > 0 then
        reset = log_at(log, log_n) + period - now
      end
      r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold, r_x, r_y = 0, 2, remaining + 1, 0, reset * 1e6 + 0.5, 0, 0, 0
      break
    end
    r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold, r_x, r_y = 0, 2, 0, 0, 0, 0, 0, 0
    break
  end
  redis.call("ZADD", KEYS[2], expiry, id)
  -- The set's life: see the sets' lives above.
  slot_live = slot_live and slot_live + 0
  if leases == 0 or not slot_live or expires > slot_live then
    expire_at_least(KEYS[2], math.ceil(ttl * 1000) + 1000, leases == 0)
    if slot_live_field then
      w_sl = now + ttl + 1
      w_sl = string.format("%d", w_sl - w_sl % 1)
    end
  end
  if slot_field and expires < slot_hint then
    w_sx = expiry
  end
  lease = 1
end

if hold_member then
  redis.call("ZADD", KEYS[4], expiry, hold_member)
  if expires < holds_hint then
    w_hx = expiry
  end
  holds_live = holds_live and holds_live + 0
  if holds_n == 0 or not holds_live or expires > holds_live then
    expire_at_least(KEYS[4], math.ceil(ttl * 1000) + 1000, holds_n == 0)
    w_hl = now + ttl + 1
    w_hl = string.format("%d", w_hl - w_hl % 1)
  end
  holds_sum, holds_n, w_holds = holds_sum + hold, holds_n + 1, true
end

-- next_after: with nothing remaining, the time until a request would be
-- admitted again (the node that asked refuses until then without asking).
local next_after = 0
if mode == 1 then
  redis.call("SET", KEYS[1], new_tat, "EX", math.ceil(reset_after))
  if remaining == 0 then
    next_after = new_tat - interval * (burst - 1) - now
  end
elseif mode == 2 then
  redis.call("ZADD", KEYS[1], now, id)
  redis.call("PEXPIRE", KEYS[1], math.ceil(period * 1000))
  if remaining == 0 then
    local first = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")
    next_after = tonumber(first[2]) + period - now
  end
elseif mode == 3 then
  -- Append the time, or write the log anew (logLua): to drop the times
  -- that left the window once they are 32, or to put a time earlier
  -- than the last in order.
  local last = log_n > 0 and log_at(log, log_n)
  local gone = log_first - 1
  local oldest
  if last and now < last or gone >= 32 then
    local at = log_after(log, log_n, now)
    local kept = string.sub(log, gone * 8 + 1, (at - 1) * 8) .. struct.pack("<d", now) .. string.sub(log, (at - 1) * 8 + 1)
    redis.call("SET", KEYS[1], kept, "PX", math.ceil((math.max(now, last) + period + 1 - now) * 1000))
    oldest = log_at(kept, 1)
  else
    redis.call("APPEND", KEYS[1], struct.pack("<d", now))
    -- The whole seconds differ (x - x % 1 is math.floor(x) for the
    -- positive times here, without the call).
    if not last or now - now % 1 ~= last - last % 1 then
      redis.call("PEXPIRE", KEYS[1], math.ceil((period + 1) * 1000))
    end
    if remaining == 0 then
      oldest = held > 0 and log_at(log, log_first) or now
    end
  end
  if remaining == 0 then
    next_after = oldest + period - now
  end
end
r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold = 1, lease, remaining, next_after * 1e6 + 0.5, reset_after * 1e6 + 0.5, hold
until true
if w_holds and not (w_hx or w_hl or w_sx or w_sl or w_bal or w_kp) then
  -- An admission within the second writes only these: no table.
  redis.call("HSET", KEYS[3], "sum", string.format("%d", holds_sum), "n", string.format("%d", holds_n))
else
  local f, k = {}, 0
  if w_holds then
    f[1], f[2], f[3], f[4], k = "sum", string.format("%d", holds_sum), "n", string.format("%d", holds_n), 4
  end
  if w_hx then
    f[k + 1], f[k + 2], k = "hx", w_hx, k + 2
  end
  if w_hl then
    f[k + 1], f[k + 2], k = "hl", w_hl, k + 2
  end
  if w_sx then
    f[k + 1], f[k + 2], k = slot_field, w_sx, k + 2
  end
  if w_sl then
    f[k + 1], f[k + 2], k = slot_live_field, w_sl, k + 2
  end
  if w_bal then
    f[k + 1], f[k + 2], f[k + 3], f[k + 4], k = "bal", w_bal, "base", w_base, k + 4
  end
  if w_kp then
    f[k + 1], f[k + 2], f[k + 3], f[k + 4], k = "kp:" .. key, w_kp, "ks:" .. key, w_ks, k + 4
  end
  if k > 0 then
    redis.call("HSET", KEYS[3], unpack(f, 1, k))
    if seeded then
      redis.call("PEXPIRE", KEYS[3], math.ceil(balance_ttl * 1000))
    end
  end
end
return struct.pack("<dddddddd", r_allowed, r_lease, r_remaining, r_retry, r_reset, r_hold, r_x, r_y)
`)

// settleScript frees a hold and lowers the mirrored balance by the
// request's charge. A mirror that expired is left alone: the next
// admission seeds it from a ledger balance that has the charge. A try
// that may repeat one whose answer was lost (again "1") lowers the
// mirror only when it removes the hold: the earlier try, had it run,
// removed the hold and took the charge together. (Should the hold have
// expired before such a try, the mirror lacks the charge until it
// expires, within the balance TTL, as with a settlement never sent.)
// The mirror is read and written once each, whatever changes.
//
// KEYS[1]: the account's mirrored balance, which keeps the holds' sum;
// KEYS[2]: its holds
// ARGV: hold member, charge in cents, again ("1" or "0")
var settleScript = redis.NewScript(heldLua + `
local removed = redis.call("ZREM", KEYS[2], ARGV[1]) == 1
local charge = tonumber(ARGV[2])
local charged = charge > 0 and (removed or ARGV[3] ~= "1")
if not removed and not charged then
  return 1
end
-- A hold of a key with a spend limit names its key: the charge adds to
-- the key's spend in the period, when the mirror keeps one.
local key = string.match(ARGV[1], "|k:([^|]+)|")
local fields = {"bal", "sum", "n"}
if key then
  fields[4] = "ks:" .. key
end
local kept = redis.call("HMGET", KEYS[1], unpack(fields))
local set = {}
local sum, n = tonumber(kept[2]), tonumber(kept[3])
if removed and sum and n then
  put(set, "sum", fmt_cents(sum - hold_cents(ARGV[1])))
  put(set, "n", n - 1)
end
local bal = tonumber(kept[1])
if charged and bal then
  put(set, "bal", fmt_cents(bal - charge))
  local key_spent = key and tonumber(kept[4])
  if key_spent then
    put(set, "ks:" .. key, fmt_cents(key_spent + charge))
  end
end
if #set > 0 then
  redis.call("HSET", KEYS[1], unpack(set))
end
return 1
`)

// dropHoldScript removes the hold of an admission whose answer was lost,
// whatever amount it held.
//
// KEYS[1]: the account's holds; KEYS[2]: its mirrored balance, which
// keeps their sum
// ARGV: hold id
var dropHoldScript = redis.NewScript(heldLua + `
local prefix = ARGV[1] .. "|"
for _, m in ipairs(redis.call("ZRANGE", KEYS[1], 0, -1)) do
  if string.sub(m, 1, #prefix) == prefix and redis.call("ZREM", KEYS[1], m) == 1 then
    lower_sum(KEYS[2], hold_cents(m), 1)
  end
end
return 1
`)

// renewScript extends a lease or a hold that is still held.
//
// KEYS[1]: the lease or hold sorted set; KEYS[2], for a hold: the
// account's mirrored balance, which keeps the holds' sum
// ARGV: now, lease id or hold member, TTL (seconds)
//
// Returns 1 when renewed, 0 when the lease was gone: it expired because
// renewals failed for a whole TTL, and its slot may belong to another
// holder by now.
var renewScript = redis.NewScript(nowLua + expireLua + heldLua + `
local ttl = tonumber(ARGV[3])
local score = redis.call("ZSCORE", KEYS[1], ARGV[2])
if not score then
  return 0
end
if tonumber(score) <= now then
  redis.call("ZREM", KEYS[1], ARGV[2])
  if KEYS[2] then
    lower_sum(KEYS[2], hold_cents(ARGV[2]), 1)
  end
  return 0
end
-- The new expiry in whole seconds, rounded up, as the admission writes it.
local expires = now + ttl
local part = expires % 1
if part > 0 then
  expires = expires - part + 1
end
redis.call("ZADD", KEYS[1], "XX", string.format("%d", expires), ARGV[2])
expire_at_least(KEYS[1], math.ceil(ttl * 1000) + 1000, false)
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

// ScriptNames names the limiter's Redis scripts by their SHA1, as EVALSHA
// shows them in Redis's slow log or MONITOR: "admit" (the admission),
// "settle" (a hold settled, sent with the releases), "drop hold",
// "renew", "held", "debit" and "reconcile". The bench reads Redis's time
// per script with it.
func ScriptNames() map[string]string {
	return map[string]string{
		admitScript.Hash():     "admit",
		settleScript.Hash():    "settle",
		dropHoldScript.Hash():  "drop hold",
		renewScript.Hash():     "renew",
		heldScript.Hash():      "held",
		debitScript.Hash():     "debit",
		reconcileScript.Hash(): "reconcile",
	}
}
