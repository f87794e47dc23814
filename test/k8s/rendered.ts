import { join } from 'node:path';
import { build, type K8sObject } from '../../deploy/k8s/render/kustomize';

export const OVERLAYS = join(__dirname, '..', '..', 'deploy', 'k8s', 'overlays');

/** The parts of a container the specs read (Kubernetes API, core/v1 Container). */
export interface Container {
  readonly name: string;
  readonly image: string;
  readonly ports?: readonly { name?: string; containerPort: number }[];
  readonly envFrom?: readonly { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  readonly env?: readonly { name: string; value?: string }[];
  readonly startupProbe?: Probe;
  readonly readinessProbe?: Probe;
  readonly livenessProbe?: Probe;
  readonly lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  readonly resources?: { limits?: { memory?: string } };
}

export interface Probe {
  readonly httpGet?: { path: string; port: number | string };
}

interface Data {
  readonly data?: Record<string, string>;
}

export interface PodSpec {
  readonly terminationGracePeriodSeconds?: number;
  readonly containers: readonly Container[];
}

/** One overlay, rendered, with typed accessors for what the specs compare. */
export class Rendered {
  readonly objects: K8sObject[];

  constructor(readonly overlay: string) {
    this.objects = build(join(OVERLAYS, overlay));
  }

  /** The named object; `T` is the shape of the fields the caller reads. */
  get<T = object>(kind: string, name: string): K8sObject & T {
    const found = this.objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (found === undefined) throw new Error(`${this.overlay}: no ${kind} ${name}`);
    return found as K8sObject & T;
  }

  all<T = object>(kind: string): (K8sObject & T)[] {
    return this.objects.filter((o) => o.kind === kind) as (K8sObject & T)[];
  }

  /** Deployments that run the service's image (the demo's simulator as well). */
  servicePods(): { name: string; pod: PodSpec; container: Container }[] {
    return this.all<{ spec: { template: { spec: PodSpec } } }>('Deployment').flatMap((d) =>
      d.spec.template.spec.containers
        .filter((c) => /(^|\/)order-status(:|$)/.test(c.image))
        .map((container) => ({ name: d.metadata.name, pod: d.spec.template.spec, container })),
    );
  }

  /**
   * The environment a container's process sees: envFrom in order, then env (Kubernetes
   * gives `env` precedence); a Secret's data decoded. Extra supplies what a Secret the
   * user creates would hold.
   */
  env(container: Container, extra: Record<string, string> = {}): Record<string, string> {
    const env: Record<string, string> = {};
    for (const from of container.envFrom ?? []) {
      if (from.configMapRef) {
        Object.assign(env, this.get<Data>('ConfigMap', from.configMapRef.name).data);
      }
      const secret = from.secretRef
        ? this.objects.find((o) => o.kind === 'Secret' && o.metadata.name === from.secretRef?.name)
        : undefined;
      for (const [key, value] of Object.entries((secret as Data | undefined)?.data ?? {})) {
        env[key] = Buffer.from(value, 'base64').toString();
      }
    }
    for (const { name, value } of container.env ?? []) env[name] = value ?? '';
    return { ...env, ...extra };
  }
}

/** The container port a probe or Service names (by name or number). */
export function portNumber(container: Container, port: number | string): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}
