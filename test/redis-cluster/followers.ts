import { status as GrpcCode, type ClientReadableStream, type StatusObject } from '@grpc/grpc-js';
import { request } from 'undici';
import { ErrorCode, StreamEndReason } from '@app/contracts';
import { type OrderEvent, type ProtoSubscribeResponse, type StreamReset } from '@app/order-domain';
import type { OrderStatusClient } from '../grpc/grpc-test-client';
import { bearer } from '../support/auth';
import { openSseH1, type SseStream } from '../support/sse-stream';
import type { ClientPool, RecordingClient } from '../ws/orders-client';

/** What one client saw of one order, whatever carried it. */
export type Seen =
  | { readonly kind: 'event'; readonly seq: number; readonly publishedAtUs: number }
  | { readonly kind: 'reset'; readonly lastSeq: number }
  | { readonly kind: 'skipped'; readonly fromSeq: number; readonly toSeq: number };

export type TransportName = 'sse' | 'long-poll' | 'socket.io' | 'grpc';

/**
 * A client that follows one order to its end as a well-behaved client does: it resumes
 * from the last cursor it accounted for whenever its stream ends without completing (or a
 * poll answers 503), and records everything it received in `seen`.
 */
export interface Follower {
  readonly transport: TransportName;
  readonly orderId: string;
  readonly after: number;
  readonly seen: Seen[];
  /** How many times the client had to resume. */
  readonly resumes: number;
  /** Resolves once the order completed for this client. */
  readonly done: Promise<void>;
  close(): void;
}

/** @default 40 times a client resumes before giving up (a bound, not a policy) */
const MAX_RESUMES = 40;
/** @default 50 ms a client waits before it resumes after an error (its retry policy) */
const RESUME_DELAY_MS = 50;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The cursor after the last item: an event's seq, a reset's last seq, a range's end. */
function cursorOf(seen: readonly Seen[], after: number): number {
  const last = seen.at(-1);
  if (last === undefined) return after;
  return last.kind === 'event' ? last.seq : last.kind === 'reset' ? last.lastSeq : last.toSeq;
}

abstract class BaseFollower implements Follower {
  protected readonly items: Seen[] = [];
  resumes = 0;
  readonly done: Promise<void>;
  protected closed = false;
  abstract readonly transport: TransportName;

  constructor(
    readonly orderId: string,
    readonly after: number,
  ) {
    this.done = Promise.resolve().then(() => this.run());
  }

  private async run(): Promise<void> {
    for (; this.resumes <= MAX_RESUMES && !this.closed; this.resumes++) {
      if (this.resumes > 0) await pause(RESUME_DELAY_MS);
      if (await this.follow(cursorOf(this.seen, this.after))) return;
    }
    if (!this.closed) {
      throw new Error(`${this.transport} ${this.orderId}: gave up after ${MAX_RESUMES} resumes`);
    }
  }

  get seen(): Seen[] {
    this.refresh();
    return this.items;
  }

  /** Takes in what the current connection received so far. */
  protected refresh(): void {}

  /** One connection from `cursor`; true once the order completed. */
  protected abstract follow(cursor: number): Promise<boolean>;
  abstract close(): void;

  protected record(item: { event?: OrderEvent; reset?: StreamReset }): void {
    if (item.event) {
      const { seq, publishedAtUs } = item.event;
      this.items.push({ kind: 'event', seq: Number(seq), publishedAtUs: Number(publishedAtUs) });
    } else if (item.reset) {
      this.items.push({ kind: 'reset', lastSeq: Number(item.reset.snapshot.lastSeq) });
    }
  }
}

class SseFollower extends BaseFollower {
  readonly transport = 'sse';
  private stream?: SseStream;
  private taken = 0;
  private completed = false;

  constructor(
    private readonly baseUrl: string,
    orderId: string,
    after: number,
  ) {
    super(orderId, after);
  }

