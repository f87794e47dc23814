import {
  isTrackingUpdate,
  snapshotAfter,
  type OrderEvent,
  type OrderSnapshot,
  type OrderStatus,
  type TrackingUpdated,
} from '@app/contracts';

/**
 * One order's state as its events are applied, built into an `OrderSnapshot` only when
 * somebody reads it. The store and the bus apply every published event, but on the hot
 * path they only need the last seq and status, so building the snapshot (and its
 * tracking object) for each event would be garbage per delivery. Applying keeps a reference to the
 * event instead; `snapshot()` folds what was applied since the last read.
 *
 * The fold is exact: a snapshot takes every field but `tracking` from the newest event,
 * and `tracking` from the newest tracking update (or from the base when none came since),
 * so `snapshotAfter(snapshotAfter(base, newestTracking), newest)` equals `snapshotAfter`
 * applied to every event in turn (order-state.spec.ts checks it against that fold).
 */
export class OrderState {
  /** The snapshot as of the last read or replacement. */
  private built: OrderSnapshot | undefined;
  /** The newest event applied since `built`, if any. */
  private newest: OrderEvent | undefined;
  /** The newest tracking update applied since `built`, if any. */
  private newestTracking: TrackingUpdated | undefined;

  /**
   * @param base the state to start from (undefined: nothing known yet)
   * @param ownerId carried on every snapshot built (the store's keep the owner; the bus's
   *   do not, as `snapshotAfter` without one)
   */
  constructor(
    base?: OrderSnapshot,
    readonly ownerId?: string,
  ) {
    this.built = base;
  }

  /** Whether any state is known (a base or an applied event). */
  get known(): boolean {
    return this.newest !== undefined || this.built !== undefined;
  }

  /** Seq of the newest event, 0 when nothing is known. */
  get lastSeq(): number {
    return this.newest?.seq ?? this.built?.lastSeq ?? 0;
  }

  /** The status after the newest event; undefined when nothing is known. */
  get status(): OrderStatus | undefined {
    return this.newest?.status ?? this.built?.status;
  }

  /** Applies the next event (the caller has checked that it follows `lastSeq`). */
  apply(event: OrderEvent): void {
    this.newest = event;
    if (isTrackingUpdate(event)) this.newestTracking = event;
  }

  /** Replaces the state with `snapshot` (a store's answer after a repair, or nothing). */
  replace(snapshot: OrderSnapshot | undefined): void {
    this.built = snapshot;
    this.newest = undefined;
    this.newestTracking = undefined;
  }

  /** The state as a snapshot; one object per change, shared by every reader until the next. */
  snapshot(): OrderSnapshot | undefined {
    const newest = this.newest;
    if (newest === undefined) return this.built;
    let base = this.built;
    const tracking = this.newestTracking;
    if (tracking !== undefined && tracking !== newest) {
      base = snapshotAfter(base, tracking, this.ownerId);
    }
    this.built = snapshotAfter(base, newest, this.ownerId);
    this.newest = undefined;
    this.newestTracking = undefined;
    return this.built;
  }
}
