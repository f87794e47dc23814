/**
 * A small domain the engine's specs run on, so they prove the engine carries any domain
 * rather than the order's (docs/adapting.md): a build job whose stream has two event
 * kinds (phase changes and progress reports, for per-kind folding and conflation) and a
 * life cycle with two terminal phases (for `completed` ends). Not exported from the
 * library's index.
 */
import {
  ErrorCode,
  GatewayError,
  type AppendRule,
  type DomainAppend,
  type DomainEvent,
  type DomainSnapshot,
  type EventDraft,
  type ResetItem,
  type SkippedItem,
  type StreamDomain,
} from '@app/contracts';

/** A job's life cycle, in order: it moves forward only and ends `done` or `failed`. */
export enum JobPhase {
  Queued = 'queued',
  Building = 'building',
  Testing = 'testing',
  Deploying = 'deploying',
  Done = 'done',
  Failed = 'failed',
}

const PHASE_SEQUENCE: readonly JobPhase[] = [
  JobPhase.Queued,
  JobPhase.Building,
  JobPhase.Testing,
  JobPhase.Deploying,
  JobPhase.Done,
];
const PHASES: readonly JobPhase[] = Object.values(JobPhase);

/** Phases in which a job reports progress: before it builds there is none, after it ends none. */
const PROGRESS_PHASES: readonly JobPhase[] = [
  JobPhase.Building,
  JobPhase.Testing,
  JobPhase.Deploying,
];

export function isTerminalPhase(phase: JobPhase): boolean {
  return phase === JobPhase.Done || phase === JobPhase.Failed;
}

/** Whether `next` may follow `current` (undefined: no job yet): forward, or `failed` at any time. */
export function canMove(current: JobPhase | undefined, next: JobPhase): boolean {
  if (current === undefined) return next === JobPhase.Queued;
  if (isTerminalPhase(current)) return false;
  if (next === JobPhase.Failed) return true;
  return PHASE_SEQUENCE.indexOf(next) > PHASE_SEQUENCE.indexOf(current);
}

/** A change of the job's phase. */
export interface PhaseChanged extends DomainEvent {
  readonly phase: JobPhase;
  /** The phase it left; absent on the first event (`queued`). */
  readonly previousPhase?: JobPhase;
  /** Never set: keeps a progress report from type-checking as a phase change. */
  readonly percent?: never;
}

/** Progress within a phase; it carries the phase, so the newest event alone tells the state. */
export interface ProgressReported extends DomainEvent {
  readonly phase: JobPhase;
  readonly percent: number;
}

export type JobEvent = PhaseChanged | ProgressReported;

export interface JobSnapshot extends DomainSnapshot {
  readonly phase: JobPhase;
  /** The newest progress report's percentage, once there has been one. */
  readonly percent?: number;
}

export function isProgress(event: JobEvent): event is ProgressReported {
  return (event as Partial<ProgressReported>).percent !== undefined;
}

/** A job stream's items: phase changes travel as `step`, progress reports as `progress`. */
export type JobItem =
  | { readonly kind: 'step'; readonly step: PhaseChanged }
  | { readonly kind: 'progress'; readonly progress: ProgressReported }
  | ResetItem<JobSnapshot>
  | SkippedItem;

/** The item that delivers `event`. */
export function jobItem(event: JobEvent): JobItem {
  return isProgress(event) ? { kind: 'progress', progress: event } : { kind: 'step', step: event };
}

/** The job's state after `event`; like every domain's fold it reads only the newest event per kind. */
export function jobAfter(
  previous: JobSnapshot | undefined,
  event: JobEvent,
  ownerId?: string,
): JobSnapshot {
  const percent = isProgress(event) ? event.percent : previous?.percent;
  return {
    orderId: event.orderId,
    phase: event.phase,
    lastSeq: event.seq,
    updatedAtUs: event.publishedAtUs,
    ...(percent !== undefined ? { percent } : {}),
    ...(ownerId !== undefined ? { ownerId } : {}),
  };
}

function refusal(orderId: string, phase: string | undefined, what: string): GatewayError {
  return phase === undefined
    ? new GatewayError(ErrorCode.NotFound, `job ${orderId} does not exist`)
    : new GatewayError(ErrorCode.FailedPrecondition, `job ${orderId} is ${phase}: ${what}`);
}

function phaseRule(next: JobPhase): AppendRule {
  return {
    creates: canMove(undefined, next),
    follows: PHASES.filter((p) => canMove(p, next)),
    phase: next,
    priorPhaseField: 'previousPhase',
    ends: isTerminalPhase(next),
    refusal: (orderId, phase) => refusal(orderId, phase, `it cannot move to ${next}`),
  };
}

const PHASE_RULES = new Map(PHASES.map((p) => [p, phaseRule(p)] as const));

