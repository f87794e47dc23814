import { DEFAULT_AUDIENCE, DEFAULT_ISSUER, DEMO_HS256_SECRET } from '@app/auth';

/**
 * The demo stack's topology and settings, in one place: `npm run stack` starts exactly
 * this as local processes, and docker-compose.yml declares the same values (a test,
 * test/stack/stack-config.e2e-spec.ts, keeps the two in step).
 */
export interface StackInstance {
  /** Service name in docker-compose.yml. */
  readonly name: string;
  readonly httpPort: number;
  readonly grpcPort: number;
  /** Extra variables for this instance only. */
  readonly env: Readonly<Record<string, string>>;
}

export interface StackSettings {
  /** Not 6379: a Redis already running on the machine must never be touched. */
  readonly redisPort: number;
  /**
   * The Redis Cluster variant (docker-compose profile `redis-cluster`): one port per node,
   * masters and replicas alike (`--cluster-replicas 1`, so half of them are replicas).
   */
  readonly redisClusterPorts: readonly number[];
  readonly nginx: {
    readonly httpPort: number;
    readonly httpsPort: number;
    readonly grpcPort: number;
  };
  readonly instances: readonly StackInstance[];
  /** Variables every instance gets (REDIS_URL, HOST and the ports are added per instance). */
  readonly appEnv: Readonly<Record<string, string>>;
}

/** Browser origins of the stack (nginx), for the HTTP CORS and socket.io allow-lists. */
const STACK_ORIGINS = 'http://localhost:8080,https://localhost:8443';

/** The nginx configuration template both stacks render. */
export const NGINX_TEMPLATE = 'deploy/nginx/order-status.conf.template';

export const STACK: StackSettings = {
  redisPort: 6390,
  redisClusterPorts: [6391, 6392, 6393, 6394, 6395, 6396],
  nginx: { httpPort: 8080, httpsPort: 8443, grpcPort: 9443 },
  instances: [
    // One simulator is enough: both instances deliver every order's events.
    { name: 'app1', httpPort: 3001, grpcPort: 50061, env: { SIMULATOR_ENABLED: 'true' } },
    { name: 'app2', httpPort: 3002, grpcPort: 50062, env: { SIMULATOR_ENABLED: 'false' } },
  ],
  appEnv: {
    // TLS ends at nginx, which talks HTTP/1.1 and cleartext h2 (gRPC) to the instances;
    // their own TLS port is left on a free port, unused (with HTTPS_PORT=-1 the plain
    // port answered nothing at the time of writing: see docs/scale-out.md).
    HTTPS_PORT: '0',
    LOG_LEVEL: 'info',
    REDIS_KEY_PREFIX: 'os',
    SIMULATOR_ORDERS: '20',
    SIMULATOR_RATE: '0.5',
    // Let the demo page's origin through nginx (socket.io checks Origin).
    WS_CORS_ORIGINS: STACK_ORIGINS,
    HTTP_CORS_ORIGINS: STACK_ORIGINS,
    // nginx sends each request to either instance, so both must verify tokens with the
    // same key, issuer and audience. The stack is a demo: the public demo secret, stated
    // here rather than left to each instance's default, so `npm run stack` can print a
    // token both accept. A real deployment sets its own AUTH_HS256_SECRET or a JWKS
    // (NODE_ENV=production refuses the demo secret; docs/security.md).
    AUTH_HS256_SECRET: DEMO_HS256_SECRET,
    // The demo switch, stated because the Docker image sets NODE_ENV=production, which
    // refuses the demo secret (test/stack/compose-start.e2e-spec.ts starts it that way).
    NODE_ENV: 'development',
    AUTH_ISSUER: DEFAULT_ISSUER,
    AUTH_AUDIENCE: DEFAULT_AUDIENCE,
  },
};

/** The environment of one instance; `hosts` says where Redis is and what to bind. */
export function instanceEnv(
  settings: StackSettings,
  instance: StackInstance,
  hosts: { readonly bind: string; readonly redis: string },
): Record<string, string> {
  return {
    ...settings.appEnv,
    ...instance.env,
    HOST: hosts.bind,
    HTTP_PORT: String(instance.httpPort),
    GRPC_PORT: String(instance.grpcPort),
    REDIS_URL: `redis://${hosts.redis}:${settings.redisPort}`,
  };
}

/** The cluster variant's node names in docker-compose.yml (`redis-node-1` ...). */
export function redisClusterNodeName(index: number): string {
  return `redis-node-${index + 1}`;
}

/**
 * The environment of one instance on the Redis Cluster variant: the same as on one Redis,
 * with REDIS_CLUSTER_NODES (every node as a seed) instead of REDIS_URL.
 */
export function clusterInstanceEnv(
  settings: StackSettings,
  instance: StackInstance,
  hosts: { readonly bind: string; readonly nodeHost: (index: number) => string },
): Record<string, string> {
  const { REDIS_URL: _single, ...env } = instanceEnv(settings, instance, {
    bind: hosts.bind,
    redis: '',
  });
  return {
    ...env,
    REDIS_CLUSTER_NODES: settings.redisClusterPorts
      .map((port, i) => `${hosts.nodeHost(i)}:${port}`)
      .join(','),
  };
}

/**
 * The variables the nginx template uses; `hostOf` names an instance's address.
 * `listenHost`: the one address nginx listens on (the template's `listen
 * ${NGINX_HTTP_PORT}` takes a port or an address and port); every address when absent,
 * as in docker-compose.
 */
export function nginxVariables(
  settings: StackSettings,
  hostOf: (instance: StackInstance) => string,
  tls: { readonly certFile: string; readonly keyFile: string },
  listenHost?: string,
): Record<string, string> {
  const [one, two] = settings.instances;
  const listen = (port: number) =>
    listenHost === undefined ? String(port) : `${listenHost}:${port}`;
  return {
    NGINX_HTTP_PORT: listen(settings.nginx.httpPort),
    NGINX_HTTPS_PORT: listen(settings.nginx.httpsPort),
    NGINX_GRPC_PORT: listen(settings.nginx.grpcPort),
    APP1_HTTP: `${hostOf(one)}:${one.httpPort}`,
    APP2_HTTP: `${hostOf(two)}:${two.httpPort}`,
    APP1_GRPC: `${hostOf(one)}:${one.grpcPort}`,
    APP2_GRPC: `${hostOf(two)}:${two.grpcPort}`,
    TLS_CERT_FILE: tls.certFile,
    TLS_KEY_FILE: tls.keyFile,
  };
}

/** Replaces `${NAME}` for the given names only (nginx's own `$vars` stay), like envsubst. */
export function renderTemplate(template: string, vars: Readonly<Record<string, string>>): string {
  return template.replace(/\$\{([A-Z0-9_]+)\}/g, (_whole, name: string) => {
    const value = vars[name];
    if (value === undefined) throw new Error(`nginx template variable ${name} has no value`);
    return value;
  });
}
