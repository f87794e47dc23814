import { PATH_METADATA } from '@nestjs/common/constants';
import { loadSync } from '@grpc/proto-loader';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { posix } from 'node:path';
import { ORDER_STATUS_PROTO_PATH } from '@app/contracts';
import { loadConfig, type AppConfig } from '../../apps/order-status/src/config/app-config';
import { ConfigError } from '../../apps/order-status/src/config/env-schema';
import { HealthController } from '../../apps/order-status/src/ops/health.controller';
import { SHUTDOWN_EXIT_MARGIN_MS } from '../../apps/order-status/src/ops/graceful-shutdown';
import { GrpcDiscovery } from '../../apps/order-status/src/transports/grpc/grpc-discovery';
import { STACK } from '../../deploy/stack/stack-settings';
import { environment, readCompose } from '../stack/compose-file';
import { portNumber, Rendered, type Container } from './rendered';

/** A value the Secret the production overlay expects would hold (created by the user). */
const USER_SECRET = {
  AUTH_HS256_SECRET: 'a-production-secret-of-at-least-32-bytes-0123456789',
  REDIS_URL: 'rediss://redis.example.internal:6380',
};

/** `/health/live` and `/health/ready`, from the controller's own route metadata. */
function healthRoute(method: 'live' | 'ready'): string {
  const base = Reflect.getMetadata(PATH_METADATA, HealthController) as string;
  const path = Reflect.getMetadata(PATH_METADATA, HealthController.prototype[method]) as string;
  return posix.join('/', base, path);
}

interface IngressSpec {
  readonly spec: {
    readonly rules: readonly {
      readonly http: {
        readonly paths: readonly {
          readonly path: string;
          readonly backend: { service: { name: string; port: { name: string } } };
        }[];
      };
    }[];
  };
  readonly metadata: { annotations?: Record<string, string> };
}

interface ServiceSpec {
  readonly spec: { readonly ports: readonly { name: string; targetPort: string }[] };
}

/**
 * The manifests in deploy/k8s agree with the service: probes on its health routes and
 * ports, a grace period that covers its drain, Ingress timeouts above its stream ages,
 * settings it accepts, and the demo's settings equal to docker-compose.yml's.
 */
