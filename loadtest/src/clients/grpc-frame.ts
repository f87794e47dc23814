/**
 * gRPC over HTTP/2 by hand: for the hostile clients, which misbehave below what
 * @grpc/grpc-js allows, and the lean client of the load test's unsampled subscribers.
 */

export const SUBSCRIBE_PATH = '/orderstatus.v1.OrderStatusService/Subscribe';

/** A protobuf string field (wire type 2) with a length below 2^28. */
function stringField(field: number, value: string): Buffer {
  const bytes = Buffer.from(value);
  const len: number[] = [];
  let n = bytes.length;
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n > 0) b |= 0x80;
    len.push(b);
  } while (n > 0);
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...len]), bytes]);
}

/**
 * One length-prefixed message (gRPC over HTTP/2: compressed flag, 4-byte length) carrying
 * SubscribeRequest { order_id = 1 } (after_seq 0 is the default and not sent).
 */
export function subscribeMessage(orderId: string): Buffer {
  return framedMessage(stringField(1, orderId));
}

/** A serialized message with gRPC's prefix: not compressed, its 4-byte big-endian length. */
export function framedMessage(body: Uint8Array): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.length, 1);
  return Buffer.concat([prefix, body]);
}

export function grpcHeaders(token: string | undefined): Record<string, string> {
  return {
    ':method': 'POST',
    ':path': SUBSCRIBE_PATH,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
  };
}
