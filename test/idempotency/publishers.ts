import type { ServiceError } from '@grpc/grpc-js';
import { request } from 'undici';
import {
  eventFromProto,
  PROTO_STATUS,
  type OrderEvent,
  type OrderStatus,
  type OrderStatusChanged,
  type ProtoOrderStatusChanged,
} from '@app/order-domain';
import { orderStatusClient, unary, type OrderStatusClient } from '../grpc/grpc-test-client';
import { bearer, DEFAULT_TEST_TOKEN } from '../support/auth';

/** One publish as a client sees it, the same shape whichever API carried it. */
export interface PublishAnswer {
  /** 'ok', or the error code (`unavailable`, `failed_precondition`, ...). */
  readonly code: string;
  readonly event?: OrderEvent;
  /** The service said this answers an earlier request with the same key. */
  readonly replayed: boolean;
  /** The error message (checked for echoes of the client's input). */
  readonly message?: string;
  /** HTTP status or gRPC status code. */
  readonly wireStatus: number;
}

export interface PublishRequest {
  readonly orderId: string;
  readonly status: OrderStatus;
  /** Idempotency-Key / request_id; absent: none. */
  readonly key?: string;
  /** Bearer token; the default test token (subject `support`) when absent. */
  readonly token?: string;
  /** A body field beyond the status, sent only when given. */
  readonly ownerId?: string;
}

/** The optional body fields of a request that were given (REST and gRPC names agree). */
function extras(req: PublishRequest): { ownerId?: string } {
  return req.ownerId === undefined ? {} : { ownerId: req.ownerId };
}

export interface Publisher {
  readonly name: 'rest' | 'grpc';
  publish(req: PublishRequest): Promise<PublishAnswer>;
  close(): void;
}

/** gRPC status codes by name, as the transport-neutral codes read. */
const GRPC_CODE_NAMES: Record<number, string> = {
  3: 'invalid_argument',
  4: 'deadline_exceeded',
  5: 'not_found',
  7: 'permission_denied',
  8: 'resource_exhausted',
  9: 'failed_precondition',
  14: 'unavailable',
  16: 'unauthenticated',
};

/** `POST /v1/orders/:orderId/status` with `Idempotency-Key`. */
export function restPublisher(httpUrl: string): Publisher {
  return {
    name: 'rest',
    publish: async (req) => {
      const { orderId, status, key, token } = req;
      const res = await request(`${httpUrl}/v1/orders/${orderId}/status`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...bearer(token ?? DEFAULT_TEST_TOKEN),
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
        body: JSON.stringify({ status, ...extras(req) }),
      });
      const body = (await res.body.json()) as
        OrderStatusChanged | { error: { code: string; message: string } };
      const replayed = res.headers['idempotent-replayed'] === 'true';
      if ('error' in body) {
        const { code, message } = body.error;
        return { code, message, replayed, wireStatus: res.statusCode };
      }
      return { code: 'ok', event: body, replayed, wireStatus: res.statusCode };
    },
    close: () => undefined,
  };
}

/** gRPC `UpdateStatus` with `request_id`; one channel per token. */
export function grpcPublisher(grpcAddress: string): Publisher {
  const clients = new Map<string, OrderStatusClient>();
  const clientFor = (token: string) => {
    let client = clients.get(token);
    if (client === undefined) {
      client = orderStatusClient(grpcAddress, {}, token);
      clients.set(token, client);
    }
    return client;
  };
  return {
    name: 'grpc',
    publish: async (req) => {
      const { orderId, status, key, token } = req;
      const client = clientFor(token ?? DEFAULT_TEST_TOKEN);
      try {
        const res = await unary(
          client.updateStatus.bind(client) as (
            req: object,
            options: object,
            cb: (
              err: ServiceError | null,
              res?: { event: ProtoOrderStatusChanged; replayed: boolean },
            ) => void,
          ) => void,
          {
            orderId,
            status: PROTO_STATUS[status],
            ...extras(req),
            ...(key === undefined ? {} : { requestId: key }),
          },
        );
        return {
          code: 'ok',
          event: eventFromProto(res.event),
          replayed: res.replayed,
          wireStatus: 0,
        };
      } catch (err) {
        const e = err as ServiceError;
        return {
          code: GRPC_CODE_NAMES[e.code] ?? `grpc-${e.code}`,
          message: e.details,
          replayed: false,
          wireStatus: e.code,
        };
      }
    },
    close: () => {
      for (const c of clients.values()) c.close();
      clients.clear();
    },
  };
}
