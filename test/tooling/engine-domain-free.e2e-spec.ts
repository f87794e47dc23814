import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ORDER_DOMAIN_NAMES } from './order-domain-names';

/**
 * The engine (bus, stores, auth, transports, connection life cycle, ops, the client's
 * transports) must not name the order domain: a team replaces the domain in
 * libs/order-domain and the proto, not here (docs/adapting.md). This is the issue's
 * check, run on every file of those folders, specs included (they run on fixture
 * domains: libs/event-bus/src/testing/fixture-domain.ts, libs/payload-domain).
 */
const ROOT = resolve(__dirname, '../..');
const ENGINE_DIRS = [
  'libs/event-bus',
  'libs/redis-store',
  'libs/auth',
  'apps/order-status/src/transports',
  'apps/order-status/src/connections',
  'apps/order-status/src/ops',
  'apps/order-status/src/http',
  'apps/order-status/src/auth',
  'libs/client/src/transports',
];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('the engine names no domain', () => {
  it('finds the order domain in no file of the engine', () => {
    const naming = ENGINE_DIRS.flatMap((dir) => filesUnder(join(ROOT, dir)))
      .filter((file) => ORDER_DOMAIN_NAMES.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(naming).toEqual([]);
  });

  // With nothing left to list, these keep the check able to fail: an empty scan or a
  // pattern that no longer knows the domain would pass the test above vacuously.
  it.each(ENGINE_DIRS)('reads the files of %s', (dir) => {
    expect(filesUnder(join(ROOT, dir)).length).toBeGreaterThan(0);
  });

  it("recognises the order domain's own files", () => {
    const domainFiles = filesUnder(join(ROOT, 'libs/order-domain/src')).filter((file) =>
      ORDER_DOMAIN_NAMES.test(readFileSync(file, 'utf8')),
    );
    expect(domainFiles.length).toBeGreaterThan(0);
  });
});

/**
 * The engine's types are generic over the domain (`StreamItemOf<E, S>`, `StreamEventBus<E, S>`,
 * `StreamStore<E, S>` and its stores, `DeliverySink<E, S>`, the transports' message maps,
 * the client's transports): its production files import nothing from the order domain's
 * module, whose types only the edges name (the app's wiring, the order module, the
 * client's entry points and public types). The stores' folder counts too: its specs and
 * test helpers name the order domain, so only this import check covers it.
 */
const IMPORT_CHECKED_DIRS = [...ENGINE_DIRS, 'libs/store'];
const ORDER_DOMAIN_IMPORT = /from '@app\/order-domain(\/[^']*)?'/;

/** Only production code counts: specs and test doubles may import a domain to run on. */
function isProduction(file: string): boolean {
  return file.endsWith('.ts') && !file.endsWith('.spec.ts') && !file.includes('/testing/');
}

describe("the engine's types name no domain", () => {
  it('imports the order domain in no production file of the engine', () => {
    const importing = IMPORT_CHECKED_DIRS.flatMap((dir) => filesUnder(join(ROOT, dir)))
      .filter(isProduction)
      .filter((file) => ORDER_DOMAIN_IMPORT.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file))
      .sort();
    expect(importing).toEqual([]);
  });

  // As above: an empty scan or a pattern that matches no import would pass vacuously.
  it('reads the production files of the stores', () => {
    expect(filesUnder(join(ROOT, 'libs/store')).filter(isProduction).length).toBeGreaterThan(0);
  });

  it("recognises an import of the order domain's module", () => {
    const importers = filesUnder(join(ROOT, 'apps/order-status/src/orders')).filter((file) =>
      ORDER_DOMAIN_IMPORT.test(readFileSync(file, 'utf8')),
    );
    expect(importers.length).toBeGreaterThan(0);
  });
});
