import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  credentials,
  loadPackageDefinition,
  Metadata,
  status as GrpcStatus,
  type Client,
  type ClientReadableStream,
  type ChannelCredentials,
  type ClientDuplexStream,
  type ServiceClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as HEALTH_PROTO_PATH } from 'grpc-health-check';
import {
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_PROTO_PATH,
  ORDER_STATUS_SERVICE_NAME,
} from '@app/contracts/proto-path';
import { defaultUrl } from './options';

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

/** The v1 reflection proto that @grpc/reflection (the service's side) ships. */
const REFLECTION_PROTO_PATH = join(
  dirname(require.resolve('@grpc/reflection/package.json')),
  'build/proto/grpc/reflection/v1/reflection.proto',
);

/** JSON as grpcurl writes and reads it: the proto's field names, enum names. */
const LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

export const GRPC_USAGE = `usage: npm run -s grpc -- [--url HOST:PORT] [--cacert PEM] list | health [SERVICE] | METHOD [JSON]

The gRPC calls of the docs without grpcurl, on @grpc/grpc-js: server reflection's service
list, the standard health check, or a method of ${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}
with a JSON request in the proto's field names (a stream prints one JSON line per message).
The token comes from ORDER_STATUS_TOKEN; --url defaults to 127.0.0.1 on GRPC_PORT (50051);
--cacert connects with TLS, trusting that certificate (the demo stack's nginx).

  npm run -s grpc -- list
  npm run -s grpc -- health ${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}
  npm run -s grpc -- Subscribe '{"order_id":"order-1","after_seq":0}'
  npm run -s grpc -- GetOrder '{"order_id":"order-1"}'
  npm run -s grpc -- GetPayloadStream '{"order_id":"stream-1"}'   # a STREAM_DOMAIN=payload service

Subscribe carries any domain's events, each under its own arm (\`event\` and \`tracking\` for
an order, \`payload\` for the payload domain); the snapshot call is the domain's own.`;

type Callback = (err: ServiceError | null, res?: unknown) => void;
type Method = (req: unknown, md: Metadata, cb?: Callback) => ClientReadableStream<unknown>;

interface Target {
  readonly address: string;
  readonly creds: ChannelCredentials;
}

function client(protoPath: string, service: string, target: Target): Client {
  const pkg = loadPackageDefinition(loadSync(protoPath, LOADER_OPTIONS));
  const Ctor = service.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], pkg);
  return new (Ctor as ServiceClientConstructor)(target.address, target.creds);
}

function unary(c: Client, method: string, req: unknown, md = new Metadata()): Promise<unknown> {
  const fn = (c as unknown as Record<string, Method>)[method].bind(c);
  return new Promise((resolve, reject) => {
    fn(req, md, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

interface ReflectionResponse {
  readonly list_services_response?: { readonly service: readonly { readonly name: string }[] };
}

async function list(target: Target): Promise<void> {
  const c = client(REFLECTION_PROTO_PATH, 'grpc.reflection.v1.ServerReflection', target);
  const call = (
    c as unknown as {
      serverReflectionInfo(): ClientDuplexStream<{ list_services: string }, ReflectionResponse>;
    }
  ).serverReflectionInfo();
  const answer = new Promise<ReflectionResponse>((resolve, reject) => {
    call.once('data', resolve);
    call.once('error', reject);
  });
  call.write({ list_services: '*' });
  try {
    const res = await answer;
    for (const s of res.list_services_response?.service ?? []) process.stdout.write(`${s.name}\n`);
  } finally {
    call.end();
    c.close();
  }
}

async function health(target: Target, service: string): Promise<void> {
  const c = client(HEALTH_PROTO_PATH, 'grpc.health.v1.Health', target);
  try {
    process.stdout.write(`${JSON.stringify(await unary(c, 'Check', { service }))}\n`);
  } finally {
    c.close();
  }
}

async function call(target: Target, method: string, json: string): Promise<void> {
  const service = `${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}`;
  const c = client(ORDER_STATUS_PROTO_PATH, service, target);
  const definition = (c.constructor as ServiceClientConstructor).service[method];
  if (definition === undefined) {
    c.close();
    throw new TypeError(`${service} has no method ${method}`);
  }
  const req = JSON.parse(json) as unknown;
  const md = new Metadata();
  const token = process.env.ORDER_STATUS_TOKEN;
  if (token) md.set('authorization', `Bearer ${token}`);
  const print = (m: unknown) => process.stdout.write(`${JSON.stringify(m)}\n`);
  try {
    if (!definition.responseStream) {
      print(await unary(c, method, req, md));
      return;
    }
    const stream = (c as unknown as Record<string, Method>)[method].call(c, req, md);
    process.once('SIGINT', () => stream.cancel());
    await new Promise<void>((resolve, reject) => {
      stream.on('data', print);
      stream.on('error', (err: ServiceError) =>
        err.code === GrpcStatus.CANCELLED ? resolve() : reject(err),
      );
      stream.on('end', resolve);
    });
  } finally {
    c.close();
  }
}

async function main(): Promise<number> {
  let values: { url?: string; cacert?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: { url: { type: 'string', short: 'u' }, cacert: { type: 'string' } },
    }));
    if (positionals.length === 0 || positionals.length > 2)
      throw new Error('a command is required');
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${GRPC_USAGE}\n`);
    return EXIT_USAGE;
  }
  const address = values.url ?? defaultUrl('grpc', process.env);
  const [command, arg] = positionals;
  try {
    const creds =
      values.cacert === undefined
        ? credentials.createInsecure()
        : credentials.createSsl(readFileSync(values.cacert));
    const target = { address, creds };
    if (command === 'list') await list(target);
    else if (command === 'health') await health(target, arg ?? '');
    else await call(target, command, arg ?? '{}');
    return EXIT_OK;
  } catch (err) {
    const e = err as Partial<ServiceError> & Error;
    const code = e.code !== undefined ? `${GrpcStatus[e.code]}: ` : '';
    process.stderr.write(`${address}: ${code}${e.details ?? e.message}\n`);
    return err instanceof TypeError || err instanceof SyntaxError ? EXIT_USAGE : EXIT_FAILED;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
