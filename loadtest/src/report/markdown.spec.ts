import type { RunResult } from '../scenarios/result';
import { readBatchNote } from './markdown';

/** Only the fields readBatchNote reads. */
function run(transport: string, readBatchMs?: number): RunResult {
  return {
    scenario: 'scale',
    transport,
    settings: { subscribers: 2000, ...(readBatchMs === undefined ? {} : { readBatchMs }) },
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
