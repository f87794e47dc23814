import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StreamDomain } from '@app/contracts/stream-domain';

/** @default order: the service's own domain, so a command without --domain follows orders */
export const DEFAULT_DOMAIN = 'order';

/** A domain's library and its import alias: `libs/<name>-domain`, `@app/<name>-domain`. */
const DOMAIN_ALIAS = /^@app\/([a-z][a-z0-9]*)-domain$/;

/** The repository's tsconfig.json, where every library has its import alias. */
const TSCONFIG = join(__dirname, '..', '..', '..', 'tsconfig.json');

/**
 * The domains the repository ships: one per `@app/<name>-domain` alias in tsconfig.json,
 * the registration `npm run domain:new` writes (and Jest, the build and the bundler read),
 * so a team's new domain is watchable without a line of the CLI changed.
 */
export function knownDomains(tsconfigPath = TSCONFIG): string[] {
  const config = JSON.parse(readFileSync(tsconfigPath, 'utf8')) as {
    compilerOptions?: { paths?: Record<string, unknown> };
  };
  return Object.keys(config.compilerOptions?.paths ?? {})
    .flatMap((alias) => DOMAIN_ALIAS.exec(alias)?.slice(1, 2) ?? [])
    .sort();
}

function isStreamDomain(value: unknown, name: string): value is StreamDomain {
  const d = value as Partial<StreamDomain> | undefined;
  return d?.name === name && Array.isArray(d.kinds) && typeof d.isTerminal === 'function';
}

/**
 * The descriptor of domain `name`: `<NAME>_DOMAIN` of `@app/<name>-domain`, the constant
 * every domain module exports (the generator's template included).
 * @throws TypeError when the module exports no such descriptor
 */
export async function loadDomain(name: string): Promise<StreamDomain> {
  const module = (await import(`@app/${name}-domain`)) as Record<string, unknown>;
  const constant = `${name.toUpperCase()}_DOMAIN`;
  const domain = module[constant];
  if (!isStreamDomain(domain, name)) {
    throw new TypeError(`@app/${name}-domain exports no ${constant} descriptor named '${name}'`);
  }
  return domain;
}
