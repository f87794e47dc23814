import type { Connector, OpenStream, StreamHandlers, TransportName } from './transport';

/**
 * Connectors kept after a renewal, newest first: the streams they opened end with their
 * token (`token_expired`), so a connector two renewals old (its token past expiry when
 * renewals come every half lifetime) holds nothing and is closed.
 */
export const RETIRED_CONNECTORS_KEPT = 2;

/**
 * A connector whose bearer token is replaced before it expires, as a real client renews
 * its credentials: streams open with the token current at the time, keep it until the
 * service ends them (`token_expired`) or they end otherwise, and resume with the newer
 * one. Each token gets a connector of its own, because a connector presents one token.
 */
export class RenewingConnector implements Connector {
  private current: Connector;
  private readonly retired: Connector[] = [];
  private closedRequests = 0;

  constructor(
    private readonly make: (token: string) => Connector,
    token: string,
  ) {
    this.current = make(token);
  }

  get transport(): TransportName {
    return this.current.transport;
  }

  get requests(): number {
    return (
      this.closedRequests +
      this.current.requests +
      this.retired.reduce((sum, c) => sum + c.requests, 0)
    );
  }

  /** New streams present `token`; the oldest retired connector past the kept ones closes. */
  async renew(token: string): Promise<void> {
    this.retired.unshift(this.current);
    this.current = this.make(token);
    const old = this.retired.splice(RETIRED_CONNECTORS_KEPT);
    for (const c of old) this.closedRequests += c.requests;
    await Promise.all(old.map((c) => c.close()));
  }

  open(orderId: string, afterSeq: number, handlers: StreamHandlers): OpenStream {
    return this.current.open(orderId, afterSeq, handlers);
  }

  async close(): Promise<void> {
    await Promise.all([this.current, ...this.retired].map((c) => c.close()));
  }
}
