import { join } from 'node:path';
import { asyncContextFrameEnabled } from '../../apps/order-status/src/ops/request-context';
import { bearer } from '../support/auth';
import { waitFor } from '../support/wait-for';
import { logLines, spawnService, type ServiceProcess } from './service-process';

const PROBE = join(__dirname, 'fixtures', 'promise-hooks-probe.cjs');

/** Asks the preloaded probe whether promise hooks are on in the service's process. */
async function promiseHooksOn(service: ServiceProcess): Promise<boolean> {
  const before = service.lines.length;
  service.child.kill('SIGUSR2');
  const line = await waitFor(
    () => service.lines.slice(before).find((l) => l.includes('"promise-hooks"')),
    'the promise-hooks probe to answer',
  );
  return (JSON.parse(line) as { on: boolean }).on;
}

async function ordinaryRequest(service: ServiceProcess): Promise<void> {
  const res = await fetch(`${service.httpUrl}/v1/orders/order-1`, { headers: bearer() });
  await res.arrayBuffer();
  // Its completion line is written: the request went through the request-log hook.
  await waitFor(() => logLines(service, 'request completed').length > 0, 'its request line');
}

/**
 * The production build, started with a probe that reports whether promise hooks are on.
 * On Node 20 a single ordinary request used to turn them on for good (the request log's
 * AsyncLocalStorage context), which made every later promise, and so every long-poll,
 * dearer; by default the context is now used only where it needs no hooks.
 */
describe('request logging context and promise hooks (production build)', () => {
  const services: ServiceProcess[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const service = await spawnService({
      NODE_OPTIONS: `--require ${JSON.stringify(PROBE)}`,
      ...env,
    });
    services.push(service);
    return service;
  };

  afterAll(async () => {
    for (const service of services) service.kill();
    await Promise.all(services.map((s) => s.exited));
  });

  it('by default, an ordinary request leaves promise hooks off on any runtime', async () => {
    const service = await start();
    expect(await promiseHooksOn(service)).toBe(false);
    await ordinaryRequest(service);
    expect(await promiseHooksOn(service)).toBe(false);
  }, 90_000);

  it('LOG_REQUEST_CONTEXT=on keeps the context, which needs them before Node 24', async () => {
    const service = await start({ LOG_REQUEST_CONTEXT: 'on' });
    await ordinaryRequest(service);
    // The probe can see them: this is what the default avoids on Node 20.
    expect(await promiseHooksOn(service)).toBe(!asyncContextFrameEnabled());
  }, 90_000);
});
