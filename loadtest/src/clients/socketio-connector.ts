import type { Agent } from 'node:http';
import type { Socket as NetSocket } from 'node:net';
import { io, type Socket } from 'socket.io-client';
import { requestHeaders } from './headers';
import { leanSocketIoParser } from './lean/lean-socketio-parser';
import { batchedAgent, type ReadBatcher } from './read-batcher';
import type { Connector, HeaderProfile, OpenStream, StreamHandlers } from './transport';
import { EVENT_NAMES, toWireEvent, toWireReset, toWireSkipped } from './wire-types';

/** How long a subscribe may wait for its ack before it counts as an error. */
export const SUBSCRIBE_ACK_TIMEOUT_MS = 10_000;

interface SubscribeAck {
  ok: boolean;
  error?: { code?: string };
}

/**
 * socket.io-client on the websocket transport only (no polling upgrade dance), one
 * connection per subscriber (`forceNew`), namespace `/orders`. Reconnection is left to the
 * load test's subscriber so it can resume with `afterSeq` and time the reconnect itself.
 * With a `batcher`, each socket's TCP connection is read in batches (ReadBatcher) once
 * its subscription is acknowledged.
 */
export class SocketIoConnector implements Connector {
  readonly transport = 'ws' as const;
  requests = 0;
  private readonly sockets = new Set<Socket>();
  private readonly agent: Agent | undefined;

  constructor(
    private readonly url: string,
    private readonly profile: HeaderProfile,
    private readonly token: string | undefined,
    private readonly batcher?: ReadBatcher,
  ) {
    this.agent = batcher ? batchedAgent() : undefined;
  }

  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream {
    this.requests += 1;
    let done = false;
    const headers = this.profile === 'browser' ? requestHeaders('browser', undefined, '*/*') : {};
    const socket = io(`${this.url}/orders`, {
      transports: ['websocket'],
      forceNew: true,
      // Reads only orderId, seq and publish time of an event packet (the generator's cost).
      parser: leanSocketIoParser,
      reconnection: false,
      extraHeaders: headers,
      auth: this.token === undefined ? {} : { token: this.token },
      // engine.io-client hands `agent` to ws for the upgrade request (typed there as a
      // browser's string | boolean).
      ...(this.agent ? { agent: this.agent as unknown as string } : {}),
    });
    this.sockets.add(socket);
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      socket.removeAllListeners();
      socket.disconnect();
      this.sockets.delete(socket);
      fn();
    };
    const guard =
      <T>(fn: (v: T) => void) =>
      (v: T): void => {
        if (done) return;
        try {
          fn(v);
        } catch {
          finish(() => handlers.onError('malformed_message'));
        }
      };
    // Every event name of both domains (the order's kinds share its seq).
    for (const name of EVENT_NAMES) {
      socket.on(
        name,
        guard((v: unknown) => handlers.onEvent(toWireEvent(v))),
      );
    }
    socket.on(
      'reset',
      guard((v: unknown) => handlers.onReset(toWireReset(v))),
    );
    socket.on(
      'skipped',
      guard((v: unknown) => handlers.onSkipped(toWireSkipped(v))),
    );
    socket.on(
      'end',
      guard((v: { reason?: unknown }) =>
        finish(() => handlers.onEnd(typeof v?.reason === 'string' ? v.reason : 'unknown')),
      ),
    );
    socket.on('connect_error', (err: Error & { description?: unknown }) =>
      finish(() => handlers.onError(`connect_error:${err.message}`)),
    );
    socket.on('disconnect', (reason: string) =>
      finish(() => handlers.onError(`disconnect:${reason}`)),
    );
    socket.on('connect', () => {
      socket
        .timeout(SUBSCRIBE_ACK_TIMEOUT_MS)
        .emit('subscribe', { orderId, afterSeq }, (err: Error | null, ack: SubscribeAck) => {
          if (done) return;
          if (err) return finish(() => handlers.onError('ack_timeout'));
          if (ack?.ok) {
            handlers.onOpen();
            const raw = rawSocket(socket);
            if (this.batcher && raw) this.batcher.add(raw);
          } else finish(() => handlers.onError(`nack:${ack?.error?.code ?? 'unknown'}`));
        });
    });
    return {
      close: () => {
        done = true;
        socket.removeAllListeners();
        socket.disconnect();
        this.sockets.delete(socket);
      },
      // engine.io reads the ws socket; pausing the underlying TCP socket stops reading.
      pause: () => rawSocket(socket)?.pause(),
      resume: () => rawSocket(socket)?.resume(),
    };
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.disconnect();
    this.sockets.clear();
  }
}

/** The net.Socket under socket.io -> engine.io -> ws (back-pressure, batched reads). */
function rawSocket(socket: Socket): NetSocket | undefined {
  const engine = socket.io.engine as unknown as {
    transport?: { ws?: { _socket?: NetSocket } };
  };
  return engine.transport?.ws?._socket;
}
