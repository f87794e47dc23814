import { StringDecoder } from 'node:string_decoder';
import fc from 'fast-check';
import { dispatchSseMessage } from './sse-connector';
import { SseParser, type SseMessage } from './sse-parser';
import type { StreamHandlers } from './transport';
import { parseLongPollBody } from './wire-types';

function parseAll(chunks: readonly string[]): { messages: SseMessage[]; parser: SseParser } {
  const messages: SseMessage[] = [];
  const parser = new SseParser((m) => messages.push(m));
  for (const c of chunks) parser.feed(c);
  return { messages, parser };
}

/** `whole` cut at the given points (any order, repeats allowed). */
function cut<T extends { slice(start: number, end?: number): T; length: number }>(
  whole: T,
  cuts: readonly number[],
): T[] {
  const points = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
  const chunks: T[] = [];
  let prev = 0;
  for (const p of points) {
    chunks.push(whole.slice(prev, p));
    prev = p;
  }
  chunks.push(whole.slice(prev));
  return chunks;
}

const STREAM =
  'retry: 2000\n\n' +
  'id: 2\nevent: status\ndata: {"orderId":"lt-ü€😀","seq":2,"status":"paid","publishedAtUs":10}\n\n' +
  ': ping\n\n' +
  'id: 3\r\nevent: status\r\ndata: {"orderId":"lt-1","seq":3,"status":"packed","publishedAtUs":11}\r\n\r\n' +
  'event: end\rdata: {"reason":"completed"}\r\r';

describe('SseParser', () => {
  it('parses the service stream: retry, ids, events, comments, every line ending', () => {
    const { messages, parser } = parseAll([STREAM]);
    expect(parser.retryMs).toBe(2000);
    expect(parser.comments).toBe(1);
    expect(messages.map((m) => [m.event, m.id])).toEqual([
      ['status', '2'],
      ['status', '3'],
      ['end', '3'], // the last event id persists, as in EventSource
    ]);
    expect(JSON.parse(messages[0].data)).toMatchObject({ orderId: 'lt-ü€😀' });
    expect(JSON.parse(messages[1].data)).toMatchObject({ seq: 3 });
  });

  it('gives the same messages however the stream is split (property)', () => {
    const whole = parseAll([STREAM]).messages;
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 20 }), (cuts) => {
        expect(parseAll(cut(STREAM, cuts)).messages).toEqual(whole);
      }),
    );
  });

  it('gives the same messages however the bytes are split, inside UTF-8 sequences too (property)', () => {
    // The HTTP getters decode with setEncoding('utf8'): a StringDecoder, as here.
    const bytes = Buffer.from(STREAM, 'utf8');
    const whole = parseAll([STREAM]).messages;
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 20 }), (cuts) => {
        const decoder = new StringDecoder('utf8');
        const text = cut(bytes, cuts).map((b) => decoder.write(b));
        expect(parseAll(text).messages).toEqual(whole);
      }),
    );
  });

  it('joins multi-line data, strips one leading space, ignores data-less events', () => {
    const { messages } = parseAll(['event: x\n\ndata:a\ndata:  b\n\n']);
    expect(messages).toEqual([{ event: 'message', data: 'a\n b', id: undefined }]);
  });

  it('keeps the id of a block without data, ignores an id with NUL and a retry that is no integer', () => {
    const { messages, parser } = parseAll([
      'retry: 1500\n\nid: 7\n\nid: 8\u0000\nretry: 1.5\ndata: a\n\nid\ndata: b\n\n',
    ]);
    expect(parser.retryMs).toBe(1500);
    // `id` with no value resets the last event ID to empty (WHATWG HTML 9.2.6).
    expect(messages).toEqual([
      { event: 'message', data: 'a', id: '7' },
      { event: 'message', data: 'b', id: '' },
    ]);
  });
});

describe('dispatchSseMessage', () => {
  const handlers = (): StreamHandlers & { calls: string[] } => {
    const calls: string[] = [];
    return {
      calls,
      onOpen: () => calls.push('open'),
      onEvent: (e) => calls.push(`event ${e.seq}`),
      onReset: (r) => calls.push(`reset ${r.lastSeq}`),
      onSkipped: (s) => calls.push(`skipped ${s.fromSeq}..${s.toSeq}`),
      onEnd: (reason) => calls.push(`end ${reason}`),
      onError: (code) => calls.push(`error ${code}`),
    };
  };

  it('maps status, reset and end', () => {
    const h = handlers();
    const reset =
      '{"reason":"beyond_retention","snapshot":{"orderId":"a","status":"paid","lastSeq":9,"updatedAtUs":1}}';
    expect(dispatchSseMessage({ event: 'reset', data: reset, id: '9' }, h)).toBe(true);
    expect(
      dispatchSseMessage(
        { event: 'status', data: '{"orderId":"a","seq":10,"publishedAtUs":1}', id: '10' },
        h,
      ),
    ).toBe(true);
    expect(dispatchSseMessage({ event: 'end', data: '{"reason":"max_age"}', id: '10' }, h)).toBe(
      false,
    );
    expect(h.calls).toEqual(['reset 9', 'event 10', 'end max_age']);
  });

  it("maps the payload domain's event as an event", () => {
    const h = handlers();
    const data = '{"orderId":"a","seq":3,"publishedAtUs":1,"payload":"xx"}';
    expect(dispatchSseMessage({ event: 'payload', data, id: '3' }, h)).toBe(true);
    expect(h.calls).toEqual(['event 3']);
  });

  it('maps skipped (a signalled drop, not an error)', () => {
    const h = handlers();
    const skipped = '{"fromSeq":11,"toSeq":17,"reason":"overflow"}';
    expect(dispatchSseMessage({ event: 'skipped', data: skipped, id: '17' }, h)).toBe(true);
    expect(h.calls).toEqual(['skipped 11..17']);
    expect(() =>
      dispatchSseMessage({ event: 'skipped', data: '{"fromSeq":5,"toSeq":4}', id: '4' }, h),
    ).toThrow(TypeError);
  });

  it('throws on a malformed event so the caller counts an error', () => {
    expect(() =>
      dispatchSseMessage({ event: 'status', data: '{"seq":"x"}', id: undefined }, handlers()),
    ).toThrow();
  });
});

describe('parseLongPollBody', () => {
  it('reads events, cursor and completion', () => {
    const body = parseLongPollBody(
      '{"orderId":"a","events":[{"orderId":"a","seq":4,"status":"paid","publishedAtUs":5}],"next":4,"completed":false}',
    );
    expect(body).toEqual({
      events: [{ orderId: 'a', seq: 4, publishedAtUs: 5 }],
      reset: undefined,
      skipped: undefined,
      next: 4,
      completed: false,
    });
  });

  it('reads a reset', () => {
    const body = parseLongPollBody(
      '{"orderId":"a","events":[],"reset":{"reason":"gap","snapshot":{"lastSeq":7}},"next":7,"completed":true}',
    );
    expect(body.reset).toEqual({ reason: 'gap', lastSeq: 7 });
    expect(body.completed).toBe(true);
  });

  it('reads a skipped range', () => {
    const body = parseLongPollBody(
      '{"orderId":"a","events":[{"orderId":"a","seq":9,"status":"paid","publishedAtUs":5}],"skipped":{"fromSeq":3,"toSeq":8,"reason":"overflow"},"next":9,"completed":false}',
    );
    expect(body.skipped).toEqual({ fromSeq: 3, toSeq: 8 });
  });

  it('rejects a body without a cursor', () => {
    expect(() => parseLongPollBody('{"events":[]}')).toThrow(TypeError);
  });
});
