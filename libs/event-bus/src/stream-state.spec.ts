import fc from 'fast-check';
import { StreamState } from './stream-state';
import {
  isTerminalPhase,
  JOB_DOMAIN,
  jobAfter,
  JobPhase,
  type JobEvent,
  type JobSnapshot,
} from './testing/fixture-domain';

const BASE: JobSnapshot = {
  orderId: 'o-1',
  phase: JobPhase.Building,
  lastSeq: 4,
  updatedAtUs: 1_000,
  percent: 30,
  ownerId: 'customer-1',
};

/** An owner the store answers for a state built from events alone. */
const LEARNED_OWNER = 'customer-2';

const PHASES = [JobPhase.Building, JobPhase.Testing, JobPhase.Done];

/** What the state is read with or given, in turn. */
type Op =
  | { readonly op: 'phase'; readonly phase: JobPhase }
  | { readonly op: 'progress'; readonly percent: number }
  | { readonly op: 'read' }
  | { readonly op: 'replace'; readonly withBase: boolean }
  | { readonly op: 'learn' };

const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('phase' as const), phase: fc.constantFrom(...PHASES) }),
    fc.record({ op: fc.constant('progress' as const), percent: fc.integer({ min: 0, max: 100 }) }),
    fc.constant({ op: 'read' as const }),
    fc.record({ op: fc.constant('replace' as const), withBase: fc.boolean() }),
    fc.constant({ op: 'learn' as const }),
  ),
  { maxLength: 60 },
);

function eventFor(op: Op, seq: number, phase: JobPhase): JobEvent {
  const common = { orderId: 'o-1', seq, publishedAtUs: 1_000 + seq };
  if (op.op === 'progress') return { ...common, phase, percent: op.percent };
  return { ...common, phase: op.op === 'phase' ? op.phase : phase };
}

function phaseOf(state: StreamState<JobEvent, JobSnapshot>): JobPhase | undefined {
  return state.newestEvent?.phase ?? state.base?.phase;
}

