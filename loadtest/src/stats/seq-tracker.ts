/** Loss, duplication and ordering as seen by one subscriber of one order. */
export interface SeqCounts {
  readonly received: number;
  /** Seqs that never arrived and that the service did not signal: silent loss (must be 0). */
  readonly lost: number;
  readonly duplicates: number;
  readonly outOfOrder: number;
  /** Seqs the service told us it skipped (a `reset`): honest gaps, counted apart from loss. */
  readonly skippedByReset: number;
  /** Seqs the service said it dropped for this slow subscriber (`skipped` items). */
  readonly skipped: number;
  readonly resets: number;
  readonly highestSeq: number;
}

/**
 * Tracks one subscriber's seqs against the contract "seq increases by exactly 1".
 * In-order delivery (the normal case) costs O(1) and no memory; only gaps are remembered,
 * so a late arrival can be told apart from a duplicate.
 */
export class SeqTracker {
  private highest: number;
  private readonly missing = new Set<number>();
  private received = 0;
  private duplicates = 0;
  private outOfOrder = 0;
  private skippedByReset = 0;
  private skipped = 0;
  private resets = 0;

  /** @param afterSeq the resume point the subscription started from (events > afterSeq are due) */
  constructor(afterSeq: number) {
    if (!Number.isInteger(afterSeq) || afterSeq < 0) {
      throw new TypeError(`afterSeq must be a non-negative integer, got ${afterSeq}`);
    }
    this.highest = afterSeq;
  }

  get highestSeq(): number {
    return this.highest;
  }

  /** Returns false for a duplicate, so a caller can skip its latency sample. */
  observe(seq: number): boolean {
    if (seq === this.highest + 1) {
      this.highest = seq;
      this.received += 1;
      return true;
    }
    if (seq > this.highest) {
      for (let s = this.highest + 1; s < seq; s += 1) this.missing.add(s);
      this.highest = seq;
      this.received += 1;
      return true;
    }
    if (this.missing.delete(seq)) {
      this.outOfOrder += 1;
      this.received += 1;
      return true;
    }
    this.duplicates += 1;
    return false;
  }

  /**
   * The service replaced everything up to `lastSeq` with a snapshot. A `lastSeq` below
   * what the client had means Redis lost events the client was sent (a master died before
   * its replica got them): those seqs will be reused by new events, so tracking starts
   * over from the snapshot instead of taking the new events for duplicates.
   */
  reset(lastSeq: number): void {
    this.resets += 1;
    if (lastSeq < this.highest) {
      for (const s of this.missing) if (s > lastSeq) this.missing.delete(s);
      this.highest = lastSeq;
    }
    for (const s of this.missing) {
      if (s <= lastSeq) {
        this.missing.delete(s);
        this.skippedByReset += 1;
      }
    }
    if (lastSeq > this.highest) {
      this.skippedByReset += lastSeq - this.highest;
      this.highest = lastSeq;
    }
  }

  /**
   * The service dropped `fromSeq..toSeq` for this subscriber and said so (overflow): those
   * seqs are signalled, not lost. Seqs before `fromSeq` still missing stay lost.
   */
  skip(fromSeq: number, toSeq: number): void {
    for (const s of this.missing) {
      if (s >= fromSeq && s <= toSeq) {
        this.missing.delete(s);
        this.skipped += 1;
      }
    }
    if (toSeq <= this.highest) return;
    const start = Math.max(fromSeq, this.highest + 1);
    for (let s = this.highest + 1; s < start; s += 1) this.missing.add(s);
    this.skipped += toSeq - start + 1;
    this.highest = toSeq;
  }

  /** @param lastPublishedSeq the order's last seq at the end of the run (from its snapshot) */
  counts(lastPublishedSeq: number = this.highest): SeqCounts {
    const tail = Math.max(0, lastPublishedSeq - this.highest);
    return {
      received: this.received,
      lost: this.missing.size + tail,
      duplicates: this.duplicates,
      outOfOrder: this.outOfOrder,
      skippedByReset: this.skippedByReset,
      skipped: this.skipped,
      resets: this.resets,
      highestSeq: this.highest,
    };
  }
}

export function sumCounts(all: Iterable<SeqCounts>): Omit<SeqCounts, 'highestSeq'> {
  const total = {
    received: 0,
    lost: 0,
    duplicates: 0,
    outOfOrder: 0,
    skippedByReset: 0,
    skipped: 0,
    resets: 0,
  };
  for (const c of all) {
    total.received += c.received;
    total.lost += c.lost;
    total.duplicates += c.duplicates;
    total.outOfOrder += c.outOfOrder;
    total.skippedByReset += c.skippedByReset;
    total.skipped += c.skipped;
    total.resets += c.resets;
  }
  return total;
}
