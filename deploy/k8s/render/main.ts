import { relative } from 'node:path';
import { stringify } from 'yaml';
import { build, overlayDirs } from './kustomize';
import { unknownFields } from './unknown-fields';
import { validateObjects } from './validate-objects';

/**
 * `npm run k8s -- render deploy/k8s/overlays/demo`: the overlay's objects as YAML (pipe
 * to `kubectl apply -f -`; `kubectl apply -k` renders the same).
 * `npm run k8s -- check [overlay ...]`: renders each overlay (every one by default) and
 * validates every object against the Kubernetes API schemas; exits 1 on any problem.
 */
async function main(argv: readonly string[]): Promise<number> {
  const [command, ...dirs] = argv;
  if (command === 'render' && dirs.length === 1) {
    process.stdout.write(
      build(dirs[0])
        .map((o) => stringify(o))
        .join('---\n'),
    );
    return 0;
  }
  if (command !== 'check') {
    process.stderr.write('usage: k8s render <overlay-dir> | k8s check [overlay-dir ...]\n');
    return 2;
  }
  const rendered = (dirs.length > 0 ? dirs : overlayDirs()).map((dir) => ({
    name: relative(process.cwd(), dir),
    objects: build(dir),
  }));
  // One TypeScript program for every overlay: it is the slow part.
  const all = rendered.flatMap((r) => r.objects);
  const unknown = unknownFields(all);
  let failed = false;
  for (const { name, objects } of rendered) {
    const problems = [
      ...(await validateObjects(objects)),
      ...unknown.filter((p) => objects.includes(all[p.index])),
    ];
    for (const p of problems) process.stdout.write(`${name}: ${p.object}: ${p.message}\n`);
    if (problems.length === 0) process.stdout.write(`${name}: ${objects.length} objects valid\n`);
    failed ||= problems.length > 0;
  }
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
