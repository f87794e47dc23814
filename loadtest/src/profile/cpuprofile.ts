/**
 * Self time per function and per area (a package, Node's internals, the service bundle)
 * from a V8 `.cpuprofile` (what `node --cpu-prof` writes): where a process spent its CPU.
 */

/** The parts of the Chrome DevTools `Profile` object this reads. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
    };
  }[];
  readonly samples: readonly number[];
  /** µs between samples; the first is from startTime. */
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

export interface SelfTime {
  readonly name: string;
  readonly area: string;
  readonly ms: number;
  /** Share of busy time (everything but idle). */
  readonly pct: number;
}

export interface ProfileSummary {
  readonly wallMs: number;
  readonly busyMs: number;
  readonly functions: readonly SelfTime[];
  readonly areas: readonly SelfTime[];
}

const IDLE = '(idle)';

/** Where a frame's code lives: a package, Node's internals, V8's own buckets, or the app. */
export function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) {
    const m = /^node:(?:internal\/)?([a-z_0-9]+)/.exec(url);
    return `node:${m?.[1] ?? 'internal'}`;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.includes('/dist/apps/')) return 'service (dist bundle: apps + libs)';
  if (url.includes('/loadtest/src/bare-server/')) return 'bare server';
  return url.replace(/^file:\/\//, '');
}

/**
 * Sums the sampled time of each node (its self time) and groups it. `skipMs` leaves out
 * the first part of the profile (start-up: module loading and compilation) and `forMs`
 * ends the window (before the teardown of the subscribers), so what remains is the run
 * under load.
 */
export function summarizeProfile(
  profile: CpuProfile,
  top = 25,
  skipMs = 0,
  forMs = Number.POSITIVE_INFINITY,
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, { area: string; us: number }>();
  const area = new Map<string, number>();
  let idleUs = 0;
  let totalUs = 0;
  let at = profile.startTime;
  const from = profile.startTime + skipMs * 1000;
  const until = from + forMs * 1000;
  profile.samples.forEach((id, i) => {
    // timeDeltas[i] is the time before sample i; charge it to that sample (DevTools does
    // the same, give or take one interval).
    const us = Math.max(0, profile.timeDeltas[i] ?? 0);
    at += us;
    if (at < from || at > until) return;
    const node = byId.get(id);
    if (!node) return;
    totalUs += us;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === IDLE) {
      idleUs += us;
      return;
    }
    const a = areaOf(url, functionName);
    const file =
      url === ''
        ? ''
        : ` ${url.replace(/^.*\/(node_modules\/|dist\/|loadtest\/)/, '$1')}:${lineNumber + 1}`;
    const key = `${functionName || '(anonymous)'}${file}`;
    const entry = fn.get(key) ?? { area: a, us: 0 };
    entry.us += us;
    fn.set(key, entry);
    area.set(a, (area.get(a) ?? 0) + us);
  });
  const busyUs = totalUs - idleUs;
  const pct = (us: number): number => (busyUs > 0 ? Math.round((us / busyUs) * 1000) / 10 : 0);
  const ms = (us: number): number => Math.round(us / 100) / 10;
  return {
    wallMs: ms(profile.endTime - Math.max(profile.startTime, from)),
    busyMs: ms(busyUs),
    functions: [...fn.entries()]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([name, e]) => ({ name, area: e.area, ms: ms(e.us), pct: pct(e.us) })),
    areas: [...area.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, area: name, ms: ms(us), pct: pct(us) })),
  };
}

/** The summary as two Markdown tables. */
export function profileMarkdown(title: string, s: ProfileSummary): string {
  return [
    `### ${title}`,
    '',
    `${s.busyMs} ms busy of ${s.wallMs} ms profiled.`,
    '',
    '| area | self ms | % of busy |',
    '|---|---|---|',
    ...s.areas.map((a) => `| ${a.name} | ${a.ms} | ${a.pct} |`),
    '',
    '| function | area | self ms | % of busy |',
    '|---|---|---|---|',
    ...s.functions.map((f) => `| \`${f.name}\` | ${f.area} | ${f.ms} | ${f.pct} |`),
    '',
  ].join('\n');
}
