import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import type { OrderEvent, OrderStatus } from '@app/order-domain';
import { restPublisher, type Publisher, type PublishAnswer } from '../idempotency/publishers';
import { bearer } from '../support/auth';
import type { RedisCluster } from '../support/redis-cluster';
import type { TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { problemsOf, type Follower } from './followers';

/** @default 15_000 ms a publisher keeps retrying one event before the test fails */
const PUBLISH_GIVE_UP_MS = 15_000;
/** @default 25 ms between a publisher's attempts (its retry policy, as the README advises) */
const PUBLISH_RETRY_MS = 25;
/** @default 1_000 ms: the wait the service advises when the publish rate limit refuses */
const RATE_LIMITED_RETRY_MS = 1_000;

/**
 * Publishes through an instance's REST API as the README tells publishers to: with an
 * Idempotency-Key, retrying the same key on 503 until the service answers, so a retry
 * of a publish that did go through gets the same event instead of a second one.
 */
export class RetryingPublisher {
  private readonly rest: Publisher;
  /** Attempts answered with an error (503 while the cluster fails over). */
  retried = 0;
  /**
   * Attempts refused by the per-principal publish rate limit (100/s by default): a loop
   * of publishes can reach it when Redis answers fast, and is then told to wait.
   */
  rateLimited = 0;

  constructor(private readonly app: TestApp) {
    this.rest = restPublisher(app.httpUrl);
  }

  /** A status change, or (`'tracking'`) a tracking update of a shipped order. */
  async publish(orderId: string, status: OrderStatus | 'tracking'): Promise<OrderEvent> {
    const key = randomUUID();
    let last = '';
    for (const deadline = Date.now() + PUBLISH_GIVE_UP_MS; Date.now() < deadline;) {
      const answer =
        status === 'tracking'
          ? await this.track(orderId, key)
          : await this.rest.publish({ orderId, status, key });
      if (answer.code === 'ok' && answer.event) return answer.event;
      if (answer.code === 'resource_exhausted') {
        this.rateLimited++;
        await new Promise((r) => setTimeout(r, RATE_LIMITED_RETRY_MS));
        continue;
      }
      if (answer.code !== 'unavailable') {
        throw new Error(`publish ${orderId} ${status}: ${answer.code} ${answer.message ?? ''}`);
      }
      last = answer.message ?? answer.code;
      this.retried++;
      await new Promise((r) => setTimeout(r, PUBLISH_RETRY_MS));
    }
    throw new Error(`publish ${orderId} ${status}: still unavailable (${last})`);
  }

  /** `POST /v1/orders/:orderId/tracking` with `Idempotency-Key`: one fixed update per key. */
  private async track(orderId: string, key: string): Promise<PublishAnswer> {
    const res = await request(`${this.app.httpUrl}/v1/orders/${orderId}/tracking`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, ...bearer() },
      body: JSON.stringify({ location: { lat: 52.5, lon: 13.4 }, etaMs: 1_900_000_000_000 }),
    });
    const body = (await res.body.json()) as
      OrderEvent | { error: { code: string; message: string } };
    const replayed = res.headers['idempotent-replayed'] === 'true';
    if ('error' in body) {
      return { ...body.error, replayed, wireStatus: res.statusCode };
    }
    return { code: 'ok', event: body, replayed, wireStatus: res.statusCode };
  }
}

/**
 * `perMaster` order ids for every master of the cluster. The store hash-tags every key
 * and channel of an order with its id (README "Scale-out"), so `{id}` names its slot.
 */
export async function ordersOnEveryMaster(
  cluster: RedisCluster,
  prefix: string,
  perMaster = 1,
): Promise<{ orderId: string; slot: number; master: number }[]> {
  const shards = await cluster.shards();
  const picked: { orderId: string; slot: number; master: number }[] = [];
  const count = new Map<number, number>();
  for (let i = 0; picked.length < shards.length * perMaster; i++) {
    if (i > 1_000) throw new Error('no order ids spread over every master');
    const orderId = `${prefix}-${i}`;
    const slot = await cluster.slotOf(`{${orderId}}`);
    const master = shards.find((s) => s.slots.some(([a, b]) => slot >= a && slot <= b))?.master;
    if (master === undefined || (count.get(master) ?? 0) >= perMaster) continue;
    count.set(master, (count.get(master) ?? 0) + 1);
    picked.push({ orderId, slot, master });
  }
  return picked;
}

/** How many error replies of this kind (`MOVED`, `ASK`) a node has sent (INFO errorstats). */
export async function errorReplies(
  cluster: RedisCluster,
  port: number,
  kind: string,
): Promise<number> {
  const info = String(await cluster.command(port, 'INFO', 'errorstats'));
  return Number(new RegExp(`errorstat_${kind}:count=(\\d+)`).exec(info)?.[1] ?? 0);
}

/** Waits until every follower has completed its order (bounded). */
export async function allDone(followers: readonly Follower[], timeoutMs = 15_000): Promise<void> {
  let finished = 0;
  let failed: Error | undefined;
  for (const f of followers) {
    f.done.then(
      () => finished++,
      (err: unknown) => (failed ??= err instanceof Error ? err : new Error(String(err))),
    );
  }
  await waitFor(
    () => finished === followers.length || failed !== undefined,
    'every follower completes',
    timeoutMs,
  ).catch((err: Error) => {
    const where = followers.map(
      (f) => `${f.transport} ${f.orderId} at ${JSON.stringify(f.seen.at(-1) ?? null)}`,
    );
    throw new Error(`${err.message}: ${where.join('; ')}`);
  });
  if (failed !== undefined) throw failed;
}

/** Every problem of every follower, judged against the order's history in Redis. */
export async function problemsAgainstRedis(
  app: TestApp,
  followers: readonly Follower[],
): Promise<string[]> {
  const truth = new Map<string, OrderEvent[]>();
  for (const f of followers) {
    if (!truth.has(f.orderId)) {
      truth.set(f.orderId, (await app.store.readHistory(f.orderId, 0)) ?? []);
    }
  }
  return followers.flatMap((f) => problemsOf(f, truth.get(f.orderId) ?? []));
}
