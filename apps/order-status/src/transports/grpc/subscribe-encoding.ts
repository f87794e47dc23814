import type { MethodDefinition, PackageDefinition } from '@grpc/proto-loader';
import {
  EncodeOnce,
  eventOf,
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_SERVICE_NAME,
  streamItemToProto,
  type ProtoSubscribeResponse,
  type StreamItem,
} from '@app/contracts';

const PRE_ENCODED = Symbol('SubscribeResponse bytes');

/** A SubscribeResponse already serialized: the method's serializer passes it through. */
export interface PreEncodedResponse {
  readonly [PRE_ENCODED]: Buffer;
}

function isPreEncoded(value: unknown): value is PreEncodedResponse {
  return typeof value === 'object' && value !== null && PRE_ENCODED in value;
}

type Serialize = (value: unknown) => Buffer;

/**
 * grpc-js serializes every `call.write(message)` with the method's `responseSerialize`,
 * so one event written to N Subscribe calls was protobuf-encoded N times. This keeps one
 * encoding per event (EncodeOnce) and makes Subscribe's serializer pass those bytes
 * through; anything else (resets, skipped ranges, a message built elsewhere) is
 * serialized as before, by the same protobuf serializer.
 */
export class SubscribeEncoding {
  private serialize: Serialize | undefined;
  private readonly cache = new EncodeOnce<PreEncodedResponse>({
    encode: (item) => ({ [PRE_ENCODED]: this.encode(item) }),
    sizeOf: (r) => r[PRE_ENCODED].length,
  });

  /** Encodings made so far (tests count them). */
  get encodings(): number {
    return this.cache.encodings;
  }

  /**
   * Wraps Subscribe's serializer in the package definition grpc-js is about to load
   * (Nest calls `onLoadPackageDefinition` before it adds the handlers, and grpc-js reads
   * `responseSerialize` when a handler is added).
   */
  install(pkg: PackageDefinition): void {
    const service = pkg[`${ORDER_STATUS_PROTO_PACKAGE}.${ORDER_STATUS_SERVICE_NAME}`] as
      Record<string, MethodDefinition<object, object>> | undefined;
    const method = service?.Subscribe;
    if (method === undefined) throw new TypeError('the proto has no OrderStatusService.Subscribe');
    const original = method.responseSerialize as Serialize;
    this.serialize = original;
    method.responseSerialize = (value: unknown) =>
      isPreEncoded(value) ? value[PRE_ENCODED] : original(value);
  }

  /**
   * What to pass to `call.write()` for `item`: shared bytes for an event, else the message.
   * Typed as the message: grpc-js hands what is written to the serializer untouched.
   */
  message(item: StreamItem): ProtoSubscribeResponse {
    if (this.serialize === undefined || eventOf(item) === undefined) {
      return streamItemToProto(item);
    }
    return this.cache.get(item) as unknown as ProtoSubscribeResponse;
  }

  private encode(item: StreamItem): Buffer {
    return (this.serialize as Serialize)(streamItemToProto(item));
  }
}

/** One per process: the gRPC server installs it, every Subscribe call writes through it. */
export const SUBSCRIBE_ENCODING = new SubscribeEncoding();
