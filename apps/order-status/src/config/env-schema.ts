/**
 * Tiny typed readers for environment variables. Each returns the parsed value or records
 * a problem that names the variable and what it accepts, so start-up can report every
 * bad value at once instead of the first.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  int(name: string, def: number, min: number, max: number): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return def;
    const n = /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      this.problems.push(
        `${name}=${JSON.stringify(raw)}: must be an integer from ${min} to ${max}`,
      );
      return def;
    }
    return n;
  }

  num(name: string, def: number, min: number, max: number): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return def;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: must be a number from ${min} to ${max}`);
      return def;
    }
    return n;
  }

  bool(name: string, def: boolean): boolean {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return def;
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
    this.problems.push(`${name}=${JSON.stringify(raw)}: must be true or false`);
    return def;
  }

  oneOf<T extends string>(name: string, def: T, allowed: readonly T[]): T {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return def;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: must be one of ${allowed.join(', ')}`);
      return def;
    }
    return raw as T;
  }

  str(name: string, def: string): string {
    const raw = this.env[name];
    return raw === undefined || raw === '' ? def : raw;
  }

  optional(name: string): string | undefined {
    const raw = this.env[name];
    return raw === undefined || raw === '' ? undefined : raw;
  }

  list(name: string, def: readonly string[]): string[] {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return [...def];
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
  }

  /** Throws one ConfigError listing every problem found so far. */
  assertValid(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}
