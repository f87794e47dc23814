import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import {
  controllerSource,
  descriptorSource,
  domainNames,
  moduleSource,
  type DomainNames,
} from './domain-template';

/** Where a new domain is registered, relative to the repository's root. */
const REGISTRY = 'apps/order-status/src/domains/served-domains.ts';
const DOMAIN_NAMES = 'apps/order-status/src/config/benchmark-config.ts';
const TSCONFIG = 'tsconfig.json';

/** The files a new domain adds, relative to the repository's root. */
function newFiles({ name }: DomainNames): Record<string, (n: DomainNames) => string> {
  return {
    [`libs/${name}-domain/src/${name}-domain.ts`]: descriptorSource,
    [`apps/order-status/src/${name}/${name}.controller.ts`]: controllerSource,
    [`apps/order-status/src/${name}/${name}.module.ts`]: moduleSource,
  };
}

/** `text` with `insert` before the first match of `anchor`. */
function insertBefore(text: string, anchor: RegExp, insert: string, file: string): string {
  const at = text.search(anchor);
  if (at < 0) throw new Error(`${file}: cannot find ${anchor.source} to register the domain`);
  return text.slice(0, at) + insert + text.slice(at);
}

/** The three registrations: the STREAM_DOMAIN value, the served domain, the import alias. */
function registrations(n: DomainNames): Record<string, (text: string) => string> {
  const { name, type, constant } = n;
  return {
    [DOMAIN_NAMES]: (text) =>
      text.replace(/(export const STREAM_DOMAINS = \[[^\]]*)\]/, `$1, '${name}']`),
    [REGISTRY]: (text) => {
      const imports =
        `import { ${constant}_DOMAIN } from '@app/${name}-domain';\n` +
        `import { ${type}Module } from '../${name}/${name}.module';\n`;
      const entry =
        `  ${name}: {\n` +
        `    domain: ${constant}_DOMAIN,\n` +
        `    publishing: () => [${type}Module],\n` +
        `    simulated: false,\n` +
        `  },\n`;
      return insertBefore(
        insertBefore(text, /^import type \{ StreamDomainName \}/m, imports, REGISTRY),
        /^\} as const satisfies/m,
        entry,
        REGISTRY,
      );
    },
    [TSCONFIG]: (text) => {
      const config = JSON.parse(text) as { compilerOptions: { paths: Record<string, string[]> } };
      config.compilerOptions.paths[`@app/${name}-domain`] = [
        `./libs/${name}-domain/src/${name}-domain.ts`,
      ];
      return JSON.stringify(config, null, 2);
    },
  };
}

async function formatted(root: string, file: string, text: string): Promise<string> {
  const options = await resolveConfig(join(root, file));
  return format(text, { ...options, filepath: join(root, file) });
}

/**
 * Adds a domain named `name` beside the others in the repository at `root`: writes its
 * descriptor and publish route from the template and registers it (STREAM_DOMAIN=name
 * then serves it). Touches nothing when a file it would write exists.
 * @returns the files written or changed, relative to `root`
 */
export async function addDomain(root: string, name: string): Promise<string[]> {
  const n = domainNames(name);
  const created = newFiles(n);
  for (const file of Object.keys(created)) {
    if (existsSync(join(root, file))) throw new Error(`${file} exists: the domain is there`);
  }
  const changes = new Map<string, string>();
  for (const [file, source] of Object.entries(created)) changes.set(file, source(n));
  for (const [file, edit] of Object.entries(registrations(n))) {
    const before = await readFile(join(root, file), 'utf8');
    const after = edit(before);
    if (after === before) throw new Error(`${file}: the domain could not be registered`);
    changes.set(file, after);
  }
  for (const [file, text] of changes) {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), await formatted(root, file, text));
  }
  return [...changes.keys()];
}
