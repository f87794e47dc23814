import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const ROOT = join(__dirname, '..', '..');
export const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The keys of a Compose service that the stack specs compare (Compose Specification). */
export interface ComposeService {
  readonly profiles?: readonly string[];
  readonly build?: { readonly args?: Readonly<Record<string, string>> };
  readonly command?: readonly string[];
  readonly environment?: Readonly<Record<string, unknown>>;
  readonly depends_on?: Readonly<Record<string, { readonly condition: string }>>;
  readonly volumes?: readonly string[];
  readonly ports?: readonly string[];
  readonly healthcheck?: { readonly test?: readonly string[] };
}

export interface ComposeFile {
  /** The named service; throws if the file has none. */
  service(name: string): ComposeService;
}

/** docker-compose.yml, parsed as YAML 1.2 (a syntax error or a repeated key throws). */
export function readCompose(): ComposeFile {
  const { services } = parse(read('docker-compose.yml')) as {
    services?: Record<string, ComposeService>;
  };
  if (services === undefined) throw new Error('docker-compose.yml has no services');
  return {
    service: (name) => {
      const found = services[name];
      if (found === undefined) throw new Error(`docker-compose.yml has no service ${name}`);
      return found;
    },
  };
}

/**
 * A service's environment as the strings its process sees. Unquoted YAML would make
 * `HTTP_PORT: 3001` a number and `SIMULATOR_RATE: 0.50` the number 0.5, so every value
 * must be a string in the file.
 */
export function environment(svc: ComposeService): Record<string, string> {
  return Object.fromEntries(
    Object.entries(svc.environment ?? {}).map(([key, value]) => {
      if (typeof value !== 'string') {
        throw new Error(`docker-compose.yml: ${key} is ${JSON.stringify(value)}, not a string`);
      }
      return [key, value];
    }),
  );
}

/** A value with Compose's `${VAR:-default}` interpolations replaced by their defaults. */
export function withDefaults(value: string): string {
  return value.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');
}

/** The argument after `flag` in a command list (`['redis-server', '--port', '6390']`). */
export function argAfter(command: readonly string[] | undefined, flag: string): string | undefined {
  const i = command?.indexOf(flag) ?? -1;
  return i < 0 ? undefined : command?.[i + 1];
}
