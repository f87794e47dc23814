/** One item as a client sees it, from any transport's wire format and any domain. */
export type ChainItem =
  | { readonly kind: 'event'; readonly seq: number }
  | { readonly kind: 'skipped'; readonly fromSeq: number; readonly toSeq: number }
  | { readonly kind: 'reset'; readonly lastSeq: number };

/**
 * The client's view: every item must start right after its cursor. Returns the
 * violations (empty when the chain holds) and the cursor reached.
 */
export function chain(
  items: readonly ChainItem[],
  afterSeq: number,
): { problems: string[]; cursor: number } {
  const problems: string[] = [];
  let cursor = afterSeq;
  for (const it of items) {
    if (it.kind === 'event') {
      if (it.seq !== cursor + 1) problems.push(`event ${it.seq} after cursor ${cursor}`);
      cursor = it.seq;
    } else if (it.kind === 'skipped') {
      if (it.fromSeq !== cursor + 1 || it.toSeq < it.fromSeq) {
        problems.push(`skipped ${it.fromSeq}..${it.toSeq} after cursor ${cursor}`);
      }
      cursor = it.toSeq;
    } else {
      if (it.lastSeq < cursor) problems.push(`reset to ${it.lastSeq} after cursor ${cursor}`);
      cursor = it.lastSeq;
    }
  }
  return { problems, cursor };
}
