import type { ConnectorFactory } from './connector';
import { connectEventSource, EventSourceAuth } from './sse-event-source';
import { connectSseFetch } from './sse-fetch';

/** SSE: EventSource where there is one (browsers), fetch elsewhere (Node). */
export const sseConnector: ConnectorFactory = (opts) => {
  const auth = new EventSourceAuth(opts.baseUrl);
  return {
    connect: (req) =>
      opts.useEventSource
        ? connectEventSource(opts.baseUrl, auth, req)
        : connectSseFetch(opts.baseUrl, req),
    close: () => undefined,
  };
};
