import { ResetReason, SkipReason } from '@app/contracts';
import {
  JOB_DOMAIN,
  JobPhase,
  jobItem,
  type JobItem,
  type PhaseChanged,
} from '@app/event-bus/testing/fixture-domain';
import { itemFrame, sseFrames } from './sse-frames';

const SSE_FRAMES = sseFrames(JOB_DOMAIN);

const event = (seq: number): PhaseChanged => ({
  orderId: 'o-ü-"1"-\u{1F600}',
  seq,
  phase: JobPhase.Building,
  previousPhase: JobPhase.Queued,
  publishedAtUs: 1_764_470_000_000_001,
});

describe('SSE_FRAMES', () => {
  const items: [string, JobItem][] = [
    ['a phase change', jobItem(event(7))],
    [
      'a progress report',
      jobItem({ orderId: 'o-1', seq: 8, phase: JobPhase.Testing, publishedAtUs: 2, percent: 40 }),
    ],
    [
      'a reset',
      {
        kind: 'reset',
        reset: {
          reason: ResetReason.Gap,
          snapshot: { orderId: 'o-1', phase: JobPhase.Testing, lastSeq: 9, updatedAtUs: 5 },
        },
      },
    ],
    [
      'a skipped range',
      { kind: 'skipped', skipped: { fromSeq: 3, toSeq: 8, reason: SkipReason.Overflow } },
    ],
  ];

  it.each(items)(
    '%s: the UTF-8 bytes res.write(itemFrame(JOB_DOMAIN, item)) wrote',
    (_name, item) => {
      expect(SSE_FRAMES.get(item).equals(Buffer.from(itemFrame(JOB_DOMAIN, item), 'utf8'))).toBe(
        true,
      );
    },
  );

  it('encodes one event once for every stream that writes it', () => {
    const e = event(10);
    const before = SSE_FRAMES.encodings;
    const frames = new Set(Array.from({ length: 1000 }, () => SSE_FRAMES.get(jobItem(e))));
    expect(SSE_FRAMES.encodings - before).toBe(1);
    expect(frames.size).toBe(1);
  });
});
