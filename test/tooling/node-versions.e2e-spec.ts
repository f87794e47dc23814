import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { satisfies, subset } from 'semver';

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

interface PackageJson {
  engines: { node: string };
  devEngines: { runtime: { name: string; version: string } };
  scripts: Record<string, string>;
}
interface LockEntry {
  readonly dev?: boolean;
  readonly engines?: { readonly node?: string } | readonly string[];
}

/**
 * Dev packages whose `engines` ask for more than they use, with the proof: npm ci warns
 * about them (EBADENGINE) on the older Nodes of devEngines, and nothing else happens.
 */
const ENGINES_STRICTER_THAN_NEEDED: Readonly<Record<string, string>> = {
  // 10.0.0 declares >=24; the client package's build (libs/client/bundle/package-build.ts)
  // runs on Node 22 in CI's npm test, and its spec installs what it built.
  'dts-bundle-generator': 'builds libs/client on Node 22 (npm test on Node 22 in .ci/run)',
};

const pkg = JSON.parse(read('package.json')) as PackageJson;
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, LockEntry> };

/** Installed packages (not the project itself) whose engines name a Node range. */
function nodeRanges(which: (e: LockEntry) => boolean): [string, string][] {
  return Object.entries(lock.packages).flatMap(([path, entry]) => {
    const range = Array.isArray(entry.engines)
      ? undefined
      : (entry.engines as LockEntry['engines'] & { node?: string })?.node;
    return path !== '' && range !== undefined && which(entry)
      ? [[path.replace(/^.*node_modules\//, ''), range] as [string, string]]
      : [];
  });
}

/**
 * package.json says which Node the project runs on, and it is true of what the lockfile
 * installs: `engines` (running the service) admits only Nodes every production package
 * supports, `devEngines` (developing it: build, lint, tests) only Nodes every package
 * supports, and .ci/run tests the Nodes it names. npm then warns only on a Node that
 * cannot work, and once per command.
 */
describe('Node versions', () => {
  it('engines admits only Nodes every production dependency supports', () => {
    const unmet = nodeRanges((e) => e.dev !== true).filter(
      ([, range]) => !subset(pkg.engines.node, range),
    );
    expect(unmet).toEqual([]);
  });

  it('devEngines admits only Nodes every installed package supports, and no Node engines refuses', () => {
    const { runtime } = pkg.devEngines;
    expect(runtime.name).toBe('node');
    const unmet = nodeRanges(() => true).filter(([, r]) => !subset(runtime.version, r));
    expect(unmet.filter(([name]) => !(name in ENGINES_STRICTER_THAN_NEEDED))).toEqual([]);
    // An exception that no longer applies is removed, so the list stays true.
    expect(Object.keys(ENGINES_STRICTER_THAN_NEEDED).sort()).toEqual(
      [...new Set(unmet.map(([name]) => name))].sort(),
    );
    expect(subset(runtime.version, pkg.engines.node)).toBe(true);
  });

  it('.ci/run tests on Node 22 and Node 26, both within devEngines', () => {
    const ci = read('.ci/run');
    const versions = ['NODE22_VERSION', 'NODE26_VERSION'].map(
      (name) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(ci)?.[1] ?? `${name} missing`,
    );
    expect(versions.map((v) => v.split('.')[0])).toEqual(['22', '26']);
    for (const v of versions)
      expect([v, satisfies(v, pkg.devEngines.runtime.version)]).toEqual([v, true]);
    // The README's test command runs on Node 22 (npm test after PATH points at it).
    expect(ci).toMatch(/export PATH="\$node22:\$PATH"[\s\S]*\nnpm test\n/);
  });

  it("npm start runs no second npm (each would repeat npm's engine warnings)", () => {
    expect(pkg.scripts.start).not.toMatch(/\bnpm\b/);
  });
});
