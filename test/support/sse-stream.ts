import type { ClientHttp2Session, IncomingHttpHeaders } from 'node:http2';
import { StringDecoder } from 'node:string_decoder';
import { request } from 'undici';
import { withAuth } from './auth';
import { SseParser, type SseMessage } from './sse-parser';
import { waitFor } from './wait-for';

/** A raw SSE stream under test, over HTTP/1.1 (undici) or HTTP/2 (node:http2). */
export interface SseStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>;
  readonly messages: SseMessage[];
  /** Parsed `status` and `tracking` events' payloads (one seq sequence), in order. */
  events(): { orderId: string; seq: number; status: string; publishedAtUs: number }[];
  /** The raw non-SSE body (error responses). */
  readonly body: () => string;
  readonly ended: Promise<void>;
  waitFor(
    predicate: (msgs: SseMessage[]) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<void>;
  close(): void;
}

function makeStream(): {
  stream: Omit<SseStream, 'status' | 'headers' | 'ended' | 'close'>;
  feed: (chunk: string) => void;
} {
  const parser = new SseParser();
  const messages: SseMessage[] = [];
  let raw = '';
  return {
    feed: (chunk) => {
      raw += chunk;
      messages.push(...parser.push(chunk));
    },
    stream: {
      messages,
      body: () => raw,
      events: () =>
        messages
          .filter((m) => m.event === 'status' || m.event === 'tracking')
          .map((m) => JSON.parse(m.data) as ReturnType<SseStream['events']>[number]),
      waitFor: (predicate, what, timeoutMs = 5_000) =>
        waitFor(() => predicate(messages), what, timeoutMs).then(() => undefined),
    },
  };
}

export async function openSseH1(
  url: string,
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const ac = new AbortController();
  const res = await request(url, {
    headers: { accept: 'text/event-stream', ...withAuth(headers) },
    signal: ac.signal,
  });
  const { stream, feed } = makeStream();
  // undici's body.setEncoding() sets no decoder (its chunks stay Buffers), so decode here:
  // a StringDecoder holds back a UTF-8 sequence split between chunks.
  const decoder = new StringDecoder('utf8');
  const ended = new Promise<void>((resolve) => {
    res.body.on('data', (c: Buffer) => feed(decoder.write(c)));
    res.body.on('end', resolve);
    res.body.on('error', () => resolve());
    res.body.on('close', resolve);
  });
  return {
    ...stream,
    status: res.statusCode,
    headers: res.headers,
    ended,
    close: () => ac.abort(),
  };
}

export async function openSseH2(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const req = session.request({
    ':method': 'GET',
    ':path': path,
    accept: 'text/event-stream',
    ...withAuth(headers),
  });
  req.end();
  req.setEncoding('utf8');
  const { stream, feed } = makeStream();
  const ended = new Promise<void>((resolve) => {
    req.on('data', (c: string) => feed(c));
    req.on('end', resolve);
    req.on('close', resolve);
    req.on('error', () => resolve());
  });
  const responseHeaders = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  return {
    ...stream,
    status: Number(responseHeaders[':status']),
    headers: responseHeaders,
    ended,
    close: () => req.close(),
  };
}
