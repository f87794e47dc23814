import { cursorAfter, type StreamItem } from '@app/order-domain/order-events';
import type { GapItem } from './types';

/** The first seq an item accounts for (a skipped range starts below its cursor). */
function firstSeq(item: Exclude<StreamItem, { kind: 'reset' }>): number {
  return item.kind === 'skipped' ? item.skipped.fromSeq : cursorAfter(item);
}

/** What to do with one item the service sent. */
export type Admission =
  { readonly accept: false } | { readonly accept: true; readonly gap?: GapItem };

/**
 * The client's resume point and the rules that keep it honest across reconnects:
 * - an item entirely at or below the cursor was seen already (a replay overlapping what
 *   the last connection delivered): dropped and counted as a duplicate;
 * - an item that starts above cursor + 1 leaves seqs nobody accounted for: reported as a
 *   `gap` before it, never hidden;
 * - a `reset` replaces the view whatever the cursor: the service says where it stands
 *   (possibly below the cursor, after it lost history).
 * Every item kind moves the cursor by contracts' `cursorAfter`, so a kind added there
 * needs nothing here.
 */
export class Cursor {
  constructor(private seq: number) {}

  get value(): number {
    return this.seq;
  }

  admit(item: StreamItem): Admission {
    if (item.kind === 'reset') {
      this.seq = cursorAfter(item);
      return { accept: true };
    }
    const last = cursorAfter(item);
    if (last <= this.seq) return { accept: false };
    const first = firstSeq(item);
    const gap: GapItem | undefined =
      first > this.seq + 1 ? { kind: 'gap', fromSeq: this.seq + 1, toSeq: first - 1 } : undefined;
    this.seq = last;
    return gap ? { accept: true, gap } : { accept: true };
  }
}
