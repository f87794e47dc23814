import {
  credentials,
  loadPackageDefinition,
  Metadata,
  type ServiceClientConstructor,
} from '@grpc/grpc-js';
import type { ClientReadableStream, ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { io } from 'socket.io-client';
import {
  eventFromProto,
  ORDER_STATUS_PROTO_PATH,
  PROTO_LOADER_OPTIONS,
  skippedFromProto,
  snapshotFromProto,
  type OrderStatusChanged,
  ResetReason,
  type ProtoSubscribeResponse,
  type StreamReset,
  type StreamSkipped,
} from '@app/contracts';
import type { Connect, ConnectionEnd } from './connection';
import type { WatchOptions } from './options';

/** The reset reasons by their proto number (proto/order_status.proto, `ResetReason`). */
const RESET_REASONS: Record<number, ResetReason> = {
  1: ResetReason.BeyondRetention,
  2: ResetReason.AheadOfLastSeq,
  3: ResetReason.Gap,
  4: ResetReason.Overflow,
};

/**
 * socket.io: one connection per attempt (the watcher owns reconnecting, so socket.io's
 * own is off), `subscribe` with `afterSeq`, then `status` / `reset` / `skipped` / `end`.
 */
export function wsConnect(o: WatchOptions): Connect {
  return (afterSeq, h, signal) =>
    new Promise<ConnectionEnd>((resolve, reject) => {
      const socket = io(`${o.url.replace(/\/+$/, '')}/orders`, {
        transports: ['websocket'],
        reconnection: false,
        auth: o.token ? { token: o.token } : {},
      });
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        socket.disconnect();
        fn();
      };
      const onAbort = () => settle(() => reject(new Error('aborted')));
      signal.addEventListener('abort', onAbort, { once: true });
      socket.on('connect', () => {
        socket.emit(
          'subscribe',
          { orderId: o.orderId, afterSeq },
          (ack: { ok: boolean; error?: { message: string } }) => {
            if (ack.ok) h.opened();
            else
              settle(() =>
                reject(new Error(`subscribe refused: ${ack.error?.message ?? 'unknown'}`)),
              );
          },
        );
      });
      socket.on('status', (e: OrderStatusChanged) => e.orderId === o.orderId && h.event(e));
      socket.on('reset', (r: StreamReset) => r.snapshot.orderId === o.orderId && h.reset(r));
      socket.on(
        'skipped',
        ({ orderId, ...s }: StreamSkipped & { orderId: string }) =>
          orderId === o.orderId && h.skipped(s),
      );
      socket.on('end', (end: { orderId: string; reason: string; retryAfterMs?: number }) => {
        if (end.orderId !== o.orderId) return;
        settle(() =>
          resolve({
            reason: end.reason,
            ...(end.retryAfterMs !== undefined ? { retryAfterMs: end.retryAfterMs } : {}),
          }),
        );
      });
      socket.on('connect_error', (err) => settle(() => reject(err)));
      socket.on('disconnect', (reason) =>
        settle(() => reject(new Error(`disconnected (${reason})`))),
      );
    });
}

interface SubscribeClient {
  subscribe(
    req: { orderId: string; afterSeq: number },
    metadata: Metadata,
  ): ClientReadableStream<ProtoSubscribeResponse>;
  close(): void;
}

/**
 * gRPC server-streaming `Subscribe` with `after_seq`; the token travels as
 * `authorization` metadata. UNAVAILABLE (shutdown, max age) is a resume, OK the end.
 */
export function grpcConnect(o: WatchOptions): Connect {
  const pkg = loadPackageDefinition(loadSync(ORDER_STATUS_PROTO_PATH, PROTO_LOADER_OPTIONS)) as {
    orderstatus: { v1: { OrderStatusService: ServiceClientConstructor } };
  };
  return (afterSeq, h, signal) =>
    new Promise<ConnectionEnd>((resolve, reject) => {
      const Ctor = pkg.orderstatus.v1.OrderStatusService;
      const client = new Ctor(o.url, credentials.createInsecure()) as unknown as SubscribeClient;
      const metadata = new Metadata();
      if (o.token) metadata.set('authorization', `Bearer ${o.token}`);
      const call = client.subscribe({ orderId: o.orderId, afterSeq }, metadata);
      let opened = false;
      let settled = false;
      const onAbort = () => call.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
      // grpc-js sends headers when the server accepted the call.
      call.on('metadata', () => {
        opened = true;
        h.opened();
      });
      call.on('data', (m: ProtoSubscribeResponse) => {
        if (!opened) {
          opened = true;
          h.opened();
        }
        if ('event' in m) h.event(eventFromProto(m.event));
        else if ('skipped' in m) h.skipped(skippedFromProto(m.skipped));
        else if ('reset' in m)
          h.reset({
            reason: RESET_REASONS[m.reset.reason],
            snapshot: snapshotFromProto(m.reset.snapshot),
          });
      });
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        client.close();
        fn();
      };
      call.on('error', (err: ServiceError) =>
        settle(() => reject(new Error(`gRPC ${err.code}: ${err.details}`))),
      );
      call.on('end', () => settle(() => resolve({ reason: 'completed' })));
    });
}
