import {
  kindIndexOf,
  type DomainEvent,
  type DomainSnapshot,
  type StreamDomain,
} from '@app/contracts';

/**
 * One stream's state as its events are applied, built into a snapshot only when somebody
 * reads it. The store and the bus apply every published event, but on the hot path they
 * only need the last seq and whether the stream is finished, so folding each event into
 * a snapshot would be garbage per delivery. Applying keeps a reference to the newest
 * event of each kind instead; `snapshot()` folds them, oldest first, when read.
 *
 * The fold is exact because a domain's fold depends only on the newest event of each
 * kind (`StreamDomain.fold`); stream-state.spec.ts checks it against folding every event.
 */
export class StreamState<E extends DomainEvent, S extends DomainSnapshot> {
  /** The snapshot as of the last read or replacement. */
  private built: S | undefined;
  /** The newest event applied since `built`, if any. */
  private newest: E | undefined;
  /** The newest event of each kind applied since `built` (by `domain.kinds` index). */
  private readonly newestOfKind: (E | undefined)[];

  /**
   * The stream's owner, carried on every snapshot built: null when it has none, undefined
   * while not known yet (one field: the in-process store keeps a state per order).
   */
  private owner: string | null | undefined;

  /** A store's snapshot ahead of the events applied, folded in once they reach it (`seedAhead`). */
  private ahead: S | undefined;

  /**
   * @param base the state to start from (undefined: nothing known yet); its owner is the
   *   stream's
   * @param ownerId the stream's owner, when the caller knows it (the store, which takes
   *   it from the append that created the stream)
   */
  constructor(
    private readonly domain: StreamDomain<E, S>,
    base?: S,
    ownerId?: string,
  ) {
    this.built = base;
    this.owner = ownerId ?? base?.ownerId;
    this.newestOfKind = new Array<E | undefined>(domain.kinds.length).fill(undefined);
  }

  /** The stream's owner as far as known (undefined: none, or not learned yet). */
  get ownerId(): string | undefined {
    return this.owner ?? undefined;
  }

  /**
   * Whether the owner is settled: given, read from a store's snapshot, or learned. Events
   * do not carry it, so a state folded from a feed's events alone has to ask the store.
   */
  get ownerKnown(): boolean {
    return this.owner !== undefined;
  }

  /**
   * Settles the owner (the store's answer; undefined: the stream has none). Ownership
   * never changes, so this is asked once per state, and the snapshot already built gains it.
   */
  learnOwner(ownerId: string | undefined): void {
    this.owner = ownerId ?? null;
    const built = this.built;
    if (ownerId !== undefined && built !== undefined && built.ownerId !== ownerId) {
      this.built = { ...built, ownerId };
    }
  }

  /**
   * Completes a state that events alone made known (they lack the kinds before them and
   * the owner) with a store's `snapshot` of a later seq than they reached: the owner at
   * once, the rest at the first read once the events applied reach its seq (until then a
   * read has only what they say). Exact because every read before then is of an earlier
   * seq, so the newest event of each kind after the snapshot is still held.
   */
  seedAhead(snapshot: S): void {
    this.ahead = snapshot;
    this.learnOwner(snapshot.ownerId);
  }

  /** Whether any state is known (a base or an applied event). */
  get known(): boolean {
    return this.newest !== undefined || this.built !== undefined;
  }

  /** Seq of the newest event, 0 when nothing is known. */
  get lastSeq(): number {
    return this.newest?.seq ?? this.built?.lastSeq ?? 0;
  }

  /** The newest event applied since the last read, if any (the store reads its fields). */
  get newestEvent(): E | undefined {
    return this.newest;
  }

  /** The snapshot as of the last read or replacement, without folding what came since. */
  get base(): S | undefined {
    return this.built;
  }

  /** Whether the stream is finished; undefined when nothing is known. */
  get terminal(): boolean | undefined {
    if (this.newest !== undefined) return this.domain.isTerminal(this.newest);
    return this.built === undefined ? undefined : this.domain.isTerminalSnapshot(this.built);
  }

  /** Applies the next event (the caller has checked that it follows `lastSeq`). */
  apply(event: E): void {
    this.newest = event;
    if (this.newestOfKind.length > 1) this.newestOfKind[kindIndexOf(this.domain, event)] = event;
  }

  /**
   * Replaces the state with `snapshot` (a store's answer, or nothing), whose owner is the
   * stream's.
   */
  replace(snapshot: S | undefined): void {
    this.built = snapshot;
    this.owner = snapshot === undefined ? undefined : (snapshot.ownerId ?? null);
    this.ahead = undefined;
    this.newest = undefined;
    this.newestOfKind.fill(undefined);
  }

  /** The state as a snapshot; one object per change, shared by every reader until the next. */
  snapshot(): S | undefined {
    const newest = this.newest;
    if (newest === undefined) return this.built;
    let base = this.built;
    let after = 0;
    const ahead = this.ahead;
    if (ahead !== undefined && newest.seq >= ahead.lastSeq) {
      // Every event up to the store's snapshot is in it: only later ones are folded on.
      base = ahead;
      after = ahead.lastSeq;
      this.ahead = undefined;
    }
    // The newest of each other kind, oldest first (no array: this runs per read), then
    // the newest event.
    for (;;) {
      let next: E | undefined;
      for (const e of this.newestOfKind) {
        if (e === undefined || e === newest || e.seq <= after) continue;
        if (next === undefined || e.seq < next.seq) next = e;
      }
      if (next === undefined) break;
      base = this.domain.fold(base, next, this.owner ?? undefined);
      after = next.seq;
    }
    this.built =
      newest.seq > after || base === undefined
        ? this.domain.fold(base, newest, this.owner ?? undefined)
        : base;
    this.newest = undefined;
    this.newestOfKind.fill(undefined);
    return this.built;
  }
}
