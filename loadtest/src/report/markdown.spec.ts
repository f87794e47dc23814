import type { RunResult } from '../scenarios/result';
import { leanGrpcNote, readBatchNote } from './markdown';

/** Only the fields the notes read. */
function run(transport: string, readBatchMs?: number, leanGrpc?: boolean): RunResult {
  return {
    scenario: 'scale',
    transport,
    settings: {
      subscribers: 2000,
      ...(readBatchMs === undefined ? {} : { readBatchMs }),
      ...(leanGrpc === undefined ? {} : { leanGrpc }),
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

  it('says when gRPC read in batches, which only the raw client does', () => {
    const note = readBatchNote([run('sse', 1000), run('grpc', 1000)]);
    expect(note[0]).toContain('Batched reads (sse, grpc)');
    expect(note[0]).toContain('raw client');
  });

  it('says nothing when every subscriber read as events arrived', () => {
    expect(readBatchNote([run('sse'), run('grpc')])).toEqual([]);
  });
});

describe('leanGrpcNote', () => {
  it('says when unsampled gRPC subscribers read through the lean client', () => {
    const note = leanGrpcNote([run('sse', 1000), run('grpc', undefined, true)]);
    expect(note[0]).toContain('Lean gRPC client');
    expect(note[0]).toContain('rather than grpc-js');
  });

  it('says nothing when every gRPC subscriber used grpc-js', () => {
    expect(leanGrpcNote([run('sse', 1000), run('grpc')])).toEqual([]);
  });
});
