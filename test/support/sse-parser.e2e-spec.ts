import { StringDecoder } from 'node:string_decoder';
import fc from 'fast-check';
import { SseParser, type SseMessage } from './sse-parser';

/** The test helper the SSE specs read raw streams with, on its own. */
const STREAM =
  'retry: 2000\n\n' +
  'id: 2\nevent: status\ndata: {"orderId":"sse-ü€😀","seq":2,"status":"paid"}\n\n' +
  ': ping\n\n' +
  'id: 3\r\nevent: status\r\ndata: {"orderId":"sse-a","seq":3,"status":"packed"}\r\n\r\n' +
  'retry: 137\revent: end\rdata: {"reason":"shutdown"}\r\r';

const EXPECTED: SseMessage[] = [
  { event: '', data: '', retry: 2000 },
  { id: '2', event: 'status', data: '{"orderId":"sse-ü€😀","seq":2,"status":"paid"}' },
  { event: '', data: '', comment: 'ping' },
  { id: '3', event: 'status', data: '{"orderId":"sse-a","seq":3,"status":"packed"}' },
  { event: '', data: '', retry: 137 },
  { event: 'end', data: '{"reason":"shutdown"}' }, // no id of its own
];

const parseAll = (chunks: readonly string[]): SseMessage[] => {
  const parser = new SseParser();
  return chunks.flatMap((c) => parser.push(c));
};

describe('SseParser (test support)', () => {
  it('reads retry, ids, events and heartbeats in stream order, over LF, CRLF and CR', () => {
    expect(parseAll([STREAM])).toEqual(EXPECTED);
  });

  it('reads the same however the bytes are split, inside UTF-8 sequences too (property)', () => {
    const bytes = Buffer.from(STREAM, 'utf8');
    fc.assert(
      fc.property(fc.array(fc.nat({ max: bytes.length }), { maxLength: 20 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        // The streams under test decode with setEncoding('utf8'): a StringDecoder, as here.
        const decoder = new StringDecoder('utf8');
        const chunks = [0, ...points].map((from, i) =>
          decoder.write(bytes.subarray(from, points[i] ?? bytes.length)),
        );
        expect(parseAll(chunks)).toEqual(EXPECTED);
      }),
    );
  });

  it('joins multi-line data, strips one leading space, dispatches no event without data', () => {
    expect(parseAll(['event: x\nid: 9\n\n', 'data:a\ndata:  b\n\n'])).toEqual([
      { event: 'message', data: 'a\n b' },
    ]);
  });
});
