import { execFileSync } from 'node:child_process';
import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { startLocalStack, type LocalStack } from '../../deploy/stack/local-stack';
import { DEFAULT_TEST_TOKEN, testAuthEnv } from '../support/auth';
import { FAILOVER_SEQS, runFailover } from './failover-scenario';

const nginxInstalled = (() => {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!nginxInstalled) {
  process.stderr.write(
    'SKIPPED stack failover test: nginx is not installed (apt-get install -y nginx-light)\n',
  );
}

/**
 * The real stack (redis-server, two built instances, nginx with the shipped config): an
 * instance is SIGKILLed while clients stream through nginx; they reconnect through nginx
 * to the survivor, resume from their last seq and lose nothing.
 */
(nginxInstalled ? describe : describe.skip)(
  'stack: an instance dies under streaming clients',
  () => {
    let stack: LocalStack;
    /** The stack's output (warnings and errors only): shown when the scenario fails. */
    const output: string[] = [];

    beforeAll(async () => {
      stack = await startLocalStack({
        freePorts: true,
        // The test keys (every client below sends the default test token); quiet, no
        // simulator, fast SSE reconnects: the test drives the order itself.
        env: {
          ...testAuthEnv(),
          LOG_LEVEL: 'warn',
          SIMULATOR_ENABLED: 'false',
          SSE_RETRY_MS: '200',
        },
        log: (source, line) => output.push(`[${source}] ${line}`),
      });
    }, 60_000);
    afterAll(async () => {
      await stack?.stop();
    });

    it('SSE (HTTP/1.1 and HTTP/2), gRPC and socket.io clients lose nothing when instance A is SIGKILLed', async () => {
      // The instances really check tokens (with the test keys): none, no entry.
      const anonymous = await request(`${stack.urls.http}/v1/orders/f1/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: OrderStatus.Created }),
      });
      await anonymous.body.dump();
      expect(anonymous.statusCode).toBe(401);

      const [a] = stack.instances;
      const seen = await runFailover({
        failureContext: () => output.slice(-40).join('\n'),
        endpoints: {
          http: stack.urls.http,
          https: stack.urls.https,
          grpc: stack.urls.grpc,
          ca: stack.tlsCert,
          token: DEFAULT_TEST_TOKEN,
        },
        orderId: 'f1',
        whileStreaming: async () => {
          const health = await request(`http://127.0.0.1:${a.httpPort}/health`);
          const { subscribers } = (await health.body.json()) as { subscribers: number };
          expect(subscribers).toBeGreaterThan(0); // some clients really were on A
        },
        kill: async () => {
          a.process.kill('SIGKILL');
        },
      });
      expect([...seen.keys()]).toEqual([
        'sse-http1-0',
        'sse-http1-1',
        'sse-http1-2',
        'sse-http1-3',
        'sse-http2',
        'grpc',
        'socket.io',
      ]);
      for (const [client, seqs] of seen) {
        expect({ client, seqs }).toEqual({ client, seqs: FAILOVER_SEQS });
      }
    });
  },
);
