import { LuaScript } from './lua-script';

/** What the publish script answers. */
export type PublishReply =
  ['ok', number, string] | ['replay', string] | ['not_found'] | ['refused', string];

/**
 * Append, atomically: check the domain's rule, assign the next seq, update the stream's
 * fields, append to the capped history, set expiries and notify every instance. Running
 * it as one script is what makes seqs unique and gap-free however many instances publish
 * to the same stream at once. Every event kind goes through it: they share the stream's
 * seq sequence.
 *
 * The script knows no domain: the rule (`AppendRule`: whether the event may create the
 * stream, the phases it may follow, the phase it sets, the field it sets) comes as
 * arguments, so the domain's rules stay in TypeScript, once. The event's JSON is passed as
 * the text around the two values only the script knows, the seq and the stream's phase
 * before it (e.g. an order's `previousStatus`): Lua's cjson would print `publishedAtUs`
 * (16 digits) with 14 significant digits and lose microseconds.
 *
 * Idempotent append: with a third key (the append's idempotency record, under the
 * stream's hash tag), a repeat within the window returns the first append's event and
 * changes nothing. Check and record are in this one script, so two appends with one key
 * (a client's retry racing the original, or a command re-sent after a reconnect) can
 * never both publish.
 *
 * KEYS: stream hash, history list[, idempotency record].
 * ARGV: the phase to write ('' for none: the phase stays), mayCreate (1/0), follows
 *       (",a,b,": the phases the stream may be in; '*': any), updatedAtUs, jsonHead (up to
 *       the seq), jsonAfterSeq, priorPrefix (written before the prior phase, which is
 *       closed with a quote; '' for none; only when the stream has a phase), jsonTail,
 *       historySize, channel (the stream's own), ttlMs, publish command (`PUBLISH`, or
 *       `SPUBLISH` on Redis Cluster: the channel carries the stream's hash tag, so the
 *       message stays on the shard that owns it), idempotency window in ms (read only with
 *       the third key), the name and value of a field this event sets ('' and '': none),
 *       the hash field that holds the phase, the append's trace context as the message's
 *       prefix ('': none; trace-message.ts: the message carries it, the history and the
 *       idempotency record do not), then attribute name/value pairs, which are written
 *       when the stream is created only (an owner never changes).
 * Returns { 'ok', seq, prior phase or '' } | { 'replay', eventJson } | { 'not_found' } | { 'refused', phase }.
 */
export const PUBLISH_SCRIPT = new LuaScript<PublishReply>(
  'appendStreamEvent',
  `
if KEYS[3] then
  local original = redis.call('GET', KEYS[3])
  if original then return { 'replay', original } end
end
local exists = redis.call('HEXISTS', KEYS[1], 'seq') == 1
local current = redis.call('HGET', KEYS[1], ARGV[16])
if not exists then
  if ARGV[2] ~= '1' then return { 'not_found' } end
elseif ARGV[3] ~= '*' and not (current and string.find(ARGV[3], ',' .. current .. ',', 1, true)) then
  return { 'refused', current or '' }
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
local json = ARGV[5] .. seq .. ARGV[6]
if exists and current and ARGV[7] ~= '' then json = json .. ARGV[7] .. current .. '"' end
json = json .. ARGV[8]
if KEYS[3] then redis.call('SET', KEYS[3], json, 'PX', ARGV[13]) end
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], ARGV[16], ARGV[1]) end
redis.call('HSET', KEYS[1], 'updatedAtUs', ARGV[4])
if ARGV[14] ~= '' then redis.call('HSET', KEYS[1], ARGV[14], ARGV[15]) end
if not exists then
  for i = 18, #ARGV, 2 do
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
redis.call('RPUSH', KEYS[2], json)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[9]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[11])
redis.call('PEXPIRE', KEYS[2], ARGV[11])
redis.call(ARGV[12], ARGV[10], ARGV[17] .. json)
return { 'ok', seq, (exists and current) or '' }
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