const PROGRESS_RULE: AppendRule = {
  creates: false,
  follows: PROGRESS_PHASES,
  priorPhaseField: 'phase',
  keeps: { field: 'progress', of: ['percent'] },
  ends: false,
  refusal: (orderId, phase) => refusal(orderId, phase, 'it reports no progress'),
};

const JOB_APPEND: DomainAppend<JobEvent, JobSnapshot> = {
  phaseField: 'phase',
  rule: (draft) => ('percent' in draft ? PROGRESS_RULE : phaseRuleOf(draft.phase)),
  snapshotOf: ({ orderId, lastSeq, updatedAtUs, phase, fields }) => {
    if (!PHASES.includes(phase as JobPhase)) return undefined;
    const progress = fields.progress;
    const percent =
      progress === undefined ? undefined : (JSON.parse(progress) as JobSnapshot).percent;
    return {
      orderId,
      phase: phase as JobPhase,
      lastSeq,
      updatedAtUs,
      ...(percent !== undefined ? { percent } : {}),
      ...(fields.ownerId !== undefined ? { ownerId: fields.ownerId } : {}),
    };
  },
};

function phaseRuleOf(phase: JobPhase | undefined): AppendRule {
  const rule = phase === undefined ? undefined : PHASE_RULES.get(phase);
  if (rule === undefined) throw new GatewayError(ErrorCode.InvalidArgument, 'unknown job phase');
  return rule;
}

/** Field by field, as @grpc/proto-loader would present a message with the same fields. */
function jobEventFromProto(arm: string, message: unknown): JobEvent {
  const m = message as Partial<Record<keyof ProgressReported | 'previousPhase', unknown>> | null;
  if (typeof m?.orderId !== 'string' || !PHASES.includes(m.phase as JobPhase)) {
    throw new TypeError(`not a job event at ${arm}`);
  }
  const common = {
    orderId: m.orderId,
    seq: Number(m.seq),
    phase: m.phase as JobPhase,
    publishedAtUs: Number(m.publishedAtUs),
  };
  if (arm === 'progress') return { ...common, percent: Number(m.percent) };
  return m.previousPhase === undefined
    ? common
    : { ...common, previousPhase: m.previousPhase as JobPhase };
}

/**
 * The job domain: a phase change is the item `step` (`phase` on the JSON transports, so
 * an item kind and its wire name differ as they may in any domain), a progress report the
 * item `progress`; a job finishes `done` or `failed`.
 */
export const JOB_DOMAIN: StreamDomain<JobEvent, JobSnapshot> = {
  name: 'job',
  kinds: [
    { itemKind: 'progress', wireName: 'progress', protoArm: 'progress', is: isProgress },
    { itemKind: 'step', wireName: 'phase', protoArm: 'step', is: (e) => !isProgress(e) },
  ],
  isTerminal: (event) => isTerminalPhase(event.phase),
  isTerminalSnapshot: (snapshot) => isTerminalPhase(snapshot.phase),
  fold: jobAfter,
  proto: {
    snapshotField: 'snapshot',
    eventToProto: (event) => ({ ...event }),
    snapshotToProto: (snapshot) => ({ ...snapshot }),
    eventFromProto: jobEventFromProto,
    snapshotFromProto: (message) => {
      const m = message as Partial<JobSnapshot> | null;
      if (typeof m?.orderId !== 'string' || !PHASES.includes(m.phase as JobPhase)) {
        throw new TypeError('not a job snapshot');
      }
      return {
        orderId: m.orderId,
        phase: m.phase as JobPhase,
        lastSeq: Number(m.lastSeq),
        updatedAtUs: Number(m.updatedAtUs),
        ...(m.percent !== undefined ? { percent: Number(m.percent) } : {}),
      };
    },
  },
  append: JOB_APPEND,
};

/** What the job's publish needs of a store: an in-process one appends synchronously. */
export interface JobAppender {
  appendSync?(draft: EventDraft<JobEvent>, rule: AppendRule): JobEvent;
}

function appendNow(store: JobAppender, draft: EventDraft<JobEvent>): JobEvent {
  if (store.appendSync === undefined) throw new TypeError('this store cannot append synchronously');
  return store.appendSync(draft, JOB_APPEND.rule(draft));
}

/** Moves job `orderId` to `phase` under the life cycle (the store refuses what it forbids). */
export function publishPhaseSync(
  store: JobAppender,
  orderId: string,
  phase: JobPhase,
): PhaseChanged {
  return appendNow(store, { orderId, phase }) as PhaseChanged;
}

/** Reports progress on job `orderId` (refused while it is queued or has ended). */
export function publishProgressSync(
  store: JobAppender,
  orderId: string,
  percent: number,
): ProgressReported {
  return appendNow(store, { orderId, percent }) as ProgressReported;
}
