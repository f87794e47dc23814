/**
 * Splits a byte stream into records that each start with a fixed-size header giving the
 * length of the body after it, whatever the chunking: gRPC's length-prefixed messages
 * (MessageDecoder) and HTTP/2's frames (FrameSplitter). A record cut by a chunk boundary
 * waits, as a view of its bytes, for the rest.
 */
export class PrefixedSplitter {
  private pending: Buffer | undefined;

  constructor(
    private readonly headerBytes: number,
    /** The body length of the record whose header starts at `at`, or -1 to refuse it. */
    private readonly bodyLength: (buf: Buffer, at: number) => number,
    /** A whole record: its header at `at`, its body up to `end`. */
    private readonly onRecord: (buf: Buffer, at: number, end: number) => void,
  ) {}

  /** Feeds a chunk; false on a record the reader refuses (nothing after it is read). */
  push(chunk: Buffer): boolean {
    let buf = chunk;
    if (this.pending !== undefined) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    let at = 0;
    while (buf.length - at >= this.headerBytes) {
      const len = this.bodyLength(buf, at);
      if (len < 0) return false;
      const end = at + this.headerBytes + len;
      if (buf.length < end) break;
      this.onRecord(buf, at, end);
      at = end;
    }
    if (at < buf.length) this.pending = buf.subarray(at);
    return true;
  }
}
