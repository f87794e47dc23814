import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { applyPatch, type Operation } from 'fast-json-patch';
import { parse, parseAllDocuments } from 'yaml';

/**
 * The subset of kustomize (kustomize.io, `kubectl apply -k`) that deploy/k8s uses, so CI
 * renders the overlays without the kustomize binary (a Go program CI cannot download; we
 * found no maintained renderer on npm). Whatever else a kustomization says is an error,
 * never silently ignored: `kustomize build` must produce what this produces.
 */
export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Generator {
  readonly name: string;
  readonly behavior?: 'create' | 'merge' | 'replace';
  readonly literals?: readonly string[];
}

interface Kustomization {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly resources?: readonly string[];
  readonly labels?: readonly { readonly pairs: Record<string, string> }[];
  readonly configMapGenerator?: readonly Generator[];
  readonly secretGenerator?: readonly Generator[];
  readonly generatorOptions?: { readonly disableNameSuffixHash?: boolean };
  readonly patches?: readonly {
    readonly target: { readonly kind: string; readonly name: string };
    readonly patch?: string;
    readonly path?: string;
  }[];
  readonly images?: readonly {
    readonly name: string;
    readonly newName?: string;
    readonly newTag?: string;
  }[];
}

const KNOWN_FIELDS = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'resources',
  'labels',
  'configMapGenerator',
  'secretGenerator',
  'generatorOptions',
  'patches',
  'images',
]);

/** Renders the kustomization in `dir` (a folder holding kustomization.yaml). */
export function build(dir: string): K8sObject[] {
  const file = join(dir, 'kustomization.yaml');
  const k = parse(readFileSync(file, 'utf8')) as Kustomization;
  const unknown = Object.keys(k).filter((key) => !KNOWN_FIELDS.has(key));
  if (unknown.length > 0) throw new Error(`${file}: not supported here: ${unknown.join(', ')}`);
  const hasGenerators = (k.configMapGenerator ?? k.secretGenerator) !== undefined;
  if (hasGenerators && k.generatorOptions?.disableNameSuffixHash !== true) {
    // Hashed names need every reference rewritten, which this renderer does not do.
    throw new Error(`${file}: generators need generatorOptions.disableNameSuffixHash: true`);
  }
  const objects: K8sObject[] = [];
  for (const entry of k.resources ?? []) {
    const path = resolve(dir, entry);
    if (statSync(path).isDirectory()) objects.push(...build(path));
    else objects.push(...readObjects(path));
  }
  generate(objects, k.configMapGenerator ?? [], 'ConfigMap', file);
  generate(objects, k.secretGenerator ?? [], 'Secret', file);
  for (const p of k.patches ?? []) {
    const ops = parse(p.patch ?? readFileSync(resolve(dir, p.path ?? ''), 'utf8')) as Operation[];
    if (!Array.isArray(ops)) throw new Error(`${file}: only JSON 6902 patches are supported`);
    const target = find(objects, p.target.kind, p.target.name, file);
    objects[objects.indexOf(target)] = applyPatch(target, ops, true, false).newDocument;
  }
  for (const o of objects) {
    if (k.namespace !== undefined) o.metadata.namespace = k.namespace;
    for (const { pairs } of k.labels ?? []) o.metadata.labels = { ...o.metadata.labels, ...pairs };
    for (const image of k.images ?? []) setImage(o, image);
  }
  return objects;
}

function readObjects(path: string): K8sObject[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw doc.errors[0];
    const o = doc.toJS() as K8sObject;
    if (typeof o?.kind !== 'string' || typeof o.metadata?.name !== 'string') {
      throw new Error(`${path}: every document needs kind and metadata.name`);
    }
    return o;
  });
}

function find(objects: readonly K8sObject[], kind: string, name: string, file: string) {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`${file}: no ${kind} ${name} to patch or merge`);
  return found;
}

/** configMapGenerator / secretGenerator with `literals` (KEY=VALUE, split at the first =). */
function generate(
  objects: K8sObject[],
  generators: readonly Generator[],
  kind: 'ConfigMap' | 'Secret',
  file: string,
): void {
  for (const g of generators) {
    const literals = Object.fromEntries(
      (g.literals ?? []).map((line) => {
        const at = line.indexOf('=');
        if (at <= 0)
          throw new Error(`${file}: ${g.name}: ${JSON.stringify(line)} is not KEY=VALUE`);
        return [line.slice(0, at), line.slice(at + 1)];
      }),
    );
    const behavior = g.behavior ?? 'create';
    let data = literals;
    if (behavior !== 'create') {
      const base = find(objects, kind, g.name, file);
      objects.splice(objects.indexOf(base), 1);
      if (behavior === 'merge') data = { ...decode(base), ...literals };
    } else if (objects.some((o) => o.kind === kind && o.metadata.name === g.name)) {
      throw new Error(`${file}: ${kind} ${g.name} already exists (use behavior: merge)`);
    }
    objects.push(
      kind === 'ConfigMap'
        ? { apiVersion: 'v1', kind, metadata: { name: g.name }, data }
        : {
            apiVersion: 'v1',
            kind,
            metadata: { name: g.name },
            type: 'Opaque',
            data: encode(data),
          },
    );
  }
}

function decode(o: K8sObject): Record<string, string> {
  const data = (o.data ?? {}) as Record<string, string>;
  if (o.kind === 'ConfigMap') return data;
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'base64').toString()]),
  );
}

function encode(data: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  );
}

/** The `images` transformer on every container of a pod template. */
function setImage(o: K8sObject, image: NonNullable<Kustomization['images']>[number]): void {
  const pod = (o.spec as { template?: { spec?: Record<string, unknown> } } | undefined)?.template
    ?.spec;
  for (const list of ['initContainers', 'containers'] as const) {
    for (const c of (pod?.[list] ?? []) as { image: string }[]) {
      const [name, tag] = splitImage(c.image);
      if (name !== image.name) continue;
      const newTag = image.newTag ?? tag;
      c.image = `${image.newName ?? name}${newTag === undefined ? '' : `:${newTag}`}`;
    }
  }
}

function splitImage(ref: string): [string, string | undefined] {
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/')
    ? [ref.slice(0, colon), ref.slice(colon + 1)]
    : [ref, undefined];
}

/** Where the overlays a user applies live, one folder each. */
export const OVERLAYS_DIR = join(__dirname, '..', 'overlays');

/** Every overlay's folder (demo, production). */
export function overlayDirs(): string[] {
  return readdirSync(OVERLAYS_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(OVERLAYS_DIR, entry.name));
}
