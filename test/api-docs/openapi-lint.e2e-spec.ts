import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { OPENAPI_FILE } from '../../apps/order-status/src/openapi/openapi-file';

const ROOT = join(__dirname, '..', '..');
const REDOCLY_CLI = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

/**
 * The committed OpenAPI document (kept equal to the generated one by openapi-drift) passes
 * Redocly's recommended rules (redocly.yaml) with no error and no warning: what a team's
 * API gateway or client generator will run on it first.
 */
describe('docs/openapi.json under Redocly lint', () => {
  it('has no problem', async () => {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [REDOCLY_CLI, 'lint', OPENAPI_FILE, '--format', 'stylish'],
      {
        cwd: ROOT,
        // Offline and quiet: no usage report, no update check.
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        timeout: 60_000,
      },
    ).catch((err: { stdout: string; stderr: string }) => err);
    const problems = `${stdout}\n${stderr}`
      .split('\n')
      .filter((l) => /\s(error|warning)\s/.test(l));
    expect(problems).toEqual([]);
    expect(stderr).toMatch(/valid/i);
  }, 90_000);

  it('documents the JSON body the simulator routes answer', () => {
    const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const routes = [
      ['/v1/admin/simulator', 'get'],
      ['/v1/admin/simulator', 'put'],
      ['/v1/admin/simulator/start', 'post'],
      ['/v1/admin/simulator/stop', 'post'],
    ];
    for (const [path, method] of routes) {
      expect([path, method, document.paths[path][method].responses['200']]).toEqual([
        path,
        method,
        expect.objectContaining({
          content: {
            'application/json': { schema: { $ref: '#/components/schemas/SimulatorStatus' } },
          },
        }),
      ]);
    }
  });
});
