import {
  Client,
  credentials,
  Metadata,
  status as GrpcCode,
  type ServiceError,
  type StatusObject,
} from '@grpc/grpc-js';
import { bearer } from '../support/auth';
import { startTestApp, type TestApp } from '../support/test-app';
import { once } from '../support/wait-for';

const METHOD = '/orderstatus.v1.OrderStatusService/';
const identity = (bytes: Buffer): Buffer => bytes;

/**
 * Request bytes that are not a valid protobuf message are INVALID_ARGUMENT on every
 * method (not INTERNAL, and not a message made of whatever could be read): a length that
 * runs past the end of the message, a truncated varint, a wire type that does not exist.
 */
describe('gRPC requests that are not valid protobuf', () => {
  let app: TestApp;
  let client: Client;
  const metadata = () => {
    const m = new Metadata();
    m.set('authorization', bearer().authorization);
    return m;
  };

  beforeAll(async () => {
    app = await startTestApp();
    // The order the overrun message would name if its length were clamped to the bytes there.
    await app.createOrder('abc');
    client = new Client(app.grpcAddress, credentials.createInsecure());
  });
  afterAll(async () => {
    client.close();
    await app.close();
  });

  function unary(method: string, bytes: Buffer): Promise<ServiceError | null> {
    return new Promise((resolve) => {
      client.makeUnaryRequest(METHOD + method, identity, identity, bytes, metadata(), (err) =>
        resolve(err),
      );
    });
  }

  async function stream(bytes: Buffer): Promise<StatusObject> {
    const call = client.makeServerStreamRequest(
      `${METHOD}Subscribe`,
      identity,
      identity,
      bytes,
      metadata(),
    );
    call.on('data', () => undefined);
    call.on('error', () => undefined);
    return once<StatusObject>(call, 'status', 5_000);
  }

  const messages: [string, string][] = [
    // Field 1 (order_id), length 65,535, then three bytes: "abc" if the length is clamped.
    ['a length past the end', '0affff03616263'],
    ['a truncated varint', '08ff'],
    ['wire type 7', '0f'],
    ['plain garbage', 'ffffffffffffffffffff'],
  ];

  it.each(messages)('%s is INVALID_ARGUMENT on the unary methods', async (_what, hex) => {
    for (const method of ['GetOrder', 'UpdateStatus', 'UpdateTracking']) {
      const err = await unary(method, Buffer.from(hex, 'hex'));
      expect([method, err?.code]).toEqual([method, GrpcCode.INVALID_ARGUMENT]);
    }
  });

  it.each(messages)('%s is INVALID_ARGUMENT on Subscribe', async (_what, hex) => {
    const status = await stream(Buffer.from(hex, 'hex'));
    expect(status.code).toBe(GrpcCode.INVALID_ARGUMENT);
  });

  it('a nested message whose length runs past the end is INVALID_ARGUMENT', async () => {
    // UpdateTracking: order_id "abc", then location (field 2) of length 127 with one byte.
    const err = await unary('UpdateTracking', Buffer.from('0a03616263127f09', 'hex'));
    expect(err?.code).toBe(GrpcCode.INVALID_ARGUMENT);
  });

  it('a well-formed message still works', async () => {
    const err = await unary('GetOrder', Buffer.from('0a03616263', 'hex'));
    expect(err).toBeNull();
  });
});
