import { request } from 'undici';
import { launchBrowser, type Browser } from '../browser/browser';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  completedOnEveryTransport,
  followFromPage,
  moduleImportPage,
  openTeamPage,
  startOrigin,
  type Origin,
} from './team-page';

const MODULE_PATH = '/assets/order-status-client.mjs';
const IIFE_PATH = '/assets/order-status-client.js';

/**
 * Another origin's page: `?lib=<url>` imports the library from it as a module, or with
 * `&classic` loads it as a classic script (the IIFE, which defines the global itself).
 */
function teamOrigin(): Promise<Origin> {
  return startOrigin((req, res) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const lib = query.get('lib') ?? '';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      query.get('classic') === null
        ? moduleImportPage(lib)
        : `<!doctype html><script src=${JSON.stringify(lib)} onerror="globalThis.libError = true"></script>`,
    );
  });
}

/**
 * A team's page on another origin imports the client library from the service (the
 * self-contained ES module build) and follows an order over SSE, socket.io and long-poll:
 * CORS for the origins in HTTP_CORS_ORIGINS, `Cross-Origin-Resource-Policy: cross-origin`
 * on the library's builds, served compressed with a validator.
 */
describe('the browser ES module build, loaded by a page of another origin', () => {
  let browser: Browser;
  let app: TestApp;
  let team: Origin;
  let stranger: Origin;
  const pageOf = (o: Origin, path: string, classic = false) =>
    openTeamPage(
      browser,
      `${o.origin}/?lib=${encodeURIComponent(`${app.httpUrl}${path}`)}${classic ? '&classic' : ''}`,
    );

  beforeAll(async () => {
    team = await teamOrigin();
    stranger = await teamOrigin();
    app = await startTestApp({ HTTP_CORS_ORIGINS: team.origin, WS_CORS_ORIGINS: team.origin });
    browser = await launchBrowser();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    team?.close();
    stranger?.close();
  });

  it('is served compressed, with an ETag, CORS for listed origins and CORP cross-origin', async () => {
    const url = `${app.httpUrl}${MODULE_PATH}`;
    for (const encoding of ['br', 'gzip']) {
      const res = await request(url, {
        headers: { origin: team.origin, 'accept-encoding': `${encoding}, identity` },
      });
      const raw = Buffer.from(await res.body.arrayBuffer());
      expect(res.statusCode).toBe(200);
      expect(res.headers).toMatchObject({
        'content-encoding': encoding,
        'content-type': expect.stringMatching(/^application\/javascript/),
        'access-control-allow-origin': team.origin,
        'cross-origin-resource-policy': 'cross-origin',
        vary: expect.stringMatching(/accept-encoding/i),
        etag: expect.any(String),
      });
      expect(raw.length).toBeLessThan(25_000);
      const again = await request(url, {
        headers: { 'accept-encoding': encoding, 'if-none-match': String(res.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
      await again.body.dump();
    }
    const plain = await request(url, { headers: { origin: stranger.origin } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
    expect((await plain.body.text()).length).toBeGreaterThan(50_000);
    // The rest of the page keeps same-origin.
    const appJs = await request(`${app.httpUrl}/assets/app.js`);
    expect(appJs.headers['cross-origin-resource-policy']).toBe('same-origin');
    await appJs.body.dump();
  });

  it('follows an order over every browser transport from a listed origin', async () => {
    const [page, loaded] = await pageOf(team, MODULE_PATH);
    expect(loaded).toBe(true);
    expect(await followFromPage(page, app, 'xo-1')).toEqual(completedOnEveryTransport());
    await page.close();
  }, 45_000);

  it("lets another origin's page load the demo page's IIFE as a classic script", async () => {
    // A classic script is a no-cors load: CORP same-origin would block it.
    const [page, loaded] = await pageOf(stranger, IIFE_PATH, true);
    expect(loaded).toBe(true);
    await page.close();
  });

  it('is refused to a page of an origin that is not listed', async () => {
    const [page, loaded] = await pageOf(stranger, MODULE_PATH);
    expect(loaded).toBe(false);
    await page.close();
  });
});
