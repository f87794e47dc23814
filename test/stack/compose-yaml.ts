import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');
export const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

// Just enough YAML for docker-compose.yml's block style: `key:` sections, `key: value`
// scalars and `- item` lists (no dependency on a YAML parser for one file).
const indentOf = (line: string) => line.length - line.trimStart().length;
const meaningful = (lines: string[]) =>
  lines.filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
const unquote = (v: string) => v.trim().replace(/^(['"])(.*)\1$/, '$2');

export function section(lines: string[], ...path: string[]): string[] {
  let current = meaningful(lines);
  for (const key of path) {
    const base = Math.min(...current.map(indentOf));
    const start = current.findIndex((l) => indentOf(l) === base && l.trim() === `${key}:`);
    if (start < 0) throw new Error(`docker-compose.yml has no ${path.join('.')}`);
    const end = current.findIndex((l, i) => i > start && indentOf(l) <= base);
    current = current.slice(start + 1, end < 0 ? undefined : end);
  }
  return current;
}

export function scalars(lines: string[]): Record<string, string> {
  return Object.fromEntries(
    lines.map((l) => {
      const i = l.indexOf(':');
      return [l.slice(0, i).trim(), unquote(l.slice(i + 1))];
    }),
  );
}

export const items = (lines: string[]) => lines.map((l) => unquote(l.trim().replace(/^- /, '')));
