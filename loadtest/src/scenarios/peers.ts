import type { TransportName } from '../clients/transport';
import { nchanAvailable } from '../nchan/nchan-server';
import type { RunContext, ServerKind } from './run-options';

/** What Nchan can stand beside: its EventSource, long-poll and (raw) WebSocket subscribers. */
export const NCHAN_TRANSPORTS: readonly TransportName[] = ['sse', 'longpoll', 'ws'];

/**
 * Where the overhead scenario runs the framework floors too (Fastify alone, and NestJS on
 * Fastify): long-poll, where every answer is a request through the framework (a streamed
 * event is a write on a response the framework no longer sees). Broadcast does not: its
 * question is the cost per delivery of one event written many times, which the floors do
 * not change.
 */
export const FLOOR_TRANSPORTS: readonly TransportName[] = ['longpoll', 'longpoll-h2'];

let nchanReason: string | undefined;
let nchanChecked = false;

/**
 * The servers a comparison runs for one transport: the service, the bare Node server, the
 * framework floors for overhead's long-poll, and Nchan where it serves that transport and
 * is installed. A missing Nchan is said once per scenario and transport, with the reason,
 * and the run goes on without it.
 */
export function comparedServers(
  ctx: RunContext,
  scenario: string,
  transport: TransportName,
): ServerKind[] {
  const servers: ServerKind[] =
    scenario === 'overhead' && FLOOR_TRANSPORTS.includes(transport)
      ? ['nest', 'bare', 'fastify', 'floor']
      : ['nest', 'bare'];
  if (!NCHAN_TRANSPORTS.includes(transport)) return servers;
  if (!nchanChecked) {
    nchanChecked = true;
    const a = nchanAvailable();
    nchanReason = a.ok ? undefined : a.reason;
  }
  if (nchanReason === undefined) return [...servers, 'nchan'];
  ctx.progress(`[${scenario} ${transport}] SKIPPED Nchan: ${nchanReason}`, true);
  return servers;
}

/** Variant label of a compared server's run. */
export function serverLabel(server: ServerKind, transport: TransportName): string {
  if (server === 'bare') return 'bare node';
  if (server === 'floor') return 'nest floor';
  if (server === 'fastify') return 'fastify floor';
  if (server === 'nchan') return transport === 'ws' ? 'nchan (raw websocket)' : 'nchan';
  return 'nest';
}
