import { execFileSync } from 'node:child_process';
import { EventSource } from 'eventsource';
import { request } from 'undici';
import { OrderStatus } from '@app/order-domain';
import { startLocalStack, type LocalStack } from '../../deploy/stack/local-stack';
import { bearer, testAuthEnv } from '../support/auth';

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
    'SKIPPED stack ticket test: nginx is not installed (apt-get install -y nginx-light)\n',
  );
}

const ROUNDS = 10;

/** What a browser's EventSource got from `url`: its first status event, or the failure. */
function firstEvent(url: string): Promise<string> {
  return new Promise((resolve) => {
    // No Authorization header: the ticket in the URL is the only credential.
    const es = new EventSource(url);
    const done = (outcome: string) => {
      clearTimeout(timer);
      es.close();
      resolve(outcome);
    };
    const timer = setTimeout(() => done('timeout'), 5_000);
    es.addEventListener('status', () => done('ok'));
    es.addEventListener('error', (e) => done(`error ${String((e as { code?: number }).code)}`));
  });
}

/**
 * The reproduction, through the stack's nginx in front of two instances: a
 * stream ticket asked for with one request and spent with the next, which nginx sends to
 * the other instance. Each ticket opens its stream once, whichever instance issued it.
 */
(nginxInstalled ? describe : describe.skip)('stack: stream tickets behind nginx', () => {
  let stack: LocalStack;

  beforeAll(async () => {
    stack = await startLocalStack({
      freePorts: true,
      env: { ...testAuthEnv(), LOG_LEVEL: 'warn', SIMULATOR_ENABLED: 'false' },
      log: () => undefined,
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it(`POST /v1/stream-tickets then GET ...stream?ticket= works ${ROUNDS} times out of ${ROUNDS}, once per ticket`, async () => {
    const base = stack.urls.http;
    const created = await request(`${base}/v1/orders/order-1/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer() },
      body: JSON.stringify({ status: OrderStatus.Created }),
    });
    await created.body.dump();
    expect(created.statusCode).toBe(201);

    const outcomes: string[] = [];
    let lastPath = '';
    for (let i = 0; i < ROUNDS; i++) {
      const res = await request(`${base}/v1/stream-tickets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer() },
        body: JSON.stringify({ orderId: 'order-1' }),
      });
      expect(res.statusCode).toBe(201);
      lastPath = ((await res.body.json()) as { streamPath: string }).streamPath;
      outcomes.push(await firstEvent(`${base}${lastPath}`));
    }
    expect(outcomes).toEqual(Array<string>(ROUNDS).fill('ok'));

    // Spent: refused on whichever instance nginx picks now.
    for (let i = 0; i < 2; i++) {
      const again = await request(`${base}${lastPath}`, {
        headers: { accept: 'text/event-stream' },
      });
      expect(again.statusCode).toBe(401);
      expect(await again.body.json()).toMatchObject({
        error: { code: 'unauthenticated', message: 'stream ticket unknown, used or expired' },
      });
    }
  });
});
