import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { ServiceEndpoints } from '../service/launcher';

/** What every attacker needs: where the service listens and whose token to present. */
export interface AttackTarget {
  readonly service: ServiceEndpoints;
  readonly token: string | undefined;
  /** The stream stalled readers follow (large payloads of the payload domain). */
  readonly paddedOrderId: string;
  /** An order that exists, for floods and storms. */
  readonly orderId: string;
}

/** One misbehaving client population; bounded in count, stopped by the scenario. */
export interface Attack {
  readonly name: string;
  /** Starts attacking; returns at once (the attack runs until `stop`). */
  start(): void;
  /** Stops, closes everything it opened, and reports what it did and what it saw. */
  stop(): Promise<Record<string, number | string>>;
}

/** Sizes of one hostile run; `tiny` ones finish in seconds (smoke test). */
export interface AttackSizes {
  readonly stalledPerTransport: number;
  readonly h2Cancels: number;
  readonly slowlorisPerPort: number;
  readonly stormCyclesPerSec: number;
  readonly stormMaxCycles: number;
  readonly oversizedRounds: number;
}

export const bearer = (token: string | undefined): string =>
  token === undefined ? '' : `authorization: Bearer ${token}\r\n`;

/** A raw TCP (or TLS, ALPN http/1.1) socket to the service; errors are counted, not thrown. */
export function rawSocket(t: AttackTarget, tls: boolean, onError: (code: string) => void): Socket {
  const s = tls
    ? tlsConnect({
        host: t.service.host,
        port: t.service.httpsPort,
        rejectUnauthorized: false, // the development certificate
        ALPNProtocols: ['http/1.1'],
      })
    : tcpConnect({ host: t.service.host, port: t.service.httpPort });
  s.on('error', (err: NodeJS.ErrnoException) => onError(err.code ?? 'error'));
  return s;
}

/** Counts by key, for attack reports. */
export class Tally {
  private readonly counts = new Map<string, number>();
  add(key: string, n = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + n);
  }
  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }
  toJSON(prefix: string): Record<string, number> {
    return Object.fromEntries([...this.counts].map(([k, v]) => [`${prefix}${k}`, v]));
  }
}
