import { read } from './compose-file';

/** One `KEY=value` token of an ENV instruction, quotes removed. */
function envPair(token: string): [string, string] {
  const eq = token.indexOf('=');
  if (eq <= 0) throw new Error(`Dockerfile: ENV ${token}: only the KEY=value form is read here`);
  return [token.slice(0, eq), token.slice(eq + 1).replace(/^"(.*)"$/, '$1')];
}

/**
 * The `ENV` variables a stage of the Dockerfile sets for its containers: that stage's own
 * lines and, through `FROM <stage>`, those of the stages it builds on (Dockerfile
 * reference: "The environment variables set using ENV will persist when a container is
 * run from the resulting image").
 */
export function dockerfileStageEnv(stage: string, file = 'Dockerfile'): Record<string, string> {
  const stages = new Map<string, { base: string; env: Record<string, string> }>();
  let current: { base: string; env: Record<string, string> } | undefined;
  for (const raw of read(file).split('\n')) {
    const line = raw.trim();
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) {
      current = { base: from[1], env: {} };
      if (from[2] !== undefined) stages.set(from[2], current);
      continue;
    }
    const env = /^ENV\s+(.+)$/i.exec(line);
    if (env && current) {
      for (const token of env[1].split(/\s+/)) {
        const [key, value] = envPair(token);
        current.env[key] = value;
      }
    }
  }
  const resolve = (name: string): Record<string, string> => {
    const s = stages.get(name);
    if (s === undefined) return {};
    return { ...resolve(s.base), ...s.env };
  };
  if (!stages.has(stage)) throw new Error(`${file} has no stage ${stage}`);
  return resolve(stage);
}

/** The default of a global `ARG NAME=default` (before the first FROM) of the Dockerfile. */
export function dockerfileArgDefault(name: string, file = 'Dockerfile'): string | undefined {
  for (const raw of read(file).split('\n')) {
    const line = raw.trim();
    if (/^FROM\s/i.test(line)) return undefined;
    const arg = /^ARG\s+([A-Za-z0-9_]+)=(\S+)$/i.exec(line);
    if (arg?.[1] === name) return arg[2];
  }
  return undefined;
}
