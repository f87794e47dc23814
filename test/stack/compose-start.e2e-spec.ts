import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnService, type ServiceProcess } from '../ops/service-process';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait-for';
import { environment, readCompose } from './compose-file';
import { dockerfileStageEnv } from './dockerfile';

/**
 * What `docker compose up` runs, without Docker: the built service with the environment a
 * container of the stack gets (the runtime stage's ENV lines, then the service's
 * `environment:` over them, as Compose does), changed only where the machine differs:
 * loopback and free ports instead of the container's, the test's Redis instead of the
 * `redis` service, a scratch certificate folder instead of the volume.
 */
describe('docker-compose.yml: a stack instance starts with the environment Compose gives it', () => {
  let redis: RedisServer;
  let certDir: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    redis = await RedisServer.launch();
    certDir = mkdtempSync(join(tmpdir(), 'order-status-compose-certs-'));
  });

  afterEach(async () => {
    service?.kill();
    await service?.exited;
    service = undefined;
  });

  afterAll(async () => {
    await redis.shutdown();
    rmSync(certDir, { recursive: true, force: true });
  });

  it.each(['app1', 'app2'])('%s becomes healthy', async (name) => {
    const svc = readCompose().service(name);
    const healthUrl = /fetch\('http:\/\/127\.0\.0\.1:\d+(\/[^']*)'\)/.exec(
      svc.healthcheck?.test?.join(' ') ?? '',
    );
    expect(healthUrl).not.toBeNull();
    service = await spawnService({
      ...dockerfileStageEnv('runtime'),
      ...environment(svc),
      HOST: '127.0.0.1',
      HTTP_PORT: '0',
      HTTPS_PORT: '0',
      GRPC_PORT: '0',
      REDIS_URL: redis.url,
      TLS_DEV_CERT_DIR: certDir,
      // The test harness's own key file must not stand in for what the stack configures.
      AUTH_JWKS_FILE: '',
    });
    const ready = service;
    await waitFor(
      async () => (await fetch(`${ready.httpUrl}${healthUrl?.[1]}`)).ok,
      `${name}'s healthcheck route answers 200`,
      20_000,
      100,
    );
    // What the readiness probe of an orchestrator asks.
    expect((await fetch(`${ready.httpUrl}/health/ready`)).status).toBe(200);
  });
});
