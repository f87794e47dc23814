import type { ConnectorFactory } from './connector';
import { connectEventSource, EventSourceAuth } from './sse-event-source';
import { connectSseFetch } from './sse-fetch';
import type { WireDomain } from './wire-items';

/** SSE: EventSource where there is one (browsers), fetch elsewhere (Node). */
export const sseConnector: ConnectorFactory<WireDomain> = (opts) => {
  const auth = new EventSourceAuth(opts.baseUrl);
  const { domain } = opts;
  return {
    connect: (req) =>
      opts.useEventSource
        ? connectEventSource(opts.baseUrl, auth, req, domain)
        : connectSseFetch(opts.baseUrl, req, domain),
    close: () => undefined,
  };
};
