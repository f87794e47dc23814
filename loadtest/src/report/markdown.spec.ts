import type { RunResult } from '../scenarios/result';
import { leanGrpcNote, rawHttp2Note, readBatchNote } from './markdown';

/** Only the fields the notes read. */
function run(
  transport: string,
  readBatchMs?: number,
  leanGrpc?: boolean,
  rawGrpc?: boolean,
  rawHttp2?: boolean,
): RunResult {
  return {
    scenario: 'scale',
    transport,
    settings: {
      subscribers: 2000,
      ...(readBatchMs === undefined ? {} : { readBatchMs }),
      ...(leanGrpc === undefined ? {} : { leanGrpc }),
      ...(rawGrpc === undefined ? {} : { rawGrpc }),
      ...(rawHttp2 === undefined ? {} : { rawHttp2 }),
    },
  } as unknown as RunResult;
}

describe('readBatchNote', () => {
  it('names the transports whose unsampled subscribers read in batches, and the period', () => {
    const note = readBatchNote([run('sse', 1000), run('ws', 1000), run('grpc')]);
    expect(note[0]).toContain('Batched reads (sse, ws)');
    expect(note[0]).toContain('once every 1000 ms');
    expect(note[0]).not.toContain('grpc');
  });

  it('says nothing when every subscriber read as events arrived', () => {
    expect(readBatchNote([run('sse'), run('grpc')])).toEqual([]);
  });
});

describe('leanGrpcNote', () => {
  it('says when unsampled gRPC subscribers read through the lean client', () => {
    const note = leanGrpcNote([run('sse', 1000), run('grpc', undefined, true)]);
    expect(note[0]).toContain('Lean gRPC client');
    expect(note[0]).toContain('`node:http2`');
    expect(note[0]).toContain('rather than grpc-js');
  });

  it('names the raw client when the runs used it', () => {
    const note = leanGrpcNote([run('grpc', undefined, true, true)]);
    expect(note[0]).toContain('Raw gRPC client');
    expect(note[0]).toContain('by hand');
    expect(note[0]).not.toContain('`node:http2`');
  });

  it('says nothing when every gRPC subscriber used grpc-js', () => {
    expect(leanGrpcNote([run('sse', 1000), run('grpc')])).toEqual([]);
  });
});

describe('rawHttp2Note', () => {
  it('names the HTTP/2 transports whose unsampled subscribers read through the raw client', () => {
    const raw = run('longpoll-h2', undefined, undefined, undefined, true);
    const note = rawHttp2Note([run('sse', 1000), raw, raw, run('grpc', undefined, true, true)]);
    expect(note[0]).toContain('Raw HTTP/2 client (longpoll-h2)');
    expect(note[0]).toContain('rather than `node:http2`');
  });

  it('says nothing when every HTTP/2 subscriber used node:http2', () => {
    expect(rawHttp2Note([run('longpoll-h2'), run('grpc', undefined, true, true)])).toEqual([]);
  });
});
