/**
 * The files `npm run domain:new` writes for a new domain: a descriptor with a two-phase
 * life cycle (a stream opens, takes notes, closes), and its publish route. A starting
 * point to edit, small enough to read in full (docs/adapting.md).
 */

/** The spellings of a domain's name the generated code uses. */
export interface DomainNames {
  /** As given and in paths, routes and wire names: `ticket`. */
  readonly name: string;
  /** Types and classes: `Ticket`. */
  readonly type: string;
  /** Constants: `TICKET`. */
  readonly constant: string;
}

const NAME = /^[a-z][a-z0-9]{1,30}$/;

/** @throws TypeError for a name that is not one lower-case word (letters, then digits). */
export function domainNames(name: string): DomainNames {
  if (!NAME.test(name)) {
    throw new TypeError(`a domain name is one lower-case word (${NAME.source}): ${name}`);
  }
  return { name, type: name[0].toUpperCase() + name.slice(1), constant: name.toUpperCase() };
}

/** libs/<name>-domain/src/<name>-domain.ts: the events, the life cycle, the descriptor. */
export function descriptorSource({ name, type, constant }: DomainNames): string {
  return `import { ErrorCode, GatewayError } from '@app/contracts/gateway-error';
import type {
  AppendOptions,
  AppendRule,
  DomainEvent,
  DomainSnapshot,
  EventDraft,
  StoredStream,
  StreamDomain,
} from '@app/contracts/stream-domain';

/** A ${name} is open until it is closed; nothing follows its closing. */
export type ${type}Phase = 'open' | 'closed';

/** One change of a ${name}: its phase after it and a note. */
export interface ${type}Event extends DomainEvent {
  readonly phase: ${type}Phase;
  /** The phase before it (absent on the event that opened the stream). */
  readonly previousPhase?: ${type}Phase;
  readonly note: string;
}

/** A ${name} as its newest event left it. */
export interface ${type}Snapshot extends DomainSnapshot {
  readonly phase: ${type}Phase;
  readonly note: string;
}

/** Longest note a publish may carry. */
export const MAX_${constant}_NOTE_LENGTH = 500;

/** Why a change was refused: no such stream, or one already closed. */
function refusal(orderId: string, phase: string | undefined): GatewayError {
  return phase === undefined
    ? new GatewayError(ErrorCode.NotFound, \`${name} \${orderId} not found\`)
    : new GatewayError(ErrorCode.FailedPrecondition, \`${name} \${orderId} is \${phase}\`);
}

/** The life cycle as the data a store applies atomically (the Redis store in its script). */
const RULES: Readonly<Record<${type}Phase, AppendRule>> = {
  open: {
    creates: true,
    follows: ['open'],
    phase: 'open',
    priorPhaseField: 'previousPhase',
    keeps: { field: 'last', of: ['note'] },
    ends: false,
    refusal,
  },
  closed: {
    creates: false,
    follows: ['open'],
    phase: 'closed',
    priorPhaseField: 'previousPhase',
    keeps: { field: 'last', of: ['note'] },
    ends: true,
    refusal,
  },
};

function isPhase(value: unknown): value is ${type}Phase {
  return value === 'open' || value === 'closed';
}

/** The note a field-keeping store (Redis) kept with the stream ('' when unreadable). */
function storedNote(json: string | undefined): string {
  try {
    const note = (JSON.parse(json ?? '{}') as { note?: unknown }).note;
    return typeof note === 'string' ? note : '';
  } catch {
    return '';
  }
}

function eventOf(message: unknown): ${type}Event {
  const m = message as Partial<${type}Event> | null;
  if (typeof m?.orderId !== 'string' || !isPhase(m.phase)) throw new TypeError('not a ${name} event');
  return {
    orderId: m.orderId,
    seq: Number(m.seq),
    publishedAtUs: Number(m.publishedAtUs),
    phase: m.phase,
    ...(isPhase(m.previousPhase) ? { previousPhase: m.previousPhase } : {}),
    note: String(m.note ?? ''),
  };
}

export const ${constant}_DOMAIN: StreamDomain<${type}Event, ${type}Snapshot> = {
  name: '${name}',
  kinds: [{ itemKind: 'event', wireName: '${name}', protoArm: '${name}', is: () => true }],
  isTerminal: (event) => event.phase === 'closed',
  isTerminalSnapshot: (snapshot) => snapshot.phase === 'closed',
  // The owner is the stream's: every snapshot carries it, a reset's as the store's read.
  fold: (_previous, event, ownerId) => ({
    orderId: event.orderId,
    lastSeq: event.seq,
    updatedAtUs: event.publishedAtUs,
    phase: event.phase,
    note: event.note,
    ...(ownerId !== undefined ? { ownerId } : {}),
  }),
  // What the watch CLI prints after an event's seq, kind and latency, and for a reset.
  summary: (event) => (event.note ? \`\${event.phase}: \${event.note}\` : event.phase),
  snapshotSummary: (snapshot) => snapshot.phase,
  // Its gRPC messages: \`${name}\` (the event) and \`${name}_snapshot\` (a reset's snapshot)
  // are the names the two proto files need (docs/adapting.md).
  proto: {
    snapshotField: '${name}Snapshot',
    eventToProto: (event) => ({ ...event }),
    snapshotToProto: (snapshot) => ({ ...snapshot }),
    eventFromProto: (_arm, message) => eventOf(message),
    snapshotFromProto: (message) => {
      const m = message as Partial<${type}Snapshot> | null;
      return {
        orderId: String(m?.orderId ?? ''),
        lastSeq: Number(m?.lastSeq ?? 0),
        updatedAtUs: Number(m?.updatedAtUs ?? 0),
        phase: isPhase(m?.phase) ? m.phase : 'open',
        note: String(m?.note ?? ''),
        ...(m?.ownerId ? { ownerId: m.ownerId } : {}),
      };
    },
  },
  append: {
    phaseField: 'phase',
    rule: (draft) => RULES[(draft as Partial<${type}Event>).phase === 'closed' ? 'closed' : 'open'],
    snapshotOf: (stored: StoredStream) =>
      isPhase(stored.phase)
        ? {
            orderId: stored.orderId,
            lastSeq: stored.lastSeq,
            updatedAtUs: stored.updatedAtUs,
            phase: stored.phase,
            note: storedNote(stored.fields.last),
            ...(stored.fields.ownerId !== undefined ? { ownerId: stored.fields.ownerId } : {}),
          }
        : undefined,
  },
};

/** A change to publish: the phase after it and a note. */
export interface ${type}Command extends AppendOptions {
  readonly orderId: string;
  readonly phase: string;
  readonly note: string;
}

/** What publish${type} needs of a store (\`StreamStore.append\`). */
export interface ${type}Appender {
  append(draft: EventDraft, rule: AppendRule, options?: AppendOptions): Promise<DomainEvent>;
}

/**
 * Publishes a change (the first, \`open\`, creates the stream).
 * @throws GatewayError InvalidArgument for an unknown phase or a note too long; NotFound
 *   or FailedPrecondition from the life cycle; Unavailable when the store is down.
 */
export async function publish${type}(store: ${type}Appender, cmd: ${type}Command): Promise<${type}Event> {
  const { orderId, phase, note, ownerId, idempotencyKey, traceContext } = cmd;
  if (!isPhase(phase)) throw new GatewayError(ErrorCode.InvalidArgument, 'phase must be open or closed');
  if (note.length > MAX_${constant}_NOTE_LENGTH) {
    throw new GatewayError(
      ErrorCode.InvalidArgument,
      \`note must be at most \${MAX_${constant}_NOTE_LENGTH} characters\`,
    );
  }
  const draft = { orderId, phase, note };
  const options = { ownerId, idempotencyKey, traceContext };
  return (await store.append(draft, RULES[phase], options)) as ${type}Event;
}
`;
}

