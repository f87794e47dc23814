import { SseParser, type SseMessage } from './sse-parser';

function parse(chunks: string[]): { messages: SseMessage[]; retryMs: number | undefined } {
  const messages: SseMessage[] = [];
  const p = new SseParser((m) => messages.push(m));
  for (const c of chunks) p.push(c);
  return { messages, retryMs: p.retryMs };
}

describe('SseParser', () => {
  const stream =
    'retry: 2000\n\nid: 3\nevent: status\ndata: {"seq":3}\n\n: ping\n\nevent: end\ndata: {"reason":"max_age"}\n\n';

  it('reads events, ids, retry and ignores comments', () => {
    expect(parse([stream])).toEqual({
      messages: [
        { event: 'status', data: '{"seq":3}', id: '3' },
        { event: 'end', data: '{"reason":"max_age"}', id: '3' },
      ],
      retryMs: 2000,
    });
  });

  it('gives the same result whatever the chunking and line endings', () => {
    const whole = parse([stream]);
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = stream.replace(/\n/g, eol);
      for (let size = 1; size <= 7; size++) {
        const chunks = text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];
        expect(parse(chunks)).toEqual(whole);
      }
    }
  });

  it('joins data lines and ignores a retry that is not digits', () => {
    expect(parse(['data: a\ndata: b\nretry: soon\n\n'])).toEqual({
      messages: [{ event: 'message', data: 'a\nb' }],
      retryMs: undefined,
    });
  });
});
