import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { PUBLISH_SCRIPT } from '../../libs/redis-store/src/redis-scripts';
import { OrderStatus, type OrderStatusChanged } from '@app/order-domain';
import { grpcPublisher, restPublisher, type Publisher } from '../idempotency/publishers';
import { CommandTrap } from '../idempotency/command-trap';
import { eventsOf } from '../idempotency/support';
import { RedisServer } from '../support/redis-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const { Paid } = OrderStatus;
const KEY = 'retry-4f1c2b9e';
/**
 * The caller's 503 comes while the publish is parked, whatever this is (the trap holds it
 * until the test releases or cuts it); the same timeout bounds the retries that must
 * succeed, so it is not short: at 300 ms a stall of this process (GC, a busy CI core) made
 * such a call time out before its answer was read (test/shared-auth/auth-state-resend).
 */
const COMMAND_TIMEOUT_MS = 2_000;
/**
 * What the trap waits for: the publish script's SHA. A connection sends a script's text
 * the first time it runs it and the SHA after that; each test creates its order first,
 * so the keyed publish that follows goes as EVALSHA.
 */
const PUBLISH_SHA1 = createHash('sha1').update(PUBLISH_SCRIPT.lua).digest('hex');

/**
 * A publish in flight when Redis stops answering: the caller gets 503 / UNAVAILABLE from
 * the command timeout, then retries with the same key, and exactly one event exists.
 * The service reaches Redis through a CommandTrap that parks the publish's EVALSHA (and
 * nothing else), so "in flight" is a state the test sets up, not a race it hopes to win:
 * the test then either drops that connection (Redis never saw the command; ioredis would
 * re-send it on reconnect unless told not to) or lets the command through late (Redis
 * runs it after its caller was told it failed).
 */
describe.each(['rest', 'grpc'] as const)(
  'a publish in flight when Redis stalls, over %s',
  (api) => {
    let redis: RedisServer;
    let trap: CommandTrap;
    let app: TestApp;
    let admin: Redis;
    let publisher: Publisher;

    beforeEach(async () => {
      redis = await RedisServer.launch();
      trap = await CommandTrap.listen(redis.port, PUBLISH_SHA1);
      app = await startTestApp({
        REDIS_URL: `redis://127.0.0.1:${trap.port}`,
        REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
        REDIS_RECONNECT_MAX_DELAY_MS: '50',
      });
      admin = new Redis(redis.url, { lazyConnect: true });
      await admin.connect();
      publisher = api === 'rest' ? restPublisher(app.httpUrl) : grpcPublisher(app.grpcAddress);
    });
    afterEach(async () => {
      publisher.close();
      admin.disconnect();
      await app.close();
      await trap.close();
      await redis.shutdown();
    });

    /** The order's events as Redis holds them: the ground truth, whatever any instance saw. */
    const historyInRedis = async (orderId: string): Promise<OrderStatusChanged[]> =>
      (await admin.lrange(`os:{${orderId}}:history`, 0, -1)).map(
        (json) => JSON.parse(json) as OrderStatusChanged,
      );

    /** Publishes with the key while its command is parked: the caller gets a fast 503. */
    const publishIntoStall = async (orderId: string) => {
      trap.arm();
      const started = Date.now();
      const first = await publisher.publish({ orderId, status: Paid, key: KEY });
      expect(first.code).toBe('unavailable');
      expect(first.wireStatus).toBe(api === 'rest' ? 503 : 14);
      expect(Date.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS + 1_000);
      // The trap (in this process) may read the command after the timeout fired: a busy
      // CI host that deschedules the process runs due timers before pending socket reads.
      await waitFor(() => trap.holding, 'the publish parked in the trap', 2_000);
    };

    it('the connection drops while the publish waits: the retry with its key makes the one event', async () => {
      const orderId = `drop-${api}`;
      await app.createOrder(orderId);
      await publishIntoStall(orderId);

      const accepted = trap.accepted;
      trap.cut();
      await waitFor(() => trap.accepted > accepted, 'the service to reconnect');
      await waitFor(() => app.store.health?.() === 'up', 'the service back on Redis');

      const retry = await publisher.publish({ orderId, status: Paid, key: KEY });
      expect(retry.code).toBe('ok');
      const history = await historyInRedis(orderId);
      // Exactly one event for the request: the command was neither re-sent behind the
      // caller's back nor applied again by the retry.
      expect(history.map((e) => [e.seq, e.status])).toEqual([
        [1, OrderStatus.Created],
        [2, Paid],
      ]);
      expect(retry).toMatchObject({ replayed: false, event: history[1] });
      expect((await eventsOf(app.httpUrl, orderId)).map((e) => e.seq)).toEqual([1, 2]);
      // A later retry of the same request answers the same event.
      const late = await publisher.publish({ orderId, status: Paid, key: KEY });
      expect(late).toMatchObject({ code: 'ok', replayed: true, event: history[1] });
    });

    it('the answer is lost: Redis runs the publish after the caller had its 503, the retry gets that event back', async () => {
      const orderId = `late-${api}`;
      await app.createOrder(orderId);
      await publishIntoStall(orderId);

      // Redis runs the parked publish now; its answer reaches a command that already failed.
      trap.release();
      await waitFor(async () => (await historyInRedis(orderId)).length === 2, 'the late publish');

      const retry = await publisher.publish({ orderId, status: Paid, key: KEY });
      const history = await historyInRedis(orderId);
      expect(history.map((e) => e.seq)).toEqual([1, 2]);
      expect(retry).toMatchObject({ code: 'ok', replayed: true, event: history[1] });
      expect((await eventsOf(app.httpUrl, orderId)).map((e) => e.seq)).toEqual([1, 2]);
    });
  },
);
