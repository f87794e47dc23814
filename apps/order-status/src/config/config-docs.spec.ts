import 'reflect-metadata';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describeConfig } from './app-config';
import { CONFIG_DOCS_PATH, renderConfigDocs, renderVariable } from './config-docs';

const ROOT = resolve(__dirname, '../../../..');

describe('configuration reference (docs/configuration.md)', () => {
  const variables = describeConfig();

  it('is what `npm run docs:config` generates from the configuration code', () => {
    const committed = readFileSync(join(ROOT, CONFIG_DOCS_PATH), 'utf8');
    // On failure: run `npm run docs:config` and commit docs/configuration.md.
    expect(committed).toBe(renderConfigDocs(variables));
  });

  it('describes every variable', () => {
    expect(variables.filter((v) => !v.doc).map((v) => v.name)).toEqual([]);
  });

  it('lists every variable the configuration code reads, even one read only in some cases', () => {
    // describeConfig reads an empty environment; a variable read only when another is set
    // would be missing from it, so the sources are searched for reader calls as well.
    const dir = __dirname;
    const read = new Set<string>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.includes('.spec'))) {
      const source = readFileSync(join(dir, file), 'utf8');
      for (const m of source.matchAll(
        /\br\.(?:int|num|bool|oneOf|str|optional|list)\(\s*'(\w+)'/g,
      )) {
        read.add(m[1]);
      }
    }
    expect(read.size).toBeGreaterThan(50);
    expect([...read].filter((name) => !variables.some((v) => v.name === name))).toEqual([]);
  });

  it('records what the readers apply: default, range, allowed values', () => {
    const byName = new Map(variables.map((v) => [v.name, v]));
    expect(byName.get('HTTP_PORT')).toMatchObject({
      type: 'integer',
      default: '3000',
      values: '0 to 65535',
    });
    expect(byName.get('BUS_OVERFLOW_POLICY')).toMatchObject({
      type: 'one of',
      default: 'conflate',
      values: 'conflate, drop-oldest, disconnect',
    });
    expect(byName.get('REDIS_URL')?.default).toBeUndefined();
    expect(renderVariable(byName.get('HTTP_PORT')!)).toBe(
      '- `HTTP_PORT` (default `3000`; integer 0 to 65535): plain HTTP/1.1: REST, SSE, long-poll, socket.io (0: any free port).',
    );
  });

  it('puts a variable no section claims under "Other" rather than leaving it out', () => {
    const md = renderConfigDocs([{ name: 'NEW_THING', type: 'string', doc: 'something new' }]);
    expect(md).toContain('## Other\n\n- `NEW_THING` (default unset): something new.\n');
  });
});