/** apps/order-status/src/<name>/<name>.controller.ts: the publish route and its body. */
export function controllerSource({ name, type, constant }: DomainNames): string {
  return `import { Body, Controller, Headers, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import type { FastifyReply } from 'fastify';
import { ownerForNewOrder, Scope, type Principal } from '@app/auth';
import { MAX_${constant}_NOTE_LENGTH, publish${type}, type ${type}Event } from '@app/${name}-domain';
import { isReplay, StreamStore } from '@app/store';
import { CurrentPrincipal, RequireScopes } from '../auth/auth.decorators';
import { OrderIdPipe } from '../orders/order-id.pipe';
import { OrderPublisher } from '../orders/order-publisher';
import { IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from '../orders/publish-headers';
import { RestPublishOrigin, type PublishOrigin } from '../tracing/trace-headers';

/** \`POST /v1/streams/:orderId/${name}\`: the phase after the change and its note. */
export class Publish${type}Dto {
  @IsIn(['open', 'closed'])
  readonly phase!: string;

  @IsString()
  @MaxLength(MAX_${constant}_NOTE_LENGTH)
  readonly note!: string;
}

/**
 * The ${name} domain's publish route (STREAM_DOMAIN=${name}), with the checks and spans of
 * every publish: \`orders:write\`, the rate limit, \`Idempotency-Key\`, the owner of a new
 * stream, the caller's \`traceparent\`.
 */
@Controller('v1/streams')
@ApiExcludeController()
export class ${type}Controller {
  constructor(
    @Inject(OrderPublisher) private readonly publisher: OrderPublisher,
    @Inject(StreamStore) private readonly store: StreamStore,
  ) {}

  /** Publishes a change on the stream (\`open\` creates it); 201. */
  @Post(':orderId/${name}')
  @HttpCode(201)
  @RequireScopes(Scope.OrdersWrite)
  async publish(
    @Param('orderId', OrderIdPipe) orderId: string,
    @Body() body: Publish${type}Dto,
    @Headers(IDEMPOTENCY_KEY_HEADER) rawIdempotencyKey: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @RestPublishOrigin() origin: PublishOrigin,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<${type}Event> {
    const caller = { principal, rawKey: rawIdempotencyKey, keyField: 'Idempotency-Key', origin };
    const event = await this.publisher.publish(caller, { orderId, kind: '${name}' }, (options) =>
      publish${type}(this.store, {
        orderId,
        phase: body.phase,
        note: body.note,
        ownerId: ownerForNewOrder(principal, undefined),
        ...options,
      }),
    );
    if (isReplay(event)) void reply.header(REPLAYED_HEADER, 'true');
    return event;
  }
}
`;
}

/** apps/order-status/src/<name>/<name>.module.ts. */
export function moduleSource({ name, type }: DomainNames): string {
  return `import { Module } from '@nestjs/common';
import { OrderPublishModule } from '../orders/order-publish.module';
import { ${type}Controller } from './${name}.controller';

/** The ${name} domain's publish route (STREAM_DOMAIN=${name}). */
@Module({ imports: [OrderPublishModule], controllers: [${type}Controller] })
export class ${type}Module {}
`;
}
