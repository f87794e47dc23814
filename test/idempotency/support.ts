import { request } from 'undici';
import type { OrderStatusChanged } from '@app/order-domain';
import { bearer } from '../support/auth';

/**
 * Every event the service still has for `orderId`, read back as a client would (a
 * short-poll from seq 0): the count that tells whether a retry made a second event.
 */
export async function eventsOf(httpUrl: string, orderId: string): Promise<OrderStatusChanged[]> {
  const res = await request(`${httpUrl}/v1/orders/${orderId}/events?after=0&wait=0`, {
    headers: bearer(),
  });
  if (res.statusCode === 204) {
    await res.body.dump();
    return [];
  }
  const body = (await res.body.json()) as { events: OrderStatusChanged[] };
  if (res.statusCode !== 200) throw new Error(`events of ${orderId}: ${res.statusCode}`);
  return body.events;
}
