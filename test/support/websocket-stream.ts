import type { IncomingMessage } from 'node:http';
import { WebSocket, type ClientOptions } from 'ws';
import { waitFor } from './wait-for';

/** One frame of the raw WebSocket transport (`{type, data}`). */
export interface Frame {
  readonly type: string;
  readonly data: Record<string, unknown>;
}

/** How the server closed the connection. */
export interface Closed {
  readonly code: number;
  readonly reason: string;
}

/** The upgrade was answered with an HTTP status instead of 101. */
export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`upgrade refused with ${status}`);
  }
}

/**
 * A real `ws` client on `/v1/orders/:id/ws` that keeps every frame it receives after the
 * `open` frame (kept in `opened`) and the close code. `open()` resolves once the upgrade succeeded (frames may already be in).
 */
export class WsStream {
  readonly frames: Frame[] = [];
  /** The `open` frame's data, once it came. */
  opened: Record<string, unknown> | undefined;
  /** Frames that came as binary, not text (the transport sends none). */
  binaryFrames = 0;
  readonly closed: Promise<Closed>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      // Every frame of the transport is a JSON text frame (browsers see a Blob otherwise).
      if (isBinary) this.binaryFrames++;
      const frame = JSON.parse(data.toString()) as Frame;
      // The `open` frame (the stream was accepted) is kept apart from the stream's frames.
      if (frame.type === 'open' && this.frames.length === 0 && this.opened === undefined) {
        this.opened = frame.data;
      } else this.frames.push(frame);
    });
    this.closed = new Promise((resolve) =>
      ws.once('close', (code: number, reason: Buffer) =>
        resolve({ code, reason: reason.toString() }),
      ),
    );
  }

  static open(url: string, opts: ClientOptions & { protocols?: string[] } = {}): Promise<WsStream> {
    const { protocols, ...options } = opts;
    const ws = new WebSocket(url, protocols, options);
    const stream = new WsStream(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(stream));
      ws.once('unexpected-response', (_req, res: IncomingMessage) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => reject(new UpgradeRefused(res.statusCode ?? 0, body)));
      });
      ws.once('error', reject);
    });
  }

  /** The `data` of every frame of `type`. */
  of(type: string): Record<string, unknown>[] {
    return this.frames.filter((f) => f.type === type).map((f) => f.data);
  }

  /** The seqs of the event frames (`types`: the order's by default), in arrival order. */
  seqs(types: readonly string[] = ['status', 'tracking']): number[] {
    return this.frames.filter((f) => types.includes(f.type)).map((f) => f.data.seq as number);
  }

  async until(
    check: (frames: Frame[]) => boolean,
    message: string,
    timeoutMs = 5_000,
  ): Promise<void> {
    await waitFor(() => check(this.frames), message, timeoutMs);
  }

  close(): void {
    this.ws.terminate();
  }
}
