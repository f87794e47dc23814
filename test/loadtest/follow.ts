import type { Connector, StreamHandlers } from '../../loadtest/src/clients/transport';

/** Follows one order through a load-test connector to its end; resolves with what the handlers saw. */
export function follow(connector: Connector, orderId: string): Promise<string[]> {
  return new Promise((resolve) => {
    const seen: string[] = [];
    const handlers: StreamHandlers = {
      onOpen: () => seen.push('open'),
      onEvent: (e) => seen.push(`event ${e.seq}`),
      onReset: (r) => seen.push(`reset ${r.reason}`),
      onSkipped: (s) => seen.push(`skipped ${s.fromSeq}..${s.toSeq}`),
      onEnd: (reason) => resolve([...seen, `end ${reason}`]),
      onError: (code) => resolve([...seen, `error ${code}`]),
    };
    connector.open(orderId, 0, handlers);
  });
}
