import { request } from 'undici';
import { DEMO_HS256_SECRET } from '@app/auth';
import { OrderStatus } from '@app/order-domain';
import { startTestApp, type TestApp } from '../support/test-app';

describe('GET /v1/dev/token (the demo page token)', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('is 404 unless the service runs on the public demo secret', async () => {
    app = await startTestApp();
    const res = await request(`${app.httpUrl}/v1/dev/token`);
    expect(res.statusCode).toBe(404);
    expect(await res.body.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('in demo mode, hands out a token the service accepts', async () => {
    app = await startTestApp({ AUTH_HS256_SECRET: DEMO_HS256_SECRET });
    await app.createOrder('dev-1', OrderStatus.Paid);
    const res = await request(`${app.httpUrl}/v1/dev/token`);
    expect(res.statusCode).toBe(200);
    const { token } = (await res.body.json()) as { token: string };
    const snap = await request(`${app.httpUrl}/v1/orders/dev-1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(snap.statusCode).toBe(200);
    expect(await snap.body.json()).toMatchObject({ orderId: 'dev-1', lastSeq: 2 });
  });
});
