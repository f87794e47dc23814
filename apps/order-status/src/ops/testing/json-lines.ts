import { Writable } from 'node:stream';

/**
 * A destination for a pino logger in tests: every line it writes (one JSON object each)
 * lands parsed in `lines`.
 */
export function jsonLineSink<T>(): { readonly lines: T[]; readonly sink: Writable } {
  const lines: T[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) {
        if (text !== '') lines.push(JSON.parse(text) as T);
      }
      callback();
    },
  });
  return { lines, sink };
}
