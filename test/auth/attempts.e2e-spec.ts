import { ErrorCode } from '@app/contracts';
import { OrderStatus } from '@app/order-domain';
import { stall } from '../support/stall';
import { startTestApp, type TestApp } from '../support/test-app';
import { Attempts, noSubscriptions } from './attempts';

/**
 * The attempt helper itself: what it reports must be what the service answered, however
 * long the answer takes. The auth and probing specs compare its outcomes, so a helper
 * that reads a slow refusal as "ok" fails them on a busy host for no fault of the service.
 */
describe('Attempts (the auth specs’ helper)', () => {
  let app: TestApp;
  let attempts: Attempts;
  let alice: string;

  beforeAll(async () => {
    app = await startTestApp();
    attempts = new Attempts(app);
    alice = app.token({ sub: 'alice', scopes: ['orders:read'] });
    await app.createOwnedOrder('att-1', 'alice', OrderStatus.Paid);
  });
  afterAll(async () => {
    await attempts.close();
    await app.close();
  });

  it('reports a gRPC refusal that arrives after a stall of this process as the refusal', async () => {
    // The app runs in this process: stalling it delays the service's answer as a busy
    // host does. The helper must not take its own give-up for the stream having opened.
    const outcome = attempts.run('grpc-subscribe', 'att-missing', alice);
    stall(600);
    await expect(outcome).resolves.toEqual({ code: ErrorCode.NotFound, status: 5, events: 0 });
    await noSubscriptions(app);
  });

  it('reports a gRPC stream that opened after a stall of this process as open', async () => {
    const outcome = attempts.run('grpc-subscribe', 'att-1', alice, 0);
    stall(600);
    await expect(outcome).resolves.toMatchObject({ code: 'ok', status: 1 });
    await noSubscriptions(app);
  });
});
