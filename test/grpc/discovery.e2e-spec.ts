import { dirname, join } from 'node:path';
import {
  credentials,
  loadPackageDefinition,
  type ClientDuplexStream,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as HEALTH_PROTO_PATH } from 'grpc-health-check';
import { startTestApp, type TestApp } from '../support/test-app';
import { once } from '../support/wait-for';

const SERVICE = 'orderstatus.v1.OrderStatusService';

/** The v1 reflection proto bundled with @grpc/reflection (what grpcurl speaks). */
const REFLECTION_PROTO_PATH = join(
  dirname(require.resolve('@grpc/reflection/package.json')),
  'build/proto/grpc/reflection/v1/reflection.proto',
);

interface HealthClient {
  check(
    req: { service: string },
    cb: (err: ServiceError | null, res?: { status: string }) => void,
  ): void;
  close(): void;
}

interface ReflectionResponse {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}

interface ReflectionClient {
  serverReflectionInfo(): ClientDuplexStream<Record<string, string>, ReflectionResponse>;
  close(): void;
}

function clientFor<T>(protoPath: string, service: string, address: string): T {
  const pkg = loadPackageDefinition(
    loadSync(protoPath, { keepCase: false, enums: String, longs: Number, defaults: true }),
  );
  const Ctor = service.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], pkg);
  return new (Ctor as ServiceClientConstructor)(address, credentials.createInsecure()) as T;
}

describe('gRPC health and reflection', () => {
  let app: TestApp;
  const closers: (() => void)[] = [];

  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) close();
    await app.close();
  });

  it('grpc.health.v1.Health reports SERVING for the server and for OrderStatusService', async () => {
    const health = clientFor<HealthClient>(
      HEALTH_PROTO_PATH,
      'grpc.health.v1.Health',
      app.grpcAddress,
    );
    closers.push(() => health.close());
    const check = (service: string) =>
      new Promise<{ status: string }>((resolve, reject) =>
        health.check({ service }, (err, res) => (err ? reject(err) : resolve(res!))),
      );

    expect(await check('')).toEqual({ status: 'SERVING' });
    expect(await check(SERVICE)).toEqual({ status: 'SERVING' });
    // The protocol says: an unknown service name is NOT_FOUND (grpc/doc/health-checking.md).
    await expect(check('no.such.Service')).rejects.toMatchObject({ code: 5 });
  });

  it('server reflection lists and describes OrderStatusService (what grpcurl uses)', async () => {
    const reflection = clientFor<ReflectionClient>(
      REFLECTION_PROTO_PATH,
      'grpc.reflection.v1.ServerReflection',
      app.grpcAddress,
    );
    closers.push(() => reflection.close());
    const call = reflection.serverReflectionInfo();
    const ask = async (req: Record<string, string>) => {
      const answer = once<ReflectionResponse>(call, 'data');
      call.write(req);
      return answer;
    };

    const listed = await ask({ listServices: '*' });
    const names = listed.listServicesResponse?.service.map((s) => s.name) ?? [];
    expect(names).toEqual(expect.arrayContaining([SERVICE, 'grpc.health.v1.Health']));

    const described = await ask({ fileContainingSymbol: SERVICE });
    const files = described.fileDescriptorResponse?.fileDescriptorProto ?? [];
    expect(files.length).toBeGreaterThan(0);
    // A serialized FileDescriptorProto: the service name appears in it verbatim.
    expect(Buffer.concat(files).toString('latin1')).toContain('OrderStatusService');
    call.end();
    await once(call, 'status');
  });
});
