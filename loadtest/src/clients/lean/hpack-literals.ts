import * as hpack from 'hpack.js';
import { HEADER_TABLE_SIZE } from './raw-h2-connection';

/**
 * Request header blocks for the raw HTTP/2 clients (RFC 7541). Every field is a literal
 * never indexed: the encoder's dynamic table never changes, so a block encoded once is
 * valid on every connection, and a peer (or a proxy) is told not to index a token.
 */

/** The fields as one header block, pseudo-header fields first (RFC 9113 §8.3). */
export function literalBlock(fields: Readonly<Record<string, string>>): Buffer {
  const comp = hpack.compressor.create({ table: { size: HEADER_TABLE_SIZE } });
  const ordered = Object.entries(fields).sort(
    ([a], [b]) => Number(b.startsWith(':')) - Number(a.startsWith(':')),
  );
  comp.write(ordered.map(([name, value]) => ({ name, value, neverIndex: true })));
  return comp.read() ?? Buffer.alloc(0);
}

/** `:path` is entry 4 of HPACK's static table (RFC 7541 Appendix A). */
const PATH_INDEX = 4;
/** "Literal never indexed, indexed name" (RFC 7541 §6.2.3): 0001 and a 4-bit prefix. */
const NEVER_INDEXED = 0x10;

/**
 * A `:path` field on its own, for a block whose path changes with every request (a
 * poll's cursor): the rest of the block is encoded once (literalBlock) and this goes
 * first. The value is sent as is (no Huffman code), so encoding it is a copy.
 */
export function pathField(path: string): Buffer {
  const value = Buffer.from(path, 'latin1');
  const length = integer(value.length, 7, 0);
  const out = Buffer.allocUnsafe(1 + length.length + value.length);
  out[0] = NEVER_INDEXED | PATH_INDEX;
  length.copy(out, 1);
  value.copy(out, 1 + length.length);
  return out;
}

/** An HPACK integer with an N-bit prefix, `flags` in the first byte's high bits (RFC 7541 §5.1). */
function integer(value: number, prefixBits: number, flags: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([flags | value]);
  const bytes = [flags | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) | 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}