  protected async follow(cursor: number): Promise<boolean> {
    const stream = await openSseH1(`${this.baseUrl}/v1/orders/${this.orderId}/stream`, {
      'last-event-id': String(cursor),
    }).catch(() => undefined);
    if (!stream || this.closed) return false;
    if (stream.status !== 200) {
      stream.close();
      return false;
    }
    this.taken = 0;
    this.completed = false;
    this.stream = stream;
    await stream.ended;
    this.refresh();
    return this.completed;
  }

  protected refresh(): void {
    const stream = this.stream;
    if (stream === undefined) return;
    for (const m of stream.messages.slice(this.taken)) {
      // Status changes and tracking updates share the order's seqs: both are events here.
      if (m.event === 'status' || m.event === 'tracking') {
        this.record({ event: JSON.parse(m.data) as OrderEvent });
      } else if (m.event === 'reset') this.record({ reset: JSON.parse(m.data) as StreamReset });
      else if (m.event === 'skipped') {
        const s = JSON.parse(m.data) as { fromSeq: number; toSeq: number };
        this.items.push({ kind: 'skipped', fromSeq: s.fromSeq, toSeq: s.toSeq });
      } else if (m.event === 'end') {
        this.completed = (JSON.parse(m.data) as { reason: string }).reason === 'completed';
      }
    }
    this.taken = stream.messages.length;
  }

  close(): void {
    this.closed = true;
    this.stream?.close();
  }
}

interface PollBody {
  events: OrderEvent[];
  reset?: StreamReset;
  skipped?: { fromSeq: number; toSeq: number };
  next: number;
  completed: boolean;
}

class LongPollFollower extends BaseFollower {
  readonly transport = 'long-poll';
  private readonly abort = new AbortController();

  constructor(
    private readonly baseUrl: string,
    orderId: string,
    after: number,
  ) {
    super(orderId, after);
  }

  /** Polls until the order completes; an error answer ends this round (resumed by run()). */
  protected async follow(cursor: number): Promise<boolean> {
    for (let after = cursor; !this.closed;) {
      const res = await request(
        `${this.baseUrl}/v1/orders/${this.orderId}/events?after=${after}&wait=5`,
        { headers: bearer(), signal: this.abort.signal },
      ).catch(() => undefined);
      if (res === undefined) return false;
      if (res.statusCode === 204) {
        await res.body.dump();
        continue;
      }
      if (res.statusCode !== 200) {
        await res.body.dump();
        return false;
      }
      const body = (await res.body.json()) as PollBody;
      if (body.reset) this.record({ reset: body.reset });
      if (body.skipped) this.items.push({ kind: 'skipped', ...body.skipped });
      for (const event of body.events) this.record({ event });
      after = body.next;
      if (body.completed) return true;
    }
    return false;
  }

  close(): void {
    this.closed = true;
    this.abort.abort();
  }
}

class GrpcFollower extends BaseFollower {
  readonly transport = 'grpc';
  private call?: ClientReadableStream<ProtoSubscribeResponse>;

  constructor(
    private readonly client: OrderStatusClient,
    orderId: string,
    after: number,
  ) {
    super(orderId, after);
  }

  protected follow(cursor: number): Promise<boolean> {
    const call = this.client.subscribe({ orderId: this.orderId, afterSeq: cursor });
    this.call = call;
    return new Promise((resolve) => {
      call.on('data', (m: ProtoSubscribeResponse) => {
        if ('event' in m) this.record({ event: m.event as unknown as OrderEvent });
        else if ('tracking' in m) this.record({ event: m.tracking as unknown as OrderEvent });
        else if ('reset' in m) this.record({ reset: m.reset as unknown as StreamReset });
        else this.items.push({ kind: 'skipped', ...m.skipped });
      });
      call.on('error', () => undefined);
      call.on('status', (s: StatusObject) => resolve(s.code === GrpcCode.OK));
    });
  }

  close(): void {
    this.closed = true;
    this.call?.cancel();
  }
}

class SocketFollower extends BaseFollower {
  readonly transport = 'socket.io';

  constructor(
    private readonly client: RecordingClient,
    orderId: string,
    after: number,
  ) {
    super(orderId, after);
  }

