import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The `@app/*` aliases are declared once, in tsconfig.json's `paths`. Jest derives its
 * moduleNameMapper from them (jest.config.js), and the Nest build reads them through
 * the app's tsconfig (Rspack's tsConfig resolution and TsconfigPathsPlugin). Every
 * library under libs/ must have its aliases, and Jest must resolve each import to the
 * file TypeScript does.
 */
const ROOT = resolve(__dirname, '../..');
const LIBS = readdirSync(join(ROOT, 'libs')).filter((d) =>
  statSync(join(ROOT, 'libs', d)).isDirectory(),
);

function compilerOptions(tsconfig: string): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, tsconfig), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (parsed === undefined) throw new Error(`cannot read ${tsconfig}`);
  return parsed.options;
}

const OPTIONS = compilerOptions('tsconfig.json');

interface JestProject {
  readonly displayName: string;
  readonly moduleNameMapper: Readonly<Record<string, string | readonly string[]>>;
}
const JEST = createRequire(__filename)('../../jest.config.js') as { projects: JestProject[] };

/** The file TypeScript resolves `request` to, from a file at the repository's root. */
function tsResolve(request: string): string | undefined {
  const from = join(ROOT, 'index.ts');
  return ts.resolveModuleName(request, from, OPTIONS, ts.sys).resolvedModule?.resolvedFileName;
}

/**
 * The file Jest resolves `request` to: the first pattern that matches, `$n` replaced by
 * its groups (jest-resolve's `_resolveStubModuleName`), then a file or a folder's index.
 */
function jestResolve(mapper: JestProject['moduleNameMapper'], request: string): string | undefined {
  for (const [pattern, targets] of Object.entries(mapper)) {
    const match = new RegExp(pattern).exec(request);
    if (match === null) continue;
    for (const target of [targets].flat()) {
      const path = target
        .replace('<rootDir>', ROOT)
        .replace(/\$(\d+)/g, (_, i: string) => match[Number(i)] ?? '');
      const file = [path, `${path}.ts`, join(path, 'index.ts')].find(
        (f) => existsSync(f) && statSync(f).isFile(),
      );
      if (file !== undefined) return file;
    }
    return undefined;
  }
  return undefined;
}

/** A library's modules as `@app/<lib>/<path>` imports (spec files left out). */
function subpathImports(lib: string): string[] {
  const src = join(ROOT, 'libs', lib, 'src');
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts') && !f.endsWith('.d.ts'))
    .map((f) => `@app/${lib}/${f.replace(/\.ts$/, '').split('\\').join('/')}`);
}

describe('@app/* path aliases', () => {
  it('finds the libraries', () => {
    expect(LIBS).toEqual(expect.arrayContaining(['contracts', 'event-bus', 'auth']));
  });

  it.each(LIBS)('tsconfig.json gives libs/%s its two aliases', (lib) => {
    expect(OPTIONS.paths?.[`@app/${lib}`]).toEqual([`./libs/${lib}/src`]);
    expect(OPTIONS.paths?.[`@app/${lib}/*`]).toEqual([`./libs/${lib}/src/*`]);
  });

  it('declares no alias other than those of libs/', () => {
    const expected = LIBS.flatMap((lib) => [`@app/${lib}`, `@app/${lib}/*`]);
    expect(Object.keys(OPTIONS.paths ?? {}).sort()).toEqual(expected.sort());
  });

  it.each(LIBS)('Jest resolves every import of libs/%s to the file TypeScript does', (lib) => {
    const requests = [`@app/${lib}`, ...subpathImports(lib)];
    expect(requests.length).toBeGreaterThan(1);
    for (const project of JEST.projects) {
      for (const request of requests) {
        const expected = tsResolve(request);
        expect({ request, file: expected && relative(ROOT, expected) }).toEqual({
          request,
          file: expect.stringMatching(new RegExp(`^libs/${lib}/src/`)),
        });
        const actual = jestResolve(project.moduleNameMapper, request);
        expect({ project: project.displayName, request, file: actual }).toEqual({
          project: project.displayName,
          request,
          file: expected,
        });
      }
    }
  });

  it('leaves the build to those paths: no tsconfig redeclares them, the bundler config declares none', () => {
    const nestCli = JSON.parse(readFileSync(join(ROOT, 'nest-cli.json'), 'utf8')) as {
      compilerOptions: { builder: { type: string; options?: unknown }; webpackConfigPath?: string };
      projects: Record<string, { compilerOptions: { tsConfigPath: string } }>;
    };
    expect(nestCli.compilerOptions.builder).toEqual({
      type: 'rspack',
      options: { configPath: 'rspack.config.js' },
    });
    expect(nestCli.compilerOptions.webpackConfigPath).toBeUndefined();
    expect(existsSync(join(ROOT, 'webpack.config.js'))).toBe(false);
    for (const { compilerOptions: project } of Object.values(nestCli.projects)) {
      expect(compilerOptions(project.tsConfigPath).paths).toEqual(OPTIONS.paths);
    }
  });

  it("rspack.config.js changes only SWC's target in the CLI's defaults: no alias, no resolver", () => {
    type Config = { resolve: object; module: { rules: { use: { options: object }[] }[] } };
    const factory = createRequire(__filename)('../../rspack.config.js') as (c: Config) => Config;
    // The shape of the Nest CLI's Rspack defaults (rspack-defaults.js) where it matters.
    const defaults = () => ({
      resolve: { extensions: ['.tsx', '.ts', '.js'], tsConfig: 'tsconfig.json' },
      module: {
        rules: [
          {
            test: /\.tsx?$/,
            use: [
              {
                loader: 'builtin:swc-loader',
                options: { jsc: { parser: { syntax: 'typescript' }, target: 'es2021' } },
              },
            ],
          },
        ],
      },
    });
    const expected = defaults();
    expected.module.rules[0].use[0].options.jsc.target = 'es2022';
    expect(factory(defaults())).toEqual(expected);
    // A CLI that changes its rules fails the build instead of shipping the default.
    expect(() => factory({ resolve: {}, module: { rules: [] } })).toThrow(/one swc-loader/);
  });
});
