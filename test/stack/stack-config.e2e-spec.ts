import {
  instanceEnv,
  NGINX_TEMPLATE,
  nginxVariables,
  renderTemplate,
  STACK,
} from '../../deploy/stack/stack-settings';
import { argAfter, environment, read, readCompose, withDefaults } from './compose-file';
import { dockerfileArgDefault } from './dockerfile';

/** docker-compose.yml and `npm run stack` must describe the same stack. */
describe('docker-compose.yml and the local stack', () => {
  const compose = readCompose();

  it('run Redis on the same port', () => {
    const redis = compose.service('redis');
    const port = String(STACK.redisPort);
    expect(argAfter(redis.command, '--port')).toBe(port);
    expect(redis.healthcheck?.test).toEqual(['CMD', 'redis-cli', '-p', port, 'ping']);
  });

  it.each(STACK.instances.map((i) => [i.name, i] as const))(
    'give %s the same variables and ports',
    (name, instance) => {
      expect(environment(compose.service(name))).toEqual({
        ...instanceEnv(STACK, instance, { bind: '0.0.0.0', redis: 'redis' }),
        TLS_DEV_CERT_DIR: '/certs',
      });
    },
  );

  it('render the same nginx template with the same variables, and publish its ports', () => {
    const nginx = compose.service('nginx');
    expect(environment(nginx)).toEqual(
      nginxVariables(STACK, (i) => i.name, {
        certFile: '/certs/dev-cert.pem',
        keyFile: '/certs/dev-key.pem',
      }),
    );
    expect(nginx.volumes).toContain(
      `./${NGINX_TEMPLATE}:/etc/nginx/templates/order-status.conf.template:ro`,
    );
    const { httpPort, httpsPort, grpcPort } = STACK.nginx;
    // Published on loopback by default: the demo secret is public.
    expect(nginx.ports?.map(withDefaults)).toEqual(
      [httpPort, httpsPort, grpcPort].map((p) => `127.0.0.1:${p}:${p}`),
    );
  });

  it('leave no template variable without a value', () => {
    const vars = nginxVariables(STACK, (i) => i.name, { certFile: 'c', keyFile: 'k' });
    const rendered = renderTemplate(read(NGINX_TEMPLATE), vars);
    expect(rendered).not.toMatch(/\$\{/);
    expect(rendered).toContain('grpc_pass grpc://order_status_grpc;');
  });

  it("build the instances from the Dockerfile's default Node image unless told otherwise", () => {
    expect(withDefaults(compose.service('app1').build?.args?.NODE_IMAGE ?? '')).toBe(
      dockerfileArgDefault('NODE_IMAGE'),
    );
  });

  it('are what `npm run stack` starts', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts.stack).toContain('deploy/stack/main.ts');
  });
});
