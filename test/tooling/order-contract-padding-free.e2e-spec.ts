import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * The load test's filler is the payload domain's (libs/payload-domain), not a field of
 * the public order contract teams copy: no padding in the order domain, its proto, its
 * publish API, its simulator, the service's settings or the API documents.
 */
const ROOT = resolve(__dirname, '../..');
const ORDER_CONTRACT = [
  'libs/order-domain',
  'apps/order-status/src/orders',
  'apps/order-status/src/simulator',
  'apps/order-status/src/openapi',
  'apps/order-status/src/config/app-config.ts',
  'docs/openapi.json',
  'docs/asyncapi.yaml',
];
const ORDER_PROTO = 'proto/order_domain.proto';
const PADDING = /paddingBytes|padding_bytes|\bpadding\b|PADDING/;

function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => filesUnder(join(path, name)));
}

/** The proto's declarations: comments and `reserved` statements (the old fields' names) left out. */
function declarations(proto: string): string {
  return proto.replace(/\/\/.*$/gm, '').replace(/^\s*reserved\s[^;]*;/gm, '');
}

/** The body of `message <name> { ... }` (the order messages nest none). */
function messageBody(proto: string, name: string): string {
  return new RegExp(`message ${name} \\{([^}]*)\\}`).exec(proto)?.[1] ?? '';
}

describe('the order contract carries no load-test padding', () => {
  it('names no padding in the order domain, its publish API, simulator, settings or API documents', () => {
    const files = ORDER_CONTRACT.flatMap((path) => filesUnder(join(ROOT, path)));
    // An empty scan would pass vacuously.
    expect(files.length).toBeGreaterThan(ORDER_CONTRACT.length);
    const naming = files
      .filter((file) => PADDING.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(naming).toEqual([]);
  });

  it('declares no padding field in the order proto', () => {
    const proto = readFileSync(join(ROOT, ORDER_PROTO), 'utf8');
    expect(declarations(proto)).toMatch(/message OrderStatusChanged/);
    expect(PADDING.exec(declarations(proto))?.[0]).toBeUndefined();
  });

  // Outside clients keep working only if the removed numbers and names are never reused.
  it.each([
    ['OrderStatusChanged', 5, 'padding'],
    ['TrackingUpdated', 5, 'padding'],
    ['UpdateStatusRequest', 3, 'padding_bytes'],
    ['UpdateTrackingRequest', 4, 'padding_bytes'],
  ])('reserves the number and the name of %s field %i (%s)', (message, number, name) => {
    const body = messageBody(readFileSync(join(ROOT, ORDER_PROTO), 'utf8'), message);
    expect(body).toMatch(new RegExp(`^\\s*reserved ${number};`, 'm'));
    expect(body).toMatch(new RegExp(`^\\s*reserved "${name}";`, 'm'));
  });
});