  protected async follow(cursor: number): Promise<boolean> {
    const start = this.client.received.length;
    const ack = await this.client.subscribe(this.orderId, cursor).catch(() => undefined);
    if (!ack?.ok) return false;
    let taken = start;
    return new Promise((resolve) => {
      const poll = () => {
        for (const r of this.client.received.slice(taken)) {
          if ((r.type === 'status' || r.type === 'tracking') && r.event.orderId === this.orderId) {
            this.record(r);
          } else if (r.type === 'reset' && r.reset.snapshot.orderId === this.orderId) {
            this.record(r);
          } else if (r.type === 'end' && r.end.orderId === this.orderId) {
            this.client.socket
              .off('status', poll)
              .off('tracking', poll)
              .off('reset', poll)
              .off('end', poll);
            return resolve(r.end.reason === StreamEndReason.Completed);
          }
        }
        taken = this.client.received.length;
      };
      // The recording client logs first (its listeners were added first), then this runs.
      this.client.socket.on('status', poll).on('tracking', poll).on('reset', poll).on('end', poll);
      poll();
    });
  }

  close(): void {
    this.closed = true;
  }
}

/** socket.io handshakes a follower tries when the service refuses one as Unavailable. */
const CONNECT_ATTEMPTS = 5;

/**
 * A socket.io connection, tried again after a refusal with `unavailable` (the connection
 * limiter's Redis command timed out: a loaded CI machine, a cluster still settling), as
 * every client is told to; any other refusal, or the last attempt's, fails the test.
 */
async function connectRetrying(pool: ClientPool, httpUrl: string): Promise<RecordingClient> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await pool.connect(httpUrl);
    } catch (err) {
      const code = (err as { data?: { code?: unknown } }).data?.code;
      if (code !== ErrorCode.Unavailable || attempt >= CONNECT_ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}

/** One follower per transport for `orderId` on the given instance's clients. */
export async function followOnEveryTransport(
  target: { httpUrl: string; grpc: OrderStatusClient; pool: ClientPool },
  orderId: string,
  after = 0,
): Promise<Follower[]> {
  const socket = await connectRetrying(target.pool, target.httpUrl);
  return [
    new SseFollower(target.httpUrl, orderId, after),
    new LongPollFollower(target.httpUrl, orderId, after),
    new SocketFollower(socket, orderId, after),
    new GrpcFollower(target.grpc, orderId, after),
  ];
}

/**
 * What is wrong with what a client saw, judged against the order's final history in
 * Redis (`truth`, every event from seq 1): empty when the client saw every event after
 * `after` once, in order, exactly as Redis keeps it, or was told explicitly (a reset)
 * where it could not. Before a reset, events must still be contiguous and unique; after
 * the last reset (or from the start without one) they must be Redis's events, one each,
 * up to the order's last. A silent gap, a duplicate or an event Redis no longer has
 * without a reset after it is a problem.
 */
export function problemsOf(follower: Follower, truth: readonly OrderEvent[]): string[] {
  const name = `${follower.transport} ${follower.orderId}`;
  const problems: string[] = [];
  const bySeq = new Map(truth.map((e) => [e.seq, e]));
  const lastReset = follower.seen.map((s) => s.kind).lastIndexOf('reset');
  let cursor = follower.after;
  follower.seen.forEach((s, i) => {
    if (s.kind === 'reset') {
      cursor = s.lastSeq;
      return;
    }
    if (s.kind === 'skipped') {
      problems.push(`${name}: skipped ${s.fromSeq}-${s.toSeq}`);
      cursor = s.toSeq;
      return;
    }
    if (s.seq !== cursor + 1) problems.push(`${name}: seq ${s.seq} after ${cursor}`);
    cursor = s.seq;
    const stored = bySeq.get(s.seq);
    if (i > lastReset && stored?.publishedAtUs !== s.publishedAtUs) {
      problems.push(`${name}: seq ${s.seq} is not the event Redis has (no reset after it)`);
    }
  });
  const last = truth.at(-1)?.seq ?? 0;
  if (cursor !== last) problems.push(`${name}: ended at ${cursor}, Redis at ${last}`);
  return problems;
}
