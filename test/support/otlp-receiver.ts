import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carried it, flattened for assertions. */
export interface ReceivedSpan {
  readonly serviceName: string | undefined;
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly events: readonly { name: string; attributes: Readonly<Record<string, unknown>> }[];
}

interface OtlpKeyValue {
  key: string;
  value: {
    stringValue?: string;
    intValue?: string | number;
    doubleValue?: number;
    boolValue?: boolean;
  };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpKeyValue[];
  events?: { name: string; attributes?: OtlpKeyValue[] }[];
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

/**
 * An OTLP/HTTP receiver for traces in the test's own process, on a loopback port: it
 * decodes the exporter's JSON (`POST /v1/traces`) and keeps every span, as a collector
 * (Jaeger, Tempo) would receive them.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests that were not an OTLP JSON trace export (the test expects none). */
  readonly rejected: string[] = [];
  exports = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.receive(req, res));
  }

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new OtlpReceiver(server, `http://127.0.0.1:${port}`);
  }

  /** The spans named `name`. */
  named(name: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.name === name);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private receive(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const json = (req.headers['content-type'] ?? '').startsWith('application/json');
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !json) {
        this.rejected.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
        res.writeHead(400).end();
        return;
      }
      this.accept(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  }

  private accept(body: OtlpExport): void {
    this.exports++;
    for (const rs of body.resourceSpans ?? []) {
      const serviceName = attributesOf(rs.resource?.attributes)['service.name'] as
        string | undefined;
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            serviceName,
            traceId: hexId(s.traceId),
            spanId: hexId(s.spanId),
            parentSpanId: s.parentSpanId ? hexId(s.parentSpanId) : '',
            name: s.name,
            kind: s.kind,
            attributes: attributesOf(s.attributes),
            events: (s.events ?? []).map((e) => ({
              name: e.name,
              attributes: attributesOf(e.attributes),
            })),
          });
        }
      }
    }
  }
}

/** OTLP JSON writes ids as hex (the specification); older exporters wrote base64. */
function hexId(id: string): string {
  return /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    out[key] =
      value.stringValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.doubleValue ??
      value.boolValue;
  }
  return out;
}
