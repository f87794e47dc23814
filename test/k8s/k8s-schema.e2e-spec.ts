import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from '../../deploy/k8s/render/kustomize';
import { OVERLAYS } from './rendered';

const ROOT = join(__dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const BASE = join(ROOT, 'deploy', 'k8s', 'base');

/** A throwaway overlay of the base with `extra` (kustomization fields, as YAML). */
function overlay(dir: string, extra: string): string {
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: broken\nresources:\n  - ${BASE}\n${extra}`,
  );
  return dir;
}

/**
 * `npm run k8s -- check` (what CI runs): every overlay's objects against the Kubernetes API
 * schemas, and an overlay with a wrong type and an unknown field is refused with both.
 */
describe('npm run k8s -- check', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'k8s-overlay-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes the overlays and names what is wrong in a broken one', async () => {
    const broken = overlay(
      dir,
      [
        'patches:',
        '  - target: { kind: HorizontalPodAutoscaler, name: order-status }',
        "    patch: '[{op: replace, path: /spec/minReplicas, value: two}]'",
        '  - target: { kind: Deployment, name: order-status }',
        "    patch: '[{op: add, path: /spec/template/spec/terminationGracePeriodSecond, value: 25}]'",
        '',
      ].join('\n'),
    );
    const result = await promisify(execFile)(
      process.execPath,
      [
        TSX,
        'deploy/k8s/render/main.ts',
        'check',
        join(OVERLAYS, 'demo'),
        join(OVERLAYS, 'production'),
        broken,
      ],
      { cwd: ROOT, timeout: 60_000 },
    ).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (err: { code: number; stdout: string }) => err,
    );
    const lines = result.stdout.trim().split('\n');
    expect(lines).toContain('deploy/k8s/overlays/demo: 13 objects valid');
    expect(lines).toContain('deploy/k8s/overlays/production: 9 objects valid');
    const problems = lines.filter((l) => !l.endsWith('objects valid'));
    // The schema names the wrong type; the type check names the unknown field (and the
    // wrong type again).
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /HorizontalPodAutoscaler\/order-status: .*minReplicas must be integer/,
        ),
        expect.stringMatching(
          /Deployment\/order-status: .*'"?terminationGracePeriodSecond"?' does not exist/,
        ),
      ]),
    );
    expect(problems.every((l) => l.includes('k8s-overlay-'))).toBe(true);
    expect(result.code).toBe(1);
  }, 90_000);

  it('refuses a kustomization field the renderer does not implement', () => {
    overlay(dir, 'commonLabels:\n  team: orders\n');
    expect(() => build(dir)).toThrow(/not supported here: commonLabels/);
  });
});
