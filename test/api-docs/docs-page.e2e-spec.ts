import type { Page } from 'playwright-core';
import { launchBrowser, type Browser } from '../browser/browser';
import { startTestApp, type TestApp } from '../support/test-app';

interface Served {
  readonly status: number;
  readonly csp: string | null;
  readonly type: string | null;
  readonly body: string;
}

async function get(app: TestApp, path: string): Promise<Served> {
  const res = await fetch(`${app.httpUrl}${path}`);
  return {
    status: res.status,
    csp: res.headers.get('content-security-policy'),
    type: res.headers.get('content-type'),
    body: await res.text(),
  };
}

/** Every operation of an OpenAPI document, as Swagger UI lists them. */
function operationCount(document: { paths: Record<string, object> }): number {
  return Object.values(document.paths).reduce((n, item) => n + Object.keys(item).length, 0);
}

/** CSP violations the page reports, collected before any of its own script runs. */
async function recordViolations(page: Page): Promise<void> {
  await page.addInitScript(() => {
    // Runs in the page (the test's tsconfig has no DOM types, hence the local shape).
    interface Violation {
      readonly violatedDirective: string;
      readonly blockedURI: string;
    }
    const g = globalThis as unknown as {
      cspViolations: string[];
      document: { addEventListener(type: string, listener: (e: Violation) => void): void };
    };
    g.cspViolations = [];
    g.document.addEventListener('securitypolicyviolation', (e) => {
      g.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
}

const RENDER_MS = 20_000;

describe('/docs (Swagger UI)', () => {
  let app: TestApp;

  afterEach(async () => {
    await app.close();
  });

  it('is on by default outside production, and off with DOCS_ENABLED=false', async () => {
    app = await startTestApp();
    expect((await get(app, '/docs')).status).toBe(200);
    await app.close();

    app = await startTestApp({ DOCS_ENABLED: 'false' });
    for (const path of ['/docs', '/docs/openapi.json', '/docs/assets/swagger-ui-bundle.js']) {
      expect([path, (await get(app, path)).status]).toEqual([path, 404]);
    }
  });

  it('serves a page that loads only files of this origin, under the docs CSP', async () => {
    app = await startTestApp({ DOCS_ENABLED: 'true' });
    const page = await get(app, '/docs');
    expect(page.type).toMatch(/^text\/html/);
    // No inline script or style: everything the page runs or styles with is a file.
    expect(page.body).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(page.body).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    const refs = [...page.body.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1] ?? '');
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      expect(ref).toMatch(/^\/docs\//);
      const asset = await get(app, ref);
      expect([ref, asset.status]).toEqual([ref, 200]);
      expect(asset.csp).toBe(page.csp);
    }
    const csp = page.csp ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    // The rest of swagger-ui-dist stays unserved (its index.html loads a remote example).
    for (const path of ['/docs/assets/index.html', '/docs/assets/swagger-initializer.js']) {
      expect([path, (await get(app, path)).status]).toEqual([path, 404]);
    }
  });

  describe('in Chromium', () => {
    let browser: Browser;

    beforeAll(async () => {
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser.close();
    });

    it('renders every operation of the document, with no CSP violation and nothing fetched from elsewhere', async () => {
      app = await startTestApp({ DOCS_ENABLED: 'true' });
      const document = JSON.parse((await get(app, '/docs/openapi.json')).body) as {
        paths: Record<string, object>;
      };
      const page = await browser.context.newPage();
      await recordViolations(page);
      const consoleErrors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      const elsewhere: string[] = [];
      page.on('request', (r) => {
        const url = r.url();
        if (!url.startsWith(`${app.httpUrl}/`) && !url.startsWith('data:')) elsewhere.push(url);
      });

      await page.goto(`${app.httpUrl}/docs`);
      await page.waitForSelector('.opblock', { timeout: RENDER_MS });
      expect(await page.locator('.opblock').count()).toBe(operationCount(document));
      expect(await page.locator('.info .title').textContent()).toContain('Order-status gateway');

      // "Try it out" calls the API from the page: connect-src 'self' must allow it.
      const health = page.locator('#operations-ops-health');
      await health.locator('.opblock-summary').click();
      await health.locator('.try-out__btn').click();
      await health.locator('.execute').click();
      await page.waitForSelector(
        '#operations-ops-health .live-responses-table tr.response .response-col_status',
        {
          timeout: RENDER_MS,
        },
      );
      expect(
        (
          await health
            .locator('.live-responses-table tr.response .response-col_status')
            .first()
            .textContent()
        )?.trim(),
      ).toBe('200');

      const violations = await page.evaluate(
        () => (globalThis as unknown as { cspViolations: string[] }).cspViolations,
      );
      expect(violations).toEqual([]);
      expect(consoleErrors).toEqual([]);
      expect(elsewhere).toEqual([]);
    });
  });
});
