import {
  clusterInstanceEnv,
  instanceEnv,
  nginxVariables,
  redisClusterNodeName,
  STACK,
} from '../../deploy/stack/stack-settings';
import { argAfter, environment, readCompose } from './compose-file';

const PROFILE = 'redis-cluster';

/**
 * docker-compose.yml's Redis Cluster variant (profile `redis-cluster`) must be the default
 * stack with a cluster instead of one Redis: the same instances, variables and nginx, and
 * REDIS_CLUSTER_NODES naming exactly the six nodes that the init container joins.
 */
describe('docker-compose.yml Redis Cluster variant', () => {
  const compose = readCompose();
  const service = (name: string) => compose.service(name);
  const nodes = STACK.redisClusterPorts.map((port, i) => ({
    name: redisClusterNodeName(i),
    port,
  }));

  it('has six nodes on their own ports (never 6379 nor the single Redis port), 3 masters + 3 replicas', () => {
    expect(nodes).toHaveLength(6);
    const ports = new Set([STACK.redisPort, ...STACK.redisClusterPorts]);
    expect(ports.size).toBe(7);
    expect(ports.has(6379)).toBe(false);
    for (const { name, port } of nodes) {
      const node = service(name);
      expect(node.profiles).toEqual([PROFILE]);
      expect(argAfter(node.command, '--port')).toBe(String(port));
      expect(argAfter(node.command, '--cluster-enabled')).toBe('yes');
      expect(argAfter(node.command, '--cluster-announce-hostname')).toBe(name);
      expect(node.healthcheck?.test).toEqual(['CMD', 'redis-cli', '-p', String(port), 'ping']);
    }
  });

  it('joins exactly those nodes with one replica each, once', () => {
    const init = service('redis-cluster-init');
    expect(init.profiles).toEqual([PROFILE]);
    const [shell, flag, script] = init.command ?? [];
    expect([shell, flag]).toEqual(['sh', '-c']);
    const list = nodes.map((n) => `${n.name}:${n.port}`).join(' ');
    expect(script).toContain(
      `redis-cli --cluster create ${list} --cluster-replicas 1 --cluster-yes`,
    );
    // Run again on a formed cluster, it only checks it (create would refuse non-empty nodes).
    expect(script).toContain(`ok || redis-cli --cluster create`);
    expect(init.depends_on).toEqual(
      Object.fromEntries(nodes.map(({ name }) => [name, { condition: 'service_healthy' }])),
    );
  });

  it.each(STACK.instances.map((i) => [i.name, i] as const))(
    'gives %s-cluster the variables of the single-Redis stack, with REDIS_CLUSTER_NODES for REDIS_URL',
    (name, instance) => {
      const clustered = service(`${name}-cluster`);
      const env = environment(clustered);
      const expected = {
        ...clusterInstanceEnv(STACK, instance, {
          bind: '0.0.0.0',
          nodeHost: redisClusterNodeName,
        }),
        TLS_DEV_CERT_DIR: '/certs',
      };
      expect(env).toEqual(expected);
      const { REDIS_URL, ...rest } = environment(service(name));
      const { REDIS_CLUSTER_NODES, ...clusterRest } = env;
      expect(REDIS_URL).toBe(instanceEnv(STACK, instance, { bind: '', redis: 'redis' }).REDIS_URL);
      expect(clusterRest).toEqual(rest);
      expect(REDIS_CLUSTER_NODES.split(',')).toEqual(nodes.map((n) => `${n.name}:${n.port}`));
      expect(clustered.profiles).toEqual([PROFILE]);
      expect(clustered.depends_on?.['redis-cluster-init']).toEqual({
        condition: 'service_completed_successfully',
      });
    },
  );

  it('puts the same nginx in front of the cluster instances, on the same ports', () => {
    const nginx = service('nginx-cluster');
    expect(environment(nginx)).toEqual(
      nginxVariables(STACK, (i) => `${i.name}-cluster`, {
        certFile: '/certs/dev-cert.pem',
        keyFile: '/certs/dev-key.pem',
      }),
    );
    for (const key of ['volumes', 'ports'] as const) {
      expect(service('nginx')[key]?.length).toBeGreaterThan(0);
      expect(nginx[key]).toEqual(service('nginx')[key]);
    }
  });

  it('leaves the default stack out of the profile (`docker compose up` is unchanged)', () => {
    for (const name of ['redis', 'nginx', ...STACK.instances.map((i) => i.name)]) {
      expect(service(name).profiles).toBeUndefined();
    }
  });
});
