import { LuaScript } from './lua-script';

/** What the publish script answers. */
export type PublishReply =
  ['ok', number, string] | ['replay', string] | ['not_found'] | ['refused', string];

/**
 * Publish, atomically: check the life cycle, assign the next seq, update the snapshot,
 * append to the capped history, set expiries and notify every instance. Running it as
 * one script is what makes seqs unique and gap-free however many instances publish to
 * the same order at once. Status changes and tracking updates both go through it: they
 * share the order's seq sequence.
 *
 * The rules themselves stay in TypeScript (`canTransition`, `acceptsTracking` in
 * contracts): the caller passes the statuses the order may be in, so there is one rule,
 * not two. The event's JSON is passed as the text around the two values only the script
 * knows, the seq and the order's current status (a status change's `previousStatus`, a
 * tracking update's `status`): Lua's cjson would print `publishedAtUs` (16 digits) with
 * 14 significant digits and lose microseconds.
 *
 * Idempotent publish: with a third key (the publish's idempotency record, under the
 * order's hash tag), a repeat within the window returns the first publish's event and
 * changes nothing. Check and record are in this one script, so two publishes with one
 * key (a client's retry racing the original, or a command re-sent after a reconnect)
 * can never both publish.
 *
 * KEYS: order hash, history list[, idempotency record].
 * ARGV: status to write ('' for a tracking update: the status stays), allowCreate (1/0),
 *       allowedFrom (",a,b,": the statuses the order may be in), updatedAtUs, jsonHead
 *       (up to the seq), jsonAfterSeq, currentPrefix (written before the current status,
 *       which is closed with a quote; only when the order exists), jsonTail, historySize,
 *       channel (the order's own), ttlMs, publish command (`PUBLISH`, or `SPUBLISH` on
 *       Redis Cluster: the channel carries the order's hash tag, so the message stays on
 *       the shard that owns the order), idempotency window in ms (read only with the
 *       third key), tracking JSON for the snapshot ('' : unchanged), then attribute
 *       name/value pairs, which are written when the order is created only (an owner
 *       never changes).
 * Returns { 'ok', seq, currentStatus or '' } | { 'replay', eventJson } | { 'not_found' } |
 *   { 'refused', currentStatus }.
 */
export const PUBLISH_SCRIPT = new LuaScript<PublishReply>(
  'publishOrderEvent',
  `
if KEYS[3] then
  local original = redis.call('GET', KEYS[3])
  if original then return { 'replay', original } end
end
local current = redis.call('HGET', KEYS[1], 'status')
if not current then
  if ARGV[2] ~= '1' then return { 'not_found' } end
elseif not string.find(ARGV[3], ',' .. current .. ',', 1, true) then
  return { 'refused', current }
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
local json = ARGV[5] .. seq .. ARGV[6]
if current then json = json .. ARGV[7] .. current .. '"' end
json = json .. ARGV[8]
if KEYS[3] then redis.call('SET', KEYS[3], json, 'PX', ARGV[13]) end
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'status', ARGV[1]) end
redis.call('HSET', KEYS[1], 'updatedAtUs', ARGV[4])
if ARGV[14] ~= '' then redis.call('HSET', KEYS[1], 'tracking', ARGV[14]) end
if not current then
  for i = 15, #ARGV, 2 do
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
redis.call('RPUSH', KEYS[2], json)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[9]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[11])
redis.call('PEXPIRE', KEYS[2], ARGV[11])
redis.call(ARGV[12], ARGV[10], json)
return { 'ok', seq, current or '' }
`,
);

/**
 * Events after a seq, read together with the order's last seq so the two agree.
 * KEYS: order hash, history list. ARGV: afterSeq.
 * Returns { lastSeq, firstSeq, { json... } }; firstSeq > afterSeq + 1 means the history
 * no longer reaches back that far.
 */
export const READ_HISTORY_SCRIPT = new LuaScript<[number, number, string[]]>(
  'readOrderHistory',
  `
local last = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
local after = tonumber(ARGV[1])
local len = redis.call('LLEN', KEYS[2])
local first = last - len + 1
if after >= last or after + 1 < first then return { last, first, {} } end
return { last, first, redis.call('LRANGE', KEYS[2], after + 1 - first, -1) }
`,
);
