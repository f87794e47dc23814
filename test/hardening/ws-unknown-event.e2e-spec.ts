import { ErrorCode } from '@app/contracts';
import { startTestApp, type TestApp } from '../support/test-app';
import { ClientPool } from '../ws/orders-client';

/**
 * An event the namespace does not know, sent with an ack, is answered with an error ack
 * (never left hanging until the client's timeout), without echoing the event's name;
 * the socket keeps working.
 */
describe('socket.io unknown events', () => {
  let app: TestApp;
  const pool = new ClientPool();

  beforeAll(async () => {
    app = await startTestApp();
    await app.createOrder('ue-1');
  });
  afterAll(async () => {
    await pool.closeAll();
    await app.close();
  });

  it('acks an unknown event with invalid_argument and keeps serving the socket', async () => {
    const client = await pool.connect(app.httpUrl);
    const name = 'subscribe-typo-xyz';
    const emit = client.socket.timeout(2_000).emitWithAck.bind(client.socket) as unknown as (
      event: string,
      ...args: unknown[]
    ) => Promise<unknown>;
    const ack = await emit(name, { orderId: 'ue-1' });
    expect(ack).toMatchObject({ ok: false, error: { code: ErrorCode.InvalidArgument } });
    expect(JSON.stringify(ack)).not.toContain(name);
    // Without an ack it is simply ignored, and the socket still serves known events.
    (client.socket.emit as unknown as (event: string, ...args: unknown[]) => void)(name, 1);
    expect(await client.subscribe('ue-1')).toMatchObject({ ok: true });
  });
});
