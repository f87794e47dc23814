import { request } from 'undici';
import { OrderStatus, type OrderEvent } from '@app/order-domain';
import { waitFor } from '../support/wait-for';
import { followOrder, type StackEndpoints } from './resuming-clients';

export interface FailoverOptions {
  readonly endpoints: StackEndpoints;
  /** A fresh order id: the scenario takes it from created (seq 1) to delivered (seq 12). */
  readonly orderId: string;
  /** Runs once every client streams (seq 1): checks that need live clients. */
  readonly whileStreaming?: () => Promise<void>;
  /** Kills one instance (SIGKILL) after seq 6 reached every client. */
  readonly kill: () => Promise<void>;
  readonly timeoutMs?: number;
  /** What else a timed-out wait should show (the stack's last log lines). */
  readonly failureContext?: () => string;
}

/** What every client must receive: the order's seqs from created to delivered, once each. */
export const FAILOVER_SEQS: readonly number[] = Array.from({ length: 12 }, (_, i) => i + 1);

/** Each client's seqs by name, after the order completed (1..12 when nothing was lost). */
export type FailoverResult = ReadonlyMap<string, readonly number[]>;

/**
 * The order goes through its life cycle while clients on every transport follow it through
 * nginx; an instance dies half way; the publisher and the clients carry on through the
 * survivor. Returns what each client received.
 */
export async function runFailover(o: FailoverOptions): Promise<FailoverResult> {
  const timeoutMs = o.timeoutMs ?? 20_000;
  const { http, token } = o.endpoints;
  /** A status change, or (`'tracking'`) a tracking update of the shipped order. */
  const publish = async (status: OrderStatus | 'tracking'): Promise<OrderEvent> => {
    const tracking = status === 'tracking';
    const res = await request(
      `${http}/v1/orders/${o.orderId}/${tracking ? 'tracking' : 'status'}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(
          tracking ? { location: { lat: 52.5, lon: 13.4 }, etaMs: 1_900_000_000_000 } : { status },
        ),
      },
    );
    // Right after the kill nginx may still send a POST over a kept-alive connection to
    // the dead instance; the reset means it never got there, but nginx does not resend
    // non-idempotent requests: it answers 502, and this publisher retries.
    if (res.statusCode === 502) {
      await res.body.dump();
      return publish(status);
    }
    if (res.statusCode !== 201) {
      throw new Error(`publish ${status}: ${res.statusCode} ${await res.body.text()}`);
    }
    return (await res.body.json()) as OrderEvent;
  };

  await publish(OrderStatus.Created);
  const clients = followOrder(o.endpoints, o.orderId);
  // A timed-out wait names each client's seqs and last failure, not just the condition.
  const waitForClients = async (check: () => boolean, message: string) => {
    try {
      await waitFor(check, message, timeoutMs);
    } catch (e) {
      const context = o.failureContext?.() ?? '';
      throw new Error(`${(e as Error).message}\n${clients.describe()}\n${context}`.trimEnd());
    }
  };
  try {
    await waitForClients(() => clients.allSaw(1), 'every client to see the created event');
    await o.whileStreaming?.();
    for (const step of [
      OrderStatus.Paid,
      OrderStatus.Packed,
      OrderStatus.Shipped,
      'tracking',
      'tracking',
    ] as const) {
      await publish(step); // 2..6
    }
    await waitForClients(() => clients.allSaw(6), 'seq 6 everywhere');
    await o.kill();
    for (let i = 0; i < 5; i++) await publish('tracking'); // 7..11, the instance is gone
    await publish(OrderStatus.Delivered); // 12
    await waitForClients(
      () => clients.allSaw(12) && clients.allDone(),
      'every client to reach the end through the survivor',
    );
    return new Map([...clients.seen].map(([name, seqs]) => [name, [...seqs]]));
  } finally {
    clients.close();
  }
}
