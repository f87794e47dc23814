import { createHash } from 'node:crypto';

/** A Lua script run with EVALSHA, falling back to EVAL when the server does not have it yet. */
export interface LuaScript {
  readonly lua: string;
  readonly sha1: string;
  readonly numberOfKeys: number;
}

function script(lua: string, numberOfKeys: number): LuaScript {
  return { lua, numberOfKeys, sha1: createHash('sha1').update(lua).digest('hex') };
}

/**
 * Publish, atomically: check the life cycle, assign the next seq, update the snapshot,
 * append to the capped history, set expiries and notify every instance. Running it as
 * one script is what makes seqs unique and gap-free however many instances publish to
 * the same order at once.
 *
 * The life-cycle rule itself stays in TypeScript (`canTransition` in contracts): the
 * caller passes the statuses the new one may follow, so there is one rule, not two.
 * The event's JSON is passed as the text around its seq: Lua's cjson would print
 * `publishedAtUs` (16 digits) with 14 significant digits and lose microseconds.
 *
 * KEYS: order hash, history list.
 * ARGV: status, allowCreate (1/0), allowedFrom (",a,b,"), updatedAtUs, jsonHead,
 *       jsonTail, historySize, channel, ttlMs, then attribute name/value pairs, which are
 *       written when the order is created only (an owner never changes).
 * Returns { 'ok', seq } | { 'not_found' } | { 'transition', currentStatus }.
 */
export const PUBLISH_SCRIPT = script(
  `
local current = redis.call('HGET', KEYS[1], 'status')
if not current then
  if ARGV[2] ~= '1' then return { 'not_found' } end
elseif not string.find(ARGV[3], ',' .. current .. ',', 1, true) then
  return { 'transition', current }
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
local json = ARGV[5] .. seq .. ARGV[6]
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'updatedAtUs', ARGV[4])
if not current then
  for i = 10, #ARGV, 2 do
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
redis.call('RPUSH', KEYS[2], json)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[7]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
redis.call('PUBLISH', ARGV[8], json)
return { 'ok', seq }
`,
  2,
);

/**
 * Events after a seq, read together with the order's last seq so the two agree.
 * KEYS: order hash, history list. ARGV: afterSeq.
 * Returns { lastSeq, firstSeq, { json... } }; firstSeq > afterSeq + 1 means the history
 * no longer reaches back that far.
 */
export const READ_HISTORY_SCRIPT = script(
  `
local last = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
local after = tonumber(ARGV[1])
local len = redis.call('LLEN', KEYS[2])
local first = last - len + 1
if after >= last or after + 1 < first then return { last, first, {} } end
return { last, first, redis.call('LRANGE', KEYS[2], after + 1 - first, -1) }
`,
  2,
);
