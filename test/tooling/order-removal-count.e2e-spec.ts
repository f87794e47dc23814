import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ORDER_DOMAIN_NAMES } from './order-domain-names';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');
/** Where docs/adapting.md counts the files that name the order domain. */
const COUNTED_DIRS = ['apps', 'libs', 'proto', 'docs', 'loadtest/src'];
const NUMBERS: Readonly<Record<string, number>> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};

/** The files docs/adapting.md counts: not specs or test helpers, naming the order domain. */
async function filesNamingOrders(): Promise<string[]> {
  const { stdout } = await run(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...COUNTED_DIRS],
    { cwd: ROOT, maxBuffer: 1 << 24 },
  );
  return [...new Set(stdout.split('\0').filter(Boolean))]
    .filter((file) => !file.endsWith('.spec.ts') && !file.split('/').includes('testing'))
    .filter((file) => existsSync(join(ROOT, file)))
    .filter((file) => ORDER_DOMAIN_NAMES.test(readFileSync(join(ROOT, file), 'utf8')))
    .sort();
}

/** A number as the guide writes it: digits, or a word at the start of a sentence. */
function numberIn(guide: string, pattern: RegExp): number {
  const found = pattern.exec(guide)?.[1];
  if (found === undefined) throw new Error(`docs/adapting.md no longer matches ${pattern}`);
  return /^\d+$/.test(found) ? Number(found) : (NUMBERS[found.toLowerCase()] ?? NaN);
}

const isRegenerated = (file: string) =>
  file.startsWith('apps/order-status/public/assets/') || file === 'docs/openapi.json';
const isTheDomains = (file: string) =>
  file.startsWith('libs/order-domain/') || file === 'proto/order_domain.proto';

// "What is left" says how much removing the order domain touches; a change that adds or
// drops a file naming orders has to say so there.
describe("docs/adapting.md's count of the files that name the order domain", () => {
  const guide = readFileSync(join(ROOT, 'docs/adapting.md'), 'utf8').replace(/\s+/g, ' ');

  it('is the number of such files, split as the guide splits them', async () => {
    const files = await filesNamingOrders();
    expect({
      total: files.length,
      regenerated: files.filter(isRegenerated).length,
      domains: files.filter(isTheDomains).length,
      others: files.filter((f) => !isRegenerated(f) && !isTheDomains(f)).length,
    }).toEqual({
      total: numberIn(guide, /is more: (\w+) files that are not specs or test helpers name it/),
      regenerated: numberIn(guide, /(\w+) are regenerated \(/),
      domains: numberIn(guide, /(\w+) are the domain's own \(/),
      others: numberIn(guide, /the other (\w+) are /),
    });
  });

  // An empty listing or a pattern that no longer knows the domain would count nothing.
  it("counts the order domain's own files", async () => {
    expect((await filesNamingOrders()).filter(isTheDomains).length).toBeGreaterThan(0);
  });
});
