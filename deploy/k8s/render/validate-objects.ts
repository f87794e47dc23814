import type { K8sObject } from './kustomize';

/** One object's problems against the Kubernetes API schema, as `Kind/name: message`. */
export interface SchemaProblem {
  readonly object: string;
  readonly message: string;
}

type Model = new (data: unknown) => { validate(): void };

/** The kubernetes-models module of an object's apiVersion and kind (`apps/v1/Deployment`). */
export function modelPath(o: K8sObject): string {
  const [group, version] = o.apiVersion.includes('/')
    ? o.apiVersion.split('/')
    : ['', o.apiVersion];
  return `kubernetes-models/${group === '' ? '' : `${group}/`}${version}/${o.kind}`;
}

/**
 * Validates objects against the Kubernetes API's OpenAPI schemas (types, formats,
 * required fields), compiled into kubernetes-models, one class per apiVersion and kind;
 * unknownFields() adds what those schemas allow and the API server refuses.
 * kubernetes-models ships ES modules only: this runs under Node or tsx, not Jest.
 */
export async function validateObjects(objects: readonly K8sObject[]): Promise<SchemaProblem[]> {
  const problems: SchemaProblem[] = [];
  for (const o of objects) {
    const id = `${o.kind}/${o.metadata?.name ?? '?'}`;
    const module = modelPath(o);
    const exports = (await import(module).catch(() => ({}))) as Record<string, Model | undefined>;
    const Model = exports[o.kind];
    if (Model === undefined) {
      problems.push({ object: id, message: `unknown apiVersion/kind ${o.apiVersion} ${o.kind}` });
      continue;
    }
    try {
      new Model(o).validate();
    } catch (err) {
      problems.push({ object: id, message: err instanceof Error ? err.message : String(err) });
    }
  }
  return problems;
}
