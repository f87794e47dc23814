import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ORDER_DOMAIN } from '@app/order-domain';
import { PAYLOAD_DOMAIN } from '@app/payload-domain';
import { knownDomains, loadDomain } from './domains';

describe("the watch CLI's domains", () => {
  it('knows every @app/<name>-domain alias of tsconfig.json', () => {
    expect(knownDomains()).toEqual(expect.arrayContaining(['order', 'payload']));
    const dir = mkdtempSync(join(tmpdir(), 'watch-domains-'));
    const path = join(dir, 'tsconfig.json');
    const paths = { '@app/ticket-domain': ['x'], '@app/client': ['y'], '@app/ticket-domain/*': [] };
    writeFileSync(path, JSON.stringify({ compilerOptions: { paths } }));
    expect(knownDomains(path)).toEqual(['ticket']);
  });

  it("loads a domain's descriptor by its name", async () => {
    expect(await loadDomain('payload')).toBe(PAYLOAD_DOMAIN);
    expect(await loadDomain('order')).toBe(ORDER_DOMAIN);
  });
});
