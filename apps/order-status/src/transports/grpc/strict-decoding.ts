import type { MethodDefinition, PackageDefinition } from '@grpc/proto-loader';
import { throwError, type Observable } from 'rxjs';
import {
  ErrorCode,
  GatewayError,
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_SERVICE_NAME,
} from '@app/contracts';
import { toGrpcStatus } from './grpc-status';

/** What a request deserializer answers for bytes that are not a valid message. */
const MALFORMED_REQUEST = Object.freeze({ malformed: true });

type Deserialize = (bytes: Buffer) => unknown;

/**
 * Makes the service's request deserializers strict, and their failures a value the
 * handler wrapper below answers with INVALID_ARGUMENT.
 *
 * protobufjs reads a Buffer with its BufferReader, whose string reader clamps a length
 * that runs past the end (`0a ff ff 03 61 62 63` decodes as order_id "abc"); its plain
 * Reader, which it picks for a Uint8Array that is not a Buffer, bounds-checks every
 * length. A deserializer that throws makes grpc-js answer INTERNAL, not the client's
 * fault as gRPC's status codes say (doc/statuscodes.md: INVALID_ARGUMENT), so a failure
 * is returned as MALFORMED_REQUEST instead.
 */
export function decodeRequestsStrictly(pkg: PackageDefinition): void {
  const service = pkg[`${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}`] as
    Record<string, MethodDefinition<object, object>> | undefined;
  if (service === undefined) throw new TypeError('the proto has no OrderStatusService');
  for (const method of Object.values(service)) {
    const original = method.requestDeserialize as Deserialize;
    method.requestDeserialize = (bytes: Buffer): object => {
      try {
        return original(
          new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) as Buffer,
        ) as object;
      } catch {
        return MALFORMED_REQUEST;
      }
    };
  }
}

const REFUSAL = new GatewayError(
  ErrorCode.InvalidArgument,
  'the request is not a valid protobuf message',
);

/**
 * A Nest method handler that refuses a request the strict deserializer could not decode,
 * before the handler chain (authentication included) runs: the call ends with
 * INVALID_ARGUMENT through the same path as a handler's own error.
 */
export function refusingMalformed<H extends (request: unknown, ...rest: never[]) => unknown>(
  handler: H,
): H {
  return ((request: unknown, ...rest: never[]): unknown =>
    request === MALFORMED_REQUEST ? malformed() : handler(request, ...rest)) as H;
}

function malformed(): Observable<never> {
  return throwError(() => toGrpcStatus(REFUSAL));
}
