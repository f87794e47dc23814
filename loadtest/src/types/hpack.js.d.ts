/**
 * The part of hpack.js (RFC 7541, plain JS; no published types) the raw gRPC reader
 * uses. Both sides are streams fed synchronously: write() a header block (or a header
 * list), execute() a decompressor, then read() what came out.
 */
declare module 'hpack.js' {
  export interface HeaderField {
    name: string;
    value: string;
    /** Literal never indexed (RFC 7541 §6.2.3): kept out of the dynamic tables. */
    neverIndex?: boolean;
    /** Huffman-code the strings. @default true */
    huffman?: boolean;
  }

  export interface Decompressor {
    write(block: Buffer): boolean;
    execute(): void;
    read(): HeaderField | null;
    on(event: 'error', listener: (err: Error) => void): this;
  }

  export interface Compressor {
    write(headers: HeaderField[]): boolean;
    read(): Buffer | null;
  }

  export const decompressor: { create(options: { table: { size: number } }): Decompressor };
  export const compressor: { create(options: { table: { size: number } }): Compressor };
}
