import { request } from 'undici';
import { ErrorCode, type ErrorBody } from '@app/contracts';
import { startTestApp, type TestApp } from '../support/test-app';

/** A JSON value nested `depth` arrays deep: 2 bytes per level. */
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/**
 * The API's bodies are JSON only: a form-encoded or plain-text body (what an HTML form
 * or a `curl -d` sends, cross-origin without a preflight) is a 415 in the error shape,
 * and changes nothing.
 */
describe('JSON-only request bodies', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    await app.createOrder('jb-1');
  });
  afterAll(async () => {
    await app.close();
  });

  async function post(path: string, contentType: string, body: string) {
    const res = await request(`${app.httpUrl}${path}`, {
      method: 'POST',
      headers: { ...app.authHeaders, 'content-type': contentType },
      body,
    });
    return { status: res.statusCode, text: await res.body.text() };
  }

  it.each([
    ['application/x-www-form-urlencoded', 'status=paid'],
    ['text/plain', '{"status":"paid"}'],
    [
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="status"\r\n\r\npaid\r\n--x--\r\n',
    ],
  ])('refuses a %s publish with 415', async (contentType, body) => {
    const res = await post('/v1/orders/jb-1/status', contentType, body);
    expect(res.status).toBe(415);
    expect((JSON.parse(res.text) as ErrorBody).error.code).toBe(ErrorCode.InvalidArgument);
    const snapshot = await request(`${app.httpUrl}/v1/orders/jb-1`, { headers: app.authHeaders });
    expect(await snapshot.body.json()).toMatchObject({ lastSeq: 1 });
  });

  it('refuses a form-encoded stream-ticket request with 415', async () => {
    const res = await post(
      '/v1/stream-tickets',
      'application/x-www-form-urlencoded',
      'orderId=jb-1',
    );
    expect(res.status).toBe(415);
  });

  // Nested 2,000 deep (4 KB, under the body limit), a body once reached class-transformer,
  // whose recursion overflowed the stack: a 500 and a logged RangeError on every request.
  it.each([
    ['/v1/stream-tickets', (v: string) => `{"orderId":${v}}`, ['orders:read']],
    ['/v1/orders/jb-1/status', (v: string) => `{"status":${v}}`, undefined],
    ['/v1/orders/jb-1/tracking', (v: string) => `{"location":{"lat":${v}},"etaMs":1}`, undefined],
  ] as const)('refuses a body nested 2,000 deep on %s with 400', async (path, body, scopes) => {
    const res = await request(`${app.httpUrl}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${app.token(scopes ? { scopes } : {})}`,
        'content-type': 'application/json',
      },
      body: body(nested(2_000)),
    });
    expect(res.statusCode).toBe(400);
    const answer = (await res.body.json()) as ErrorBody;
    expect(answer.error).toEqual({
      code: ErrorCode.InvalidArgument,
      message: expect.stringMatching(/nest/) as unknown,
    });
  });

  it('accepts JSON, with or without a charset', async () => {
    // Two different statuses: a repeated one would be refused (409) for another reason.
    const cases = [
      ['application/json', 'paid'],
      ['application/json; charset=utf-8', 'packed'],
    ] as const;
    for (const [type, status] of cases) {
      const res = await post('/v1/orders/jb-1/status', type, JSON.stringify({ status }));
      expect([type, res.status]).toEqual([type, 201]);
    }
  });
});
