import type { MethodDefinition, PackageDefinition } from '@grpc/proto-loader';
import {
  encodeOncePerDomain,
  itemToProto,
  ORDER_STATUS_PROTO_PACKAGE,
  ORDER_STATUS_SERVICE_NAME,
  eventOf,
  type StreamDomain,
  type StreamItemOf,
} from '@app/contracts';
import type { SubscribeCall } from './grpc-messages';

const PRE_ENCODED = Symbol('SubscribeResponse bytes');

/** What a Subscribe call writes: the envelope's message, whatever arms the domain adds. */
type SubscribeResponse = Parameters<SubscribeCall['write']>[0];

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
  /** Encodings made so far (tests count them). */
  encodings = 0;

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
  message(domain: StreamDomain, item: StreamItemOf): SubscribeResponse {
    if (this.serialize === undefined || eventOf(item) === undefined) {
      return itemToProto(domain, item);
    }
    return this.cacheOf(domain).get(item) as unknown as SubscribeResponse;
  }

  /** One cache per domain (a process serves one; the specs use several). */
  private readonly cacheOf = encodeOncePerDomain((domain: StreamDomain) => ({
    encode: (item: StreamItemOf): PreEncodedResponse => {
      this.encodings++;
      return { [PRE_ENCODED]: (this.serialize as Serialize)(itemToProto(domain, item)) };
    },
    sizeOf: (r: PreEncodedResponse) => r[PRE_ENCODED].length,
  }));
}

/** One per process: the gRPC server installs it, every Subscribe call writes through it. */
export const SUBSCRIBE_ENCODING = new SubscribeEncoding();
