import { Observable, type Subscriber } from 'rxjs';

/**
 * A multicast feed, as an rxjs `Subject` with only `next` and `complete`, for the stores'
 * event feeds (one value per published event, or per message from Redis). A Subject would
 * do, but its `next()` in rxjs 7's CommonJS build (the one Node loads) allocates a closure
 * and an iterator for every value. Here the subscribers are kept in an array
 * that is replaced, never changed, when one arrives or leaves, so `next()` walks it with
 * no allocation. As with a Subject, a value goes to those subscribed when `next()` began:
 * one that arrives during it gets the next value on, one that leaves during it and has
 * not had the value yet is closed and ignores it.
 */
export class EventFeed<T> {
  private subscribers: readonly Subscriber<T>[] = [];
  private completed = false;

  /** Subscribers get every value from `next()` after they subscribe, then `complete`. */
  readonly observable = new Observable<T>((subscriber) => {
    if (this.completed) {
      subscriber.complete();
      return undefined;
    }
    this.subscribers = [...this.subscribers, subscriber];
    return () => {
      this.subscribers = this.subscribers.filter((s) => s !== subscriber);
    };
  });

  next(value: T): void {
    const subscribers = this.subscribers;
    for (let i = 0; i < subscribers.length; i++) subscribers[i].next(value);
  }

  /** Completes every subscriber; later subscribers complete at once. Idempotent. */
  complete(): void {
    if (this.completed) return;
    this.completed = true;
    const subscribers = this.subscribers;
    this.subscribers = [];
    for (const s of subscribers) s.complete();
  }
}
