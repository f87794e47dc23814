import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { Subject, type Observable } from 'rxjs';
import {
  ErrorCode,
  GatewayError,
  nowUs,
  type AppendOptions,
  type AppendRule,
  type DomainAppend,
  type DomainEvent,
  type DomainSnapshot,
  type EventDraft,
  type StreamDomain,
  type TraceContext,
} from '@app/contracts';
import {
  draftFields,
  EventFeed,
  eventOf,
  replayOf,
  StoreResync,
  StreamStore,
  TraceContexts,
  type StreamOwnership,
  type StoreHealth,
} from '@app/store';
import { unavailableOnFailure } from './redis-client';
import { RedisPing } from './redis-ping';
import type { LuaScript } from './lua-script';
import { redisKeys, type RedisKeys } from './redis-keys';
import { PUBLISH_SCRIPT, READ_HISTORY_SCRIPT, type PublishReply } from './redis-scripts';
import {
  resolveRedisStoreOptions,
  type RedisStoreOptions,
  type ResolvedRedisStoreOptions,
} from './redis-store-options';
import { parseTraceMessage, traceMessagePrefix } from './trace-message';

type Client = Redis | Cluster;

/** Hash fields the store itself writes; any other is the domain's. */
const OWN_FIELDS = new Set(['seq', 'updatedAtUs']);

/** One append, as the script's arguments (see PUBLISH_SCRIPT). */
interface ScriptPublish {
  readonly orderId: string;
  readonly rule: AppendRule;
  readonly draft: EventDraft;
  readonly publishedAtUs: number;
  readonly jsonAfterSeq: string;
  readonly jsonTail: string;
  readonly idempotencyKey: string | undefined;
  readonly traceContext: TraceContext | undefined;
  readonly attributes: Readonly<Record<string, string>>;
}
/** Messages kept while the feed resyncs; beyond that the catch-up reads them from Redis. */
const MAX_HELD_MESSAGES = 10_000;
/** Channels per SUBSCRIBE command when a resync subscribes every watched order again. */
const SUBSCRIBE_BATCH = 1_000;
/** Pause before retrying a resync that failed while both connections looked ready. */
const RESYNC_RETRY_MS = 200;

/** The feed from Redis pub/sub into `events$`. */
type FeedState = 'down' | 'syncing' | 'live';

/**
 * The shared store for several instances. Publishing is one Lua script (seq, snapshot,
 * capped history, expiry, PUBLISH to the order's own channel), so seqs stay unique and
 * gap-free across instances. Every instance listens on a dedicated subscriber connection
 * and feeds its local bus, subscribed only to the orders the bus serves (`watch` /
 * `unwatch`): an instance receives the events of its own subscribers' orders, not the
 * cluster's whole event rate. On Redis Cluster it uses sharded pub/sub (SPUBLISH /
 * SSUBSCRIBE, Redis 7): a channel carries its order's hash tag, so an event stays on the
 * shard that owns the order instead of crossing the cluster bus to every node.
 *
 * Pub/sub is at-most-once, so whenever the subscriber connection comes back the store
 * resubscribes, compares the data set's epoch with the one it knew, and tells the bus
 * (`resync$`: catch up from history, or reset because Redis lost its data) before it
 * lets any new message through. Commands never wait for a connection: with no offline
 * queue and a command timeout, a publish during an outage fails at once with
 * Unavailable (503 / UNAVAILABLE) instead of piling up.
 *
 * The owner given to the append that creates a stream (`ownerId`) is stored as a field of
 * its hash (later appends cannot change it); the domain reads it back into the snapshot
 * (`DomainAppend.snapshotOf`), with the fields its rules set.
 */
export class RedisStreamStore<
  E extends DomainEvent = DomainEvent,
  S extends DomainSnapshot = DomainSnapshot,
