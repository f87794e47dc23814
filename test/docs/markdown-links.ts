/**
 * Reads the links and headings of a markdown file the way GitHub renders them, enough to
 * tell whether a relative link lands on a file and an anchor that exist. Fenced code and
 * inline code are skipped: a `[x](y)` there is text, not a link.
 */
export interface MarkdownLink {
  readonly line: number;
  readonly target: string;
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const m = /^\s*(```+|~~~+)/.exec(text);
    if (m) {
      if (fence === undefined) fence = m[1][0];
      else if (m[1][0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ line: i + 1, text });
  });
  return out;
}

export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text } of proseLines(markdown)) {
    const prose = text.replace(/`[^`]*`/g, '``');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line, target: m[1] });
    }
    const ref = /^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
    if (ref) links.push({ line, target: ref[1] });
  }
  return links;
}

/** github-slugger's rule: lower case, drop punctuation but `-` and `_`, spaces to `-`. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors GitHub gives the file's headings (a repeated heading gets -1, -2, ...). */
export function markdownAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of proseLines(markdown)) {
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!m) continue;
    // Heading text as rendered: inline code keeps its content, links keep their text.
    const rendered = m[1].replace(/`([^`]*)`/g, '$1').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = slug(rendered);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}