describe('StreamState', () => {
  it("reads as the domain's fold applied to every event in turn, whenever it is read", () => {
    fc.assert(
      fc.property(ops, fc.boolean(), fc.boolean(), (list, startKnown, withOwner) => {
        // The owner is the stream's: given, a base's, or learned from the store.
        let owner = withOwner ? 'customer-1' : startKnown ? BASE.ownerId : undefined;
        const state = new StreamState(JOB_DOMAIN, startKnown ? BASE : undefined, owner);
        let expected: JobSnapshot | undefined = startKnown ? BASE : undefined;
        for (const op of list) {
          expect(state.ownerId).toBe(owner);
          expect(state.ownerKnown).toBe(owner !== undefined || state.ownerKnown);
          if (op.op === 'read') {
            expect(state.snapshot()).toStrictEqual(expected);
            // Key order too: it is the JSON's field order on the wire.
            expect(JSON.stringify(state.snapshot())).toBe(JSON.stringify(expected));
          } else if (op.op === 'replace') {
            expected = op.withBase ? BASE : undefined;
            owner = expected?.ownerId;
            state.replace(expected);
            expect(state.ownerKnown).toBe(expected !== undefined);
          } else if (op.op === 'learn') {
            if (state.ownerKnown) continue;
            owner = LEARNED_OWNER;
            state.learnOwner(owner);
            if (expected !== undefined) expected = { ...expected, ownerId: owner };
          } else {
            const event = eventFor(op, state.lastSeq + 1, phaseOf(state) ?? JobPhase.Queued);
            expected = jobAfter(expected, event, owner);
            state.apply(event);
          }
          expect(state.lastSeq).toBe(expected?.lastSeq ?? 0);
          expect(phaseOf(state)).toBe(expected?.phase);
          expect(state.terminal).toBe(
            expected === undefined ? undefined : isTerminalPhase(expected.phase),
          );
          expect(state.known).toBe(expected !== undefined);
        }
        expect(state.snapshot()).toStrictEqual(expected);
      }),
    );
  });

  it("seeded with a store's snapshot ahead of its events, reads as the whole stream's fold once they reach it", () => {
    const stream = fc.array(
      fc.record({
        progress: fc.boolean(),
        phase: fc.constantFrom(...PHASES),
        percent: fc.integer({ min: 0, max: 100 }),
        read: fc.boolean(),
      }),
      { minLength: 2, maxLength: 30 },
    );
    fc.assert(
      fc.property(stream, fc.nat(), fc.nat(), fc.nat(), (steps, a, b, c) => {
        const events: JobEvent[] = steps.map((s, i) => {
          const common = { orderId: 'o-1', seq: i + 1, phase: s.phase, publishedAtUs: 1_000 + i };
          return s.progress ? { ...common, percent: s.percent } : common;
        });
        const folds: JobSnapshot[] = [];
        for (const e of events) folds.push(jobAfter(folds.at(-1), e, BASE.ownerId));
        // Indexes into `events`: the feed's first event, the one after which the store's
        // answer arrives, and the one that answer is as of (later than the feed reached).
        const n = events.length;
        const first = a % n;
        const seededAt = first + (b % (n - first));
        if (seededAt === n - 1) return;
        const seedSeq = seededAt + 1 + (c % (n - seededAt - 1));
        const state = new StreamState(JOB_DOMAIN);
        for (let i = first; i < events.length; i++) {
          state.apply(events[i]);
          if (i === seededAt) state.seedAhead(folds[seedSeq]);
          if (i > seededAt) expect(state.ownerId).toBe(BASE.ownerId);
          if (steps[i].read || i === events.length - 1) {
            const read = state.snapshot();
            if (i >= seedSeq) expect(read).toStrictEqual(folds[i]);
          }
        }
      }),
    );
  });

  it('builds no snapshot while nobody reads it, then one shared by every reader', () => {
    const state = new StreamState(JOB_DOMAIN, BASE);
    const before = state.snapshot();
    state.apply({ orderId: 'o-1', seq: 5, phase: JobPhase.Testing, publishedAtUs: 2_000 });
    expect(state.lastSeq).toBe(5);
    const after = state.snapshot();
    expect(after).not.toBe(before);
    expect(state.snapshot()).toBe(after);
    expect(after).toMatchObject({ lastSeq: 5, percent: BASE.percent });
    // The base's owner is the stream's: the events folded onto it keep it.
    expect(after).toHaveProperty('ownerId', BASE.ownerId);
  });

  it("learns a feed-built state's owner once, and the snapshot already built gains it", () => {
    const state = new StreamState(JOB_DOMAIN);
    state.apply({ orderId: 'o-1', seq: 1, phase: JobPhase.Queued, publishedAtUs: 1_000 });
    const ownerless = state.snapshot();
    expect(ownerless).not.toHaveProperty('ownerId');
    expect(state.ownerKnown).toBe(false);
    state.learnOwner(LEARNED_OWNER);
    expect(state.ownerKnown).toBe(true);
    expect(state.snapshot()).toStrictEqual({ ...ownerless, ownerId: LEARNED_OWNER });
    state.apply({ orderId: 'o-1', seq: 2, phase: JobPhase.Building, publishedAtUs: 2_000 });
    expect(state.snapshot()).toHaveProperty('ownerId', LEARNED_OWNER);
  });

  it('settles a stream without an owner too, so the store is asked once', () => {
    const state = new StreamState(JOB_DOMAIN);
    state.apply({ orderId: 'o-1', seq: 1, phase: JobPhase.Queued, publishedAtUs: 1_000 });
    state.learnOwner(undefined);
    expect(state.ownerKnown).toBe(true);
    expect(state.snapshot()).not.toHaveProperty('ownerId');
  });
});
