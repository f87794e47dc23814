import { ResetReason, SkipReason } from '@app/contracts';
import {
  JOB_DOMAIN,
  JobPhase,
  jobItem,
  type JobItem,
  type PhaseChanged,
  type ProgressReported,
} from '@app/event-bus/testing/fixture-domain';
import type { PollResult } from './poll';
import { pollBody, pollBodyJson, pollEventJson } from './poll-answer';

const POLL_EVENT_JSON = pollEventJson(JOB_DOMAIN);
const JOB_ID = 'o-ü-"1"-\u{1F600}';

const step = (seq: number): PhaseChanged => ({
  orderId: JOB_ID,
  seq,
  phase: JobPhase.Building,
  previousPhase: JobPhase.Queued,
  publishedAtUs: 1_764_470_000_000_000 + seq,
});
const progress = (seq: number): ProgressReported => ({
  orderId: JOB_ID,
  seq,
  phase: JobPhase.Testing,
  publishedAtUs: 1_764_470_000_000_000 + seq,
  percent: 62.5,
});
const skipped = (fromSeq: number, toSeq: number): JobItem => ({
  kind: 'skipped',
  skipped: { fromSeq, toSeq, reason: SkipReason.Overflow },
});
const reset: JobItem = {
  kind: 'reset',
  reset: {
    reason: ResetReason.BeyondRetention,
    snapshot: { orderId: JOB_ID, phase: JobPhase.Building, lastSeq: 9, updatedAtUs: 5 },
  },
};

describe('pollBodyJson', () => {
  const results: [string, PollResult][] = [
    ['events', { items: [jobItem(step(2)), jobItem(progress(3))], completed: false }],
    ['a completed job', { items: [jobItem(step(4))], completed: true }],
    ['a reset first', { items: [reset, jobItem(step(10))], completed: false }],
    ['a skipped range first', { items: [skipped(2, 4), jobItem(progress(5))], completed: false }],
    // A second non-event cuts the batch (see PollBody).
    [
      'a cut batch',
      { items: [jobItem(step(2)), skipped(3, 4), jobItem(step(5))], completed: true },
    ],
    ['nothing but a skipped range', { items: [skipped(2, 4)], completed: false }],
  ];

  it.each(results)('%s: the text JSON.stringify(pollBody(JOB_DOMAIN, )) gave', (_name, result) => {
    expect(pollBodyJson(JOB_DOMAIN, JOB_ID, 1, result)).toBe(
      JSON.stringify(pollBody(JOB_DOMAIN, JOB_ID, 1, result)),
    );
  });

  it('serializes one event once for every poll that carries it', () => {
    const e = step(20);
    const before = POLL_EVENT_JSON.encodings;
    for (let i = 0; i < 1000; i++) {
      // Each poll gets its own item around the one event (as from the bus).
      const result: PollResult = { items: [jobItem(e)], completed: false };
      pollBodyJson(JOB_DOMAIN, e.orderId, 19, result);
    }
    expect(POLL_EVENT_JSON.encodings - before).toBe(1);
  });
});
