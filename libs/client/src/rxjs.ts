import { Observable } from 'rxjs';
import type { EndItem, OrderWatch, WatchItem } from './types';

/** What the Observable emits: every item but the `end`, which becomes complete or error. */
export type WatchValue = Exclude<WatchItem, EndItem>;

/**
 * The watch as an RxJS Observable (`@order-status/client/rxjs`, rxjs an optional peer):
 * every item but `end` as a value; a `completed` or `aborted` end completes it, an
 * `error` end errors it with the `WatchError`. Unsubscribing closes the watch at once,
 * connection included, where `from(watch)` would wait for the next item to notice. One
 * subscription per watch (a watch is iterated once): `share()` it to multicast, or
 * `defer(() => toObservable(watchOrder(...)))` for a cold Observable with a watch each.
 */
export function toObservable(watch: OrderWatch): Observable<WatchValue> {
  return new Observable<WatchValue>((subscriber) => {
    const iterate = async () => {
      for await (const item of watch) {
        if (item.kind !== 'end') subscriber.next(item);
        else if (item.reason === 'error') subscriber.error(item.error);
        else subscriber.complete();
      }
    };
    iterate().catch((err: unknown) => {
      watch.close();
      subscriber.error(err);
    });
    return () => watch.close();
  });
}