> extends StreamStore<E, S> {
  readonly domain: StreamDomain<E, S>;
  /** How the domain's events are appended and its snapshots read back. */
  private readonly appending: DomainAppend<E, S>;
  /** One event per message from Redis: a feed with no allocation per value (EventFeed). */
  private readonly published = new EventFeed<E>();
  /** The trace context each message carried beside its event (trace-message.ts). */
  private readonly traces = new TraceContexts();
  private readonly resyncs = new Subject<StoreResync>();
  readonly events$: Observable<E> = this.published.observable;
  readonly resync$: Observable<StoreResync> = this.resyncs.asObservable();

  readonly options: ResolvedRedisStoreOptions;
  private readonly keys: RedisKeys;
  private readonly cmd: Client;
  private readonly sub: Client;
  /** Whether Redis answers commands, which a ready connection to a frozen Redis does not. */
  private readonly ping: RedisPing;
  /** Redis Cluster: sharded pub/sub. */
  private readonly sharded: boolean;
  /** Orders the bus serves: subscribed now, and again after every reconnection. */
  private readonly watched = new Set<string>();
  private readonly logger = new Logger('RedisStreamStore');
  private epoch?: string;
  private feed: FeedState = 'down';
  private syncing = false;
  private held: string[] = [];
  private retryTimer?: NodeJS.Timeout;
  /** Redis Cluster: the periodic slot-map read of the sharded subscribers. */
  private slotsTimer?: NodeJS.Timeout;
  private closed = false;
  private reportedDown = false;
  private readonly upWaiters = new Set<() => void>();

  constructor(opts: RedisStoreOptions<E, S>) {
    super();
    this.domain = opts.domain;
    if (this.domain.append === undefined) {
      throw new TypeError(`the ${this.domain.name} domain cannot be appended to (no append)`);
    }
    this.appending = this.domain.append;
    this.options = resolveRedisStoreOptions(opts);
    this.keys = redisKeys(this.options.keyPrefix);
    const o = this.options;
    const redisOptions: RedisOptions = {
      // Fail fast while disconnected: no offline queue, one retry, a command timeout.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: o.commandTimeoutMs,
      connectTimeout: o.connectTimeoutMs,
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 10), o.reconnectMaxDelayMs),
      // The store subscribes itself on every 'ready', then resyncs: see sync().
      autoResubscribe: false,
    };
    // A command in flight when its connection drops is never re-sent on reconnect (ioredis
    // does by default): its caller may already have had a 503 from the command timeout,
    // so a re-sent publish would be an event nobody was told of, and a second one when the
    // caller retries. Reads and the resync do not need it either: they fail and are retried
    // by their callers. (The subscriber connection resubscribes itself on every 'ready'.)
    const commandOptions: RedisOptions = { ...redisOptions, autoResendUnfulfilledCommands: false };
    if (o.clusterNodes.length > 0) {
      const cluster = new Cluster([...o.clusterNodes], {
        redisOptions: commandOptions,
        enableOfflineQueue: false,
        clusterRetryStrategy: (times) =>
          Math.min(50 * 2 ** Math.min(times, 10), o.reconnectMaxDelayMs),
      });
      this.cmd = cluster;
      // One subscriber connection per master, each holding the SSUBSCRIBEs of its slots.
      const sub = cluster.duplicate(undefined, { shardedSubscribers: true });
      this.sub = sub;
      this.sharded = true;
      // What brings the sharded subscribers back onto a moved slot when the one re-read
      // the move triggers saw the old map (DEFAULT_REDIS_CLUSTER_SLOTS_REFRESH_MS). Not
      // ioredis's `slotsRefreshInterval`: a read in flight at disconnect() re-arms that
      // timer for good, which keeps a closed store's process alive. The command client
      // needs none: MOVED re-reads its map.
      this.slotsTimer = setInterval(() => sub.refreshSlotsCache(), o.clusterSlotsRefreshMs);
      this.slotsTimer.unref();
    } else {
      this.sharded = false;
      this.cmd = new Redis(o.url as string, commandOptions);
      this.sub = new Redis(o.url as string, redisOptions);
    }
    this.ping = new RedisPing(this.cmd, o.pingIntervalMs);
    for (const client of [this.cmd, this.sub]) {
      client.on('ready', () => this.trySync());
      client.on('close', () => this.onClose(client));
      // ioredis reports every failed attempt; one line per outage is enough (onClose).
      client.on('error', (err: Error) => this.logger.debug?.(`redis: ${err.message}`));
    }
    this.sub.on('message', (_channel: string, message: string) => this.onMessage(message));
    this.sub.on('smessage', (_channel: string, message: string) => this.onMessage(message));
    // On Redis Cluster the client stays 'ready' through a master failover (only the dead
    // node's sharded subscriber is replaced), but the new master may lack writes the old
    // one acknowledged and published: every topology change is a resync, so the bus
    // compares what it delivered with what Redis now has.
    // '-node' comes as the old master goes, 'subscribersReady' once the sharded
    // subscribers are back on the new topology: the second resync sees the promoted data.
    if (this.sharded) {
      this.sub.on('-node', () => this.topologyChanged());
      this.sub.on('subscribersReady', () => this.topologyChanged());
    }
  }

  /** Up while the command connection is ready and answers, and the feed is live. */
  health(): StoreHealth {
    return this.cmd.status === 'ready' && this.feed === 'live' && this.ping.answering
      ? 'up'
      : 'down';
  }

  /** Resolves true once the store is up, false after `timeoutMs` (start-up waits on it). */
  whenUp(timeoutMs: number): Promise<boolean> {
    if (this.health() === 'up') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (up: boolean) => {
        clearTimeout(timer);
        this.upWaiters.delete(onUp);
        resolve(up);
      };
      const onUp = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.upWaiters.add(onUp);
    });
  }

  async append(draft: EventDraft<E>, rule: AppendRule, options: AppendOptions = {}): Promise<E> {
    const { orderId } = draft;
    const { ownerId, idempotencyKey, traceContext } = options;
    const publishedAtUs = nowUs();
    const { phaseField } = this.appending;
    // The same fields in the same order as the in-memory store writes (see EventDraft);
    // the seq and the prior phase come from the script: only it knows them.
    const rest = JSON.stringify(draftFields(draft, phaseField)).slice(1, -1);
    const reply = await this.runPublish({
      orderId,
      rule,
      draft,
      publishedAtUs,
      jsonAfterSeq:
        rule.phase === undefined
          ? ''
          : `,${JSON.stringify(phaseField)}:${JSON.stringify(rule.phase)}`,
      jsonTail: `,"publishedAtUs":${publishedAtUs}${rest === '' ? '' : `,${rest}`}}`,
      idempotencyKey,
      traceContext,
      attributes: ownerId !== undefined ? { ownerId } : {},
    });
    switch (reply[0]) {
      case 'ok':
        return eventOf(
          draft,
          Number(reply[1]),
          rule,
          phaseField,
          reply[2] || undefined,
          publishedAtUs,
        );
      case 'replay': {
        const original = JSON.parse(reply[1]) as E;
        // The owner lives on the stream, not in the event: read only for a repeated create.
        const owner =
          original.seq === 1 && ownerId !== undefined
            ? (await this.getOwnership(orderId))?.ownerId
            : undefined;
        return replayOf(original, draft, rule.priorPhaseField, ownerId, owner);
      }
      case 'not_found':
        throw rule.refusal(orderId, undefined);
      case 'refused':
        throw rule.refusal(orderId, reply[1] === '' ? undefined : reply[1]);
    }
  }

  private async runPublish(p: ScriptPublish): Promise<PublishReply> {
    const { orderId, rule, idempotencyKey } = p;
    return this.run(
      PUBLISH_SCRIPT,
      [
        this.keys.order(orderId),
        this.keys.history(orderId),
        ...(idempotencyKey === undefined ? [] : [this.keys.idempotency(orderId, idempotencyKey)]),
      ],
      [
        rule.phase ?? '',
        rule.creates ? '1' : '0',
        rule.follows === undefined ? '*' : `,${rule.follows.join(',')},`,
        String(p.publishedAtUs),
        `{"orderId":${JSON.stringify(orderId)},"seq":`,
        p.jsonAfterSeq,
        rule.priorPhaseField === undefined ? '' : `,${JSON.stringify(rule.priorPhaseField)}:"`,
        p.jsonTail,
        String(this.options.historySize),
        this.keys.channel(orderId),
        String(rule.ends ? this.options.terminalRetentionMs : this.options.idleTtlMs),
        this.sharded ? 'SPUBLISH' : 'PUBLISH',
        String(this.options.idempotencyWindowMs),
        ...keptField(rule, p.draft),
        this.appending.phaseField,
        traceMessagePrefix(p.traceContext),
        ...Object.entries(p.attributes).flat(),
      ],
    );
  }

  async getSnapshot(orderId: string): Promise<S | undefined> {
    const stored = await this.call(() => this.cmd.hgetall(this.keys.order(orderId)));
    if (stored.seq === undefined) return undefined;
    const phaseField = this.appending.phaseField;
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(stored)) {
      if (!OWN_FIELDS.has(k) && k !== phaseField) fields[k] = v;
    }
    return this.appending.snapshotOf({
      orderId,
      lastSeq: Number(stored.seq),
      updatedAtUs: Number(stored.updatedAtUs),
      phase: stored[phaseField],
      fields,
    });
  }

  /**
   * The owner as the append that created the stream stored it, for the read check on
   * every subscribe and poll: two fields, not the whole snapshot, and the same for every
   * domain (a domain's snapshot need not carry the owner).
   */
  override async getOwnership(orderId: string): Promise<StreamOwnership | undefined> {
    const [seq, ownerId] = await this.call(() =>
      this.cmd.hmget(this.keys.order(orderId), 'seq', 'ownerId'),
    );
    if (seq === null) return undefined;
    return ownerId === null ? {} : { ownerId };
  }

  async readHistory(orderId: string, afterSeq: number): Promise<E[] | undefined> {
    const [lastSeq, firstSeq, list] = await this.run(
      READ_HISTORY_SCRIPT,
      [this.keys.order(orderId), this.keys.history(orderId)],
      [String(afterSeq)],
    );
    if (afterSeq >= lastSeq) return [];
    if (afterSeq + 1 < firstSeq) return undefined;
    return list.map((json) => JSON.parse(json) as E);
  }

  /**
   * Subscribes to the order's channel; resolves once Redis confirmed it, so every event
   * published from then on reaches this instance (the bus reads the snapshot and history
   * only after that). While the feed is down it fails with Unavailable; the order stays
   * watched until `unwatch`, and every resync subscribes all watched orders again.
   */
  async watch(orderId: string): Promise<void> {
    this.watched.add(orderId);
    if (this.feed !== 'live') {
      throw new GatewayError(ErrorCode.Unavailable, 'order store unavailable: feed is down');
    }
    await this.call(() => this.subscribe([orderId]));
  }

  unwatch(orderId: string): void {
    if (!this.watched.delete(orderId) || this.feed !== 'live') return;
    const channel = this.keys.channel(orderId);
    // Best effort: a message that crosses it finds no channel in the bus and is dropped.
    const done = this.sharded ? this.sub.sunsubscribe(channel) : this.sub.unsubscribe(channel);
    done.catch(() => {});
  }

  /** Subscribes the given orders' channels (SSUBSCRIBE one by one: each has its own slot). */
  private async subscribe(orderIds: readonly string[]): Promise<void> {
    const channels = orderIds.map((id) => this.keys.channel(id));
    if (this.sharded) {
      await Promise.all(channels.map((channel) => this.sub.ssubscribe(channel)));
      return;
    }
    for (let i = 0; i < channels.length; i += SUBSCRIBE_BATCH) {
      await this.sub.subscribe(...channels.slice(i, i + SUBSCRIBE_BATCH));
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.slotsTimer);
    this.ping.close();
    this.feed = 'down';
    this.cmd.disconnect();
    this.sub.disconnect();
    this.published.complete();
    this.resyncs.complete();
  }

  private run<Reply>(script: LuaScript<Reply>, keys: string[], args: string[]): Promise<Reply> {
    return this.call(() => script.run(this.cmd, keys, args));
  }

  /** Every Redis failure becomes Unavailable: clients retry, the service stays up. */
  private call<T>(fn: () => Promise<T>): Promise<T> {
    return unavailableOnFailure('order store', fn);
  }

  private onMessage(message: string): void {
    if (this.feed === 'live') this.emit(message);
    else if (this.feed === 'syncing' && this.held.length < MAX_HELD_MESSAGES)
      this.held.push(message);
    // Dropped otherwise: the resync that ends the outage reads what is missing from Redis.
  }

  private emit(message: string): void {
    const { json, context } = parseTraceMessage(message);
    let event: E;
    try {
      event = JSON.parse(json) as E;
    } catch {
      this.logger.warn('ignoring a malformed message on an order channel');
      return;
    }
    if (context !== undefined) this.traces.set(event, context);
    this.published.next(event);
  }

  override traceContextOf(event: E): TraceContext | undefined {
    return this.traces.get(event);
  }

  private onClose(client: Client): void {
    if (this.closed) return;
    if (client === this.sub) {
      this.feed = 'down';
      this.held = [];
    }
    if (!this.reportedDown) {
      this.reportedDown = true;
      this.logger.warn('Redis connection lost: publishes answer 503 until it is back');
    }
  }

  private topologyChanged(): void {
    if (this.closed || this.feed !== 'live') return;
    this.logger.warn('Redis Cluster topology changed: resyncing');
    this.feed = 'syncing';
    this.trySync();
  }

  /** Starts a resync once both connections are ready and the feed is not live. */
  private trySync(): void {
    if (this.closed || this.syncing || this.feed === 'live') return;
    if (this.sub.status !== 'ready' || this.cmd.status !== 'ready') {
      // Hold messages already: they must not overtake the resync when it comes.
      if (this.sub.status === 'ready') this.feed = 'syncing';
      return;
    }
    this.feed = 'syncing';
    this.syncing = true;
    this.sync().then(
      () => {
        this.syncing = false;
      },
      (err: unknown) => {
        this.syncing = false;
        this.logger.debug?.(`resync failed: ${err instanceof Error ? err.message : String(err)}`);
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => this.trySync(), RESYNC_RETRY_MS);
        this.retryTimer.unref();
      },
    );
  }

  /**
   * Subscribes every watched order, then reads the epoch, then tells the bus, then lets
   * held messages through, in that order: anything published after the subscriptions
   * are active arrives as a message, anything before it is in Redis when the bus reads it.
   */
  private async sync(): Promise<void> {
    await this.subscribe([...this.watched]);
    // A fresh id every time: an instance that re-created the epoch after a data loss must
    // not write back the value others knew, or they would miss the loss.
    await this.cmd.set(this.keys.epoch, randomUUID(), 'NX');
    const current = await this.cmd.get(this.keys.epoch);
    if (this.closed || this.feed !== 'syncing' || current === null) {
      throw new Error('connection changed during resync');
    }
    const lost = this.epoch !== undefined && current !== this.epoch;
    this.epoch = current;
    if (lost) this.logger.warn('Redis lost its data (new epoch): clients get an explicit reset');
    else if (this.reportedDown) this.logger.log('Redis connection restored: catching up');
    this.reportedDown = false;
    this.resyncs.next(lost ? StoreResync.DataLost : StoreResync.CatchUp);
    this.feed = 'live';
    for (const message of this.held.splice(0)) this.emit(message);
    for (const up of [...this.upWaiters]) up();
  }
}

/** The script's field name and value for the field `rule` keeps ('' and '': none). */
function keptField(rule: AppendRule, draft: object): [string, string] {
  if (rule.keeps === undefined) return ['', ''];
  const fields = draft as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const name of rule.keeps.of) kept[name] = fields[name];
  return [rule.keeps.field, JSON.stringify(kept)];
}
