import {
  clusterInstanceEnv,
  instanceEnv,
  nginxVariables,
  redisClusterNodeName,
  STACK,
} from '../../deploy/stack/stack-settings';
import { items, read, scalars, section } from './compose-yaml';

const PROFILE = 'redis-cluster';

/**
 * docker-compose.yml's Redis Cluster variant (profile `redis-cluster`) must be the default
 * stack with a cluster instead of one Redis: the same instances, variables and nginx, and
 * REDIS_CLUSTER_NODES naming exactly the six nodes that the init container joins.
 */
describe('docker-compose.yml Redis Cluster variant', () => {
  const compose = read('docker-compose.yml').split('\n');
  const service = (name: string) => section(compose, 'services', name);
  /** A service's lines as one line, indentation dropped (flow lists span several). */
  const flat = (name: string) =>
    service(name)
      .map((l) => l.trim())
      .join(' ');
  const profileOf = (name: string) =>
    scalars(service(name).filter((l) => l.trim().startsWith('profiles:'))).profiles;
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
      const command = flat(name);
      expect(profileOf(name)).toBe(`['${PROFILE}']`);
      expect(command).toContain(`'--port', '${port}',`);
      expect(command).toContain(`'--cluster-enabled', 'yes',`);
      expect(command).toContain(`'--cluster-announce-hostname', '${name}',`);
      expect(command).toContain(`'-p', '${port}', 'ping'`);
    }
  });

  it('joins exactly those nodes with one replica each, once', () => {
    const init = flat('redis-cluster-init');
    expect(profileOf('redis-cluster-init')).toBe(`['${PROFILE}']`);
    const list = nodes.map((n) => `${n.name}:${n.port}`).join(' ');
    expect(init).toContain(`redis-cli --cluster create ${list} --cluster-replicas 1 --cluster-yes`);
    // Run again on a formed cluster, it only checks it (create would refuse non-empty nodes).
    expect(init).toContain(`ok || redis-cli --cluster create`);
    for (const { name } of nodes) {
      expect(scalars(section(service('redis-cluster-init'), 'depends_on', name))).toEqual({
        condition: 'service_healthy',
      });
    }
  });

  it.each(STACK.instances.map((i) => [i.name, i] as const))(
    'gives %s-cluster the variables of the single-Redis stack, with REDIS_CLUSTER_NODES for REDIS_URL',
    (name, instance) => {
      const env = scalars(section(compose, 'services', `${name}-cluster`, 'environment'));
      const expected = {
        ...clusterInstanceEnv(STACK, instance, {
          bind: '0.0.0.0',
          nodeHost: redisClusterNodeName,
        }),
        TLS_DEV_CERT_DIR: '/certs',
      };
      expect(env).toEqual(expected);
      const single = scalars(section(compose, 'services', name, 'environment'));
      const { REDIS_URL, ...rest } = single;
      const { REDIS_CLUSTER_NODES, ...clusterRest } = env;
      expect(REDIS_URL).toBe(instanceEnv(STACK, instance, { bind: '', redis: 'redis' }).REDIS_URL);
      expect(clusterRest).toEqual(rest);
      expect(REDIS_CLUSTER_NODES.split(',')).toEqual(nodes.map((n) => `${n.name}:${n.port}`));
      expect(profileOf(`${name}-cluster`)).toBe(`['${PROFILE}']`);
      expect(
        scalars(
          section(compose, 'services', `${name}-cluster`, 'depends_on', 'redis-cluster-init'),
        ),
      ).toEqual({ condition: 'service_completed_successfully' });
    },
  );

  it('puts the same nginx in front of the cluster instances, on the same ports', () => {
    const env = scalars(section(compose, 'services', 'nginx-cluster', 'environment'));
    expect(env).toEqual(
      nginxVariables(STACK, (i) => `${i.name}-cluster`, {
        certFile: '/certs/dev-cert.pem',
        keyFile: '/certs/dev-key.pem',
      }),
    );
    for (const key of ['volumes', 'ports']) {
      expect(items(section(compose, 'services', 'nginx-cluster', key))).toEqual(
        items(section(compose, 'services', 'nginx', key)),
      );
    }
  });

  it('leaves the default stack out of the profile (`docker compose up` is unchanged)', () => {
    for (const name of ['redis', 'nginx', ...STACK.instances.map((i) => i.name)]) {
      expect(profileOf(name)).toBeUndefined();
    }
  });
});
