import type { RunDomain } from '../service/service-control';
import type { TransportRun } from './run-options';

/**
 * The run as its server must start: a run that sets a payload size gets
 * `STREAM_DOMAIN=payload` (recorded with its settings), so its events are the load test's
 * own (the payload domain, served on every transport) and not padded order events.
 */
export function inItsDomain(run: TransportRun): TransportRun {
  if (run.payloadBytes <= 0) return run;
  return { ...run, env: { ...run.env, STREAM_DOMAIN: 'payload' } };
}

/** The domain a run's server carries: what its environment says. */
export function domainOf(run: TransportRun): RunDomain {
  return run.env?.STREAM_DOMAIN === 'payload' ? 'payload' : 'order';
}
