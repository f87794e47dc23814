import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What an OTLP sink received: POSTs, spans in them, bytes. */
export interface OtlpCounts {
  readonly exports: number;
  readonly spans: number;
  readonly bytes: number;
}

/**
 * Where the tracing rungs' service exports its spans: an OTLP/HTTP endpoint on loopback
 * that answers every export at once and keeps only counts. A real exporter to a real
 * socket, so the service pays what production pays (batching, JSON encoding, the POST),
 * while the receiving side's work stays out of the service's CPU figures; a collector or
 * Jaeger on this host would compete with the service for the cores being measured.
 */
export class OtlpSink {
  exports = 0;
  bytes = 0;
  /** Spans received (counted by their `"spanId":` keys, without decoding the JSON). */
  spans = 0;

  private constructor(
    private readonly server: Server,
    /** The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`. */
    readonly url: string,
  ) {
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.receive(req, res));
  }

  static async start(): Promise<OtlpSink> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new OtlpSink(server, `http://127.0.0.1:${port}`);
  }

  /** The counts so far, and zeroes them (one reading per run). */
  take(): OtlpCounts {
    const out = { exports: this.exports, spans: this.spans, bytes: this.bytes };
    this.exports = this.spans = this.bytes = 0;
    return out;
  }

  private receive(req: IncomingMessage, res: ServerResponse): void {
    req.setEncoding('utf8');
    let tail = '';
    req.on('data', (chunk: string) => {
      this.bytes += Buffer.byteLength(chunk);
      // A key split between two chunks is counted once: keep the end of the last one.
      const text = tail + chunk;
      this.spans += text.split('"spanId":').length - 1;
      tail = text.slice(-10);
      if (tail.includes('"spanId":')) tail = '';
    });
    req.on('end', () => {
      this.exports++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
