import { nodeCommand } from './redis-cluster';
import { RedisServer } from './redis-server';
import { stablePort } from './stable-port';
import { stall } from './stall';

/** The cluster harness's one-shot node command, on its own, against a real redis-server. */
describe('nodeCommand (the Redis Cluster harness)', () => {
  let redis: RedisServer;

  beforeAll(async () => {
    redis = await RedisServer.launch();
  });
  afterAll(async () => {
    await redis?.shutdown();
  });

  it('answers', async () => {
    expect(await nodeCommand(redis.port, 'PING')).toBe('PONG');
  });

  it('survives this process stalling while its connection is being made', async () => {
    // The node accepts at once (the kernel completes the handshake); the test process
    // reads the connect event only after a 1.5 s stall. A connect timeout shorter than
    // the stall would fire first and close a connection that had succeeded.
    const answer = nodeCommand(redis.port, 'PING');
    await new Promise((resolve) => setImmediate(resolve));
    stall(1_500);
    await expect(answer).resolves.toBe('PONG');
  });

  it('fails at once on a port nobody listens on, not after the connect timeout', async () => {
    const port = await stablePort();
    const started = Date.now();
    await expect(nodeCommand(port, 'PING')).rejects.toThrow();
    // Refused by the kernel: well inside the 10 s connect timeout even on a busy host.
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
