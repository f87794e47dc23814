/**
 * `npm run stack`: the docker-compose topology without Docker. Starts redis-server, two
 * service instances and nginx on loopback, prints where to connect, and stops it all on
 * Ctrl-C. `--free-ports` picks free ports instead of the fixed ones.
 */
import { demoToken } from '../../apps/order-status/src/auth/demo-banner';
import { loadConfig } from '../../apps/order-status/src/config/app-config';
import { startLocalStack } from './local-stack';

async function main(): Promise<void> {
  const stack = await startLocalStack({ freePorts: process.argv.includes('--free-ports') });
  const { urls, settings, instances } = stack;
  // The instances share one auth configuration (stack-settings.ts): a token for the first
  // is good on both, whichever one nginx picks.
  const token = await demoToken(loadConfig(instances[0].env).auth);
  const bearer = (header: string) => (token === undefined ? '' : ` -H "${header}: Bearer $TOKEN"`);
  const lines = [
    '',
    'order-status stack is up (Redis, two instances, nginx):',
    `  ${urls.https}/   demo page, REST, SSE, long-poll, socket.io (TLS, HTTP/2 and HTTP/1.1)`,
    `  ${urls.http}/    the same over plain HTTP/1.1`,
    `  ${urls.grpc}           gRPC through nginx (TLS; trust .certs/dev-cert.pem)`,
    ...instances.map(
      (i) => `  ${i.name}: http://127.0.0.1:${i.httpPort}  gRPC 127.0.0.1:${i.grpcPort}`,
    ),
    `  Redis: ${urls.redis}`,
    '',
    ...(token === undefined
      ? ['Every /v1 route, socket.io and gRPC call needs a token from your identity provider:']
      : [
          'DEMO MODE: tokens are signed with the public demo secret (never use it in production).',
          'Every /v1 route, socket.io and gRPC call needs a token; this one reads any order:',
          `  export TOKEN=${token}`,
        ]),
    'Try:',
    `  curl -N${bearer('Authorization')} ${urls.http}/v1/orders/order-1/stream`,
    `  curl --cacert .certs/dev-cert.pem --http2 -N${bearer('Authorization')} ${urls.https}/v1/orders/order-1/stream`,
    `  ORDER_STATUS_TOKEN=$TOKEN npm run -s grpc -- --cacert .certs/dev-cert.pem --url ${urls.grpc} Subscribe '{"order_id":"order-1"}'`,
    `  ORDER_STATUS_TOKEN=$TOKEN npm run watch -- order-1 --url ${urls.http}`,
    `Ctrl-C stops everything. (nginx config: rendered from deploy/nginx/order-status.conf.template; ports ${settings.nginx.httpPort}/${settings.nginx.httpsPort}/${settings.nginx.grpcPort})`,
    '',
  ];
  process.stdout.write(lines.join('\n'));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping the stack\n`);
    stack.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `stack failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