describe.each(['demo', 'production'])('deploy/k8s/overlays/%s', (overlay) => {
  const rendered = new Rendered(overlay);
  const extra = overlay === 'production' ? USER_SECRET : {};
  const pods = rendered.servicePods();
  const config = (c: Container): AppConfig => loadConfig(rendered.env(c, extra));

  it('runs the service with settings it accepts', () => {
    expect(pods.length).toBeGreaterThan(0);
    for (const { container } of pods) expect(() => config(container)).not.toThrow();
  });

  it.each([
    ['startupProbe', 'live'],
    ['readinessProbe', 'ready'],
    ['livenessProbe', 'live'],
  ] as const)('has the %s on /health/%s and the HTTP port', (probe, route) => {
    for (const { container } of pods) {
      const get = container[probe]?.httpGet;
      if (probe === 'startupProbe' && get === undefined) continue;
      expect(get?.path).toBe(healthRoute(route));
      expect(portNumber(container, get?.port ?? -1)).toBe(config(container).httpPort);
    }
  });

  it('exposes the HTTP and gRPC ports the service listens on, and the Services reach them', () => {
    const { container } = pods.find((p) => p.name === 'order-status')!;
    expect(portNumber(container, 'http')).toBe(config(container).httpPort);
    expect(portNumber(container, 'grpc')).toBe(config(container).grpcPort);
    for (const name of ['order-status-http', 'order-status-grpc']) {
      for (const port of rendered.get<ServiceSpec>('Service', name).spec.ports) {
        expect(portNumber(container, port.targetPort)).toBeDefined();
      }
    }
  });

  it('gives every pod time for the preStop pause, the drain and the exit margin', () => {
    const short = pods.flatMap(({ name, pod, container }) => {
      const preStopMs = (container.lifecycle?.preStop?.sleep?.seconds ?? 0) * 1000;
      const needMs = preStopMs + config(container).shutdown.drainMs + SHUTDOWN_EXIT_MARGIN_MS;
      // Kubernetes' default when unset is 30 s.
      const graceMs = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
      return graceMs >= needMs ? [] : [`${name}: ${graceMs} ms < ${needMs} ms`];
    });
    expect(short).toEqual([]);
  });

  it('caps the heap well under every pod memory limit', () => {
    const MIB = { Mi: 1, Gi: 1024 } as const;
    const over = pods.flatMap(({ name, container }) => {
      const heap = /--max-old-space-size=(\d+)/.exec(rendered.env(container).NODE_OPTIONS ?? '');
      const limit = /^(\d+)(Mi|Gi)$/.exec(container.resources?.limits?.memory ?? '');
      const heapMiB = Number(heap?.[1]);
      const limitMiB = Number(limit?.[1]) * MIB[(limit?.[2] ?? 'Mi') as keyof typeof MIB];
      // V8's heap is not all of RSS: native buffers, sockets and code need the rest.
      return heapMiB <= 0.75 * limitMiB
        ? []
        : [`${name}: heap ${heapMiB} MiB, limit ${limitMiB} MiB`];
    });
    expect(over).toEqual([]);
  });

  it('keeps every streaming Ingress open longer than a stream, a long-poll and a heartbeat', () => {
    const c = config(pods.find((p) => p.name === 'order-status')!.container);
    // A stream that never ends (STREAM_MAX_AGE_MS=0) would outlive any proxy timeout.
    expect(c.bus.maxStreamAgeMs).toBeGreaterThan(0);
    const longestMs = Math.max(
      c.bus.maxStreamAgeMs + c.bus.maxStreamAgeJitterMs,
      c.longPoll.maxWaitS * 1000,
      c.sse.heartbeatMs,
      c.ws.pingIntervalMs + c.ws.pingTimeoutMs,
    );
    const short = rendered.all<IngressSpec>('Ingress').flatMap((ingress) =>
      ['proxy-read-timeout', 'proxy-send-timeout'].flatMap((key) => {
        const value = ingress.metadata.annotations?.[`nginx.ingress.kubernetes.io/${key}`];
        // Unset or not a number fails too (NaN is never greater).
        return Number(value) * 1000 > longestMs ? [] : [`${ingress.metadata.name} ${key}=${value}`];
      }),
    );
    expect(short).toEqual([]);
    const http = rendered.get<IngressSpec>('Ingress', 'order-status-http').metadata.annotations;
    expect(http?.['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
    const grpc = rendered.get<IngressSpec>('Ingress', 'order-status-grpc').metadata.annotations;
    expect(grpc?.['nginx.ingress.kubernetes.io/backend-protocol']).toBe('GRPC');
  });

  it('routes every gRPC service the server registers, and nothing else, to the gRPC port', () => {
    const registered = new Set<string>();
    const collect = (def: ServiceDefinition) => {
      for (const method of Object.values(def)) registered.add(method.path.split('/')[1]);
    };
    const pkg = loadSync(ORDER_STATUS_PROTO_PATH);
    for (const def of Object.values(pkg)) {
      if (!('format' in def)) collect(def);
    }
    new GrpcDiscovery().register(pkg, { addService: collect });
    const paths = rendered
      .get<IngressSpec>('Ingress', 'order-status-grpc')
      .spec.rules.flatMap((r) => r.http.paths);
    expect(paths.map((p) => p.path.slice(1)).sort()).toEqual([...registered].sort());
    for (const p of paths)
      expect(p.backend.service).toEqual({ name: 'order-status-grpc', port: { name: 'grpc' } });
  });
});

describe('the production overlay', () => {
  it('refuses to start without the Secret the user creates', () => {
    const rendered = new Rendered('production');
    expect(rendered.all('Secret')).toEqual([]);
    const { container } = rendered.servicePods()[0];
    expect(container.envFrom).toContainEqual({ secretRef: { name: 'order-status-secrets' } });
    expect(() => loadConfig(rendered.env(container))).toThrow(ConfigError);
    expect(rendered.env(container, USER_SECRET).NODE_ENV).toBe('production');
  });
});

describe('the demo overlay and docker-compose.yml', () => {
  it('share the settings the demo stack gives its instances', () => {
    const rendered = new Rendered('demo');
    const env = rendered.env(rendered.servicePods()[0].container);
    // What differs by design: addresses, ports, browser origins and who runs the simulator.
    const own =
      /^(HOST|HTTP_PORT|GRPC_PORT|HTTPS_PORT|REDIS_URL|TLS_DEV_CERT_DIR|.*_CORS_ORIGINS|SIMULATOR_ENABLED)$/;
    const app1 = environment(readCompose().service('app1'));
    const shared = Object.keys(app1).filter((key) => !own.test(key));
    expect(Object.fromEntries(shared.map((key) => [key, env[key]]))).toEqual(
      Object.fromEntries(shared.map((key) => [key, app1[key]])),
    );
    expect(new URL(env.REDIS_URL).port).toBe(String(STACK.redisPort));
    const simulators = rendered
      .servicePods()
      .filter(({ container }) => rendered.env(container).SIMULATOR_ENABLED === 'true');
    expect(simulators.map((s) => s.name)).toEqual(['order-status-simulator']);
  });
});
