/**
 * Tiny typed readers for environment variables. Each returns the parsed value or records
 * a problem that names the variable and what it accepts, so start-up can report every
 * bad value at once instead of the first. Each also records what it read (name, type,
 * default, range, description), so the reference docs/configuration.md is generated from
 * the very calls that read the variables and cannot list a default or range the code
 * does not apply.
 */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * The description of a variable, beside the reader call that reads it. `default` and
 * `values` replace the recorded default and range where the code computes them (a default
 * that depends on another variable, a format rather than a range).
 */
export type VariableDoc =
  string | { readonly text: string; readonly default?: string; readonly values?: string };

/** What one reader call says about its variable: the configuration reference's row. */
export interface VariableSpec {
  readonly name: string;
  /** What the reader accepts: `integer`, `number`, `boolean`, `one of`, `list`, `string`. */
  readonly type: string;
  /** As it would be written in the environment; undefined when unset means "off"/"none". */
  readonly default?: string;
  readonly values?: string;
  readonly doc?: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export class EnvReader {
  readonly problems: string[] = [];
  /** Every variable read so far, in first-read order (see VariableSpec). */
  readonly variables = new Map<string, VariableSpec>();

  constructor(private readonly env: Env) {}

  int(name: string, def: number, min: number, max: number, doc?: VariableDoc): number {
    this.record(name, 'integer', doc, String(def), `${min} to ${max}`);
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

  num(name: string, def: number, min: number, max: number, doc?: VariableDoc): number {
    this.record(name, 'number', doc, String(def), `${min} to ${max}`);
    const raw = this.env[name];
    if (raw === undefined || raw === '') return def;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: must be a number from ${min} to ${max}`);
      return def;
    }
    return n;
  }

  bool(name: string, def: boolean, doc?: VariableDoc): boolean {
    this.record(name, 'boolean', doc, String(def));
    const raw = this.env[name];
    if (raw === undefined || raw === '') return def;
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
    this.problems.push(`${name}=${JSON.stringify(raw)}: must be true or false`);
    return def;
  }

  oneOf<T extends string>(name: string, def: T, allowed: readonly T[], doc?: VariableDoc): T {
    this.record(name, 'one of', doc, def, allowed.join(', '));
    const raw = this.env[name];
    if (raw === undefined || raw === '') return def;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name}=${JSON.stringify(raw)}: must be one of ${allowed.join(', ')}`);
      return def;
    }
    return raw as T;
  }

  str(name: string, def: string, doc?: VariableDoc): string {
    this.record(name, 'string', doc, def);
    const raw = this.env[name];
    return raw === undefined || raw === '' ? def : raw;
  }

  optional(name: string, doc?: VariableDoc): string | undefined {
    this.record(name, 'string', doc);
    const raw = this.env[name];
    return raw === undefined || raw === '' ? undefined : raw;
  }

  list(name: string, def: readonly string[], doc?: VariableDoc): string[] {
    this.record(name, 'list', doc, def.length > 0 ? def.join(',') : undefined, 'comma list');
    const raw = this.env[name];
    if (raw === undefined || raw === '') return [...def];
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
  }

  /**
   * A variable read more than once (NODE_ENV decides several defaults) keeps its first
   * record, unless only a later read describes it.
   */
  private record(
    name: string,
    type: string,
    doc: VariableDoc | undefined,
    def?: string,
    values?: string,
  ): void {
    const known = this.variables.get(name);
    if (known && (known.doc !== undefined || doc === undefined)) return;
    const over = typeof doc === 'object' ? doc : undefined;
    this.variables.set(name, {
      name,
      type,
      default: over?.default ?? (def === '' ? undefined : def),
      values: over?.values ?? values,
      doc: typeof doc === 'string' ? doc : doc?.text,
    });
  }

  /** Throws one ConfigError listing every problem found so far. */
  assertValid(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}
