import { Subject, type Observable, type Subscription } from 'rxjs';
import { EventFeed } from './event-feed';

/** What a subscriber saw: values, then 'complete'. */
function record<T>(source: Observable<T>, seen: (T | 'complete')[]): Subscription {
  return source.subscribe({ next: (v) => seen.push(v), complete: () => seen.push('complete') });
}

/** The same script against EventFeed and rxjs's Subject, whose behaviour it keeps. */
function script(feed: {
  observable: Observable<number>;
  next(v: number): void;
  complete(): void;
}): (number | 'complete')[][] {
  const a: (number | 'complete')[] = [];
  const b: (number | 'complete')[] = [];
  const c: (number | 'complete')[] = [];
  const d: (number | 'complete')[] = [];
  const late: (number | 'complete')[] = [];
  feed.next(0);
  const subA = record(feed.observable, a);
  let subC: Subscription | undefined;
  // While a value is being delivered, B unsubscribes D (not yet given it) and subscribes
  // C (given values from the next one on); at the next value it unsubscribes A (already
  // given it).
  const subB = feed.observable.subscribe({
    next: (v) => {
      b.push(v);
      if (v === 2) {
        subD.unsubscribe();
        subC = record(feed.observable, c);
      }
      if (v === 3) subA.unsubscribe();
    },
    complete: () => b.push('complete'),
  });
  // Subscribed after B, so B runs first; B only calls it from the second value on.
  const subD = record(feed.observable, d);
  feed.next(1);
  feed.next(2);
  feed.next(3);
  subB.unsubscribe();
  feed.next(4);
  feed.complete();
  feed.complete();
  record(feed.observable, late);
  subC?.unsubscribe();
  return [a, b, c, d, late];
}

describe('EventFeed', () => {
  it('delivers, unsubscribes and completes as an rxjs Subject does', () => {
    const subject = new Subject<number>();
    const expected = script({
      observable: subject.asObservable(),
      next: (v) => subject.next(v),
      complete: () => subject.complete(),
    });
    const feed = new EventFeed<number>();
    expect(script(feed)).toEqual(expected);
    // And what that is, spelled out.
    expect(expected).toEqual([[1, 2, 3], [1, 2, 3], [3, 4, 'complete'], [1], ['complete']]);
  });

  it('keeps delivering to the others when one subscriber throws', () => {
    jest.useFakeTimers();
    try {
      const feed = new EventFeed<number>();
      const seen: number[] = [];
      feed.observable.subscribe(() => {
        throw new Error('subscriber bug');
      });
      feed.observable.subscribe((v) => seen.push(v));
      feed.next(1);
      feed.next(2);
      expect(seen).toEqual([1, 2]);
      // rxjs reports the error asynchronously (config.onUnhandledError, else a throw in a
      // timeout), as it does for a Subject's subscriber.
      expect(() => jest.runOnlyPendingTimers()).toThrow('subscriber bug');
    } finally {
      jest.useRealTimers();
    }
  });
});
