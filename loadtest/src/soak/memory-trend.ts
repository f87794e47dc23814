import { leastSquares } from '../stats/slope';

/** One reading of the service, taken every sample interval of a soak run. */
export interface SoakSample {
  /** Seconds since publishing started. */
  readonly tS: number;
  /** JS heap in use after two forced full GCs (undefined: the inspector did not answer). */
  readonly heapMB: number | undefined;
  readonly rssMB: number;
  /** Event-loop delay since the previous reading (the service's /metrics), ms. */
  readonly loopP99Ms: number | undefined;
  readonly loopMaxMs: number | undefined;
  /** Service CPU since the previous reading, % of one core. */
  readonly cpuPct: number;
  readonly connected: number;
  /** Events delivered to every subscriber so far. */
  readonly delivered: number;
  /**
   * Publishes answered so far. The service's idempotency cache holds the keys of the last
   * IDEMPOTENCY_WINDOW_MS (5 min) of publishes, so the heap follows this count's recent rate.
   */
  readonly published?: number;
}

export interface MemoryTrend {
  /** Least-squares slope over the window, MB per hour. */
  readonly mbPerHour: number;
  /** Its standard error, MB per hour. */
  readonly stdErrorMbPerHour: number;
  readonly points: number;
  /** The slope is within noise: under the tolerance, or within two standard errors of 0. */
  readonly flat: boolean;
}

/**
 * A memory slope this small is flat whatever its statistics say: 2 MB an hour is under
 * 50 MB a day, below what one reconnect burst moves the heap by.
 */
export const FLAT_TOLERANCE_MB_PER_HOUR = 2;
/** Two standard errors: a slope inside them is not told apart from 0 (about 95 %). */
export const NOISE_STD_ERRORS = 2;

const round2 = (v: number): number => Math.round(v * 100) / 100;

/**
 * The trend of one memory figure over the samples taken in the last `windowS` seconds
 * (all of them when the run was shorter); undefined with fewer than three readings.
 */
export function memoryTrend(
  samples: readonly SoakSample[],
  field: 'heapMB' | 'rssMB',
  windowS: number,
): MemoryTrend | undefined {
  const end = samples.length === 0 ? 0 : samples[samples.length - 1].tS;
  const points = samples
    .filter((s) => s.tS > end - windowS)
    .flatMap((s) => {
      const y = s[field];
      return y === undefined ? [] : [{ x: s.tS / 3600, y }];
    });
  if (points.length < 3) return undefined;
  const fit = leastSquares(points);
  if (!fit) return undefined;
  const flat =
    Math.abs(fit.slope) <= FLAT_TOLERANCE_MB_PER_HOUR ||
    Math.abs(fit.slope) <= NOISE_STD_ERRORS * fit.slopeStdError;
  return {
    mbPerHour: round2(fit.slope),
    stdErrorMbPerHour: round2(fit.slopeStdError),
    points: fit.points,
    flat,
  };
}

/** What a soak run reports beside its per-transport counts (on its first run's result). */
export interface SoakFigures {
  readonly sampleEveryS: number;
  /** The slopes are fitted over the samples of this last stretch of the run. */
  readonly slopeWindowS: number;
  readonly samples: readonly SoakSample[];
  readonly heap: MemoryTrend | null;
  readonly rss: MemoryTrend | null;
  readonly publishes: Readonly<
    Record<'rest' | 'grpc', { ok: number; failed: number; retried: number }>
  >;
  /** The last few publish failures (each retried unless its attempts ran out). */
  readonly publishErrors: readonly string[];
  readonly tokenRenewals: number;
  /** Subscribers the load test dropped and resumed (a tenth every drop interval). */
  readonly forcedDrops: number;
  readonly verdict: SoakVerdict;
}

export interface SoakVerdict {
  /** Heap after GC flat within noise, no event lost, none duplicated. */
  readonly pass: boolean;
  readonly heapFlat: boolean;
  readonly lost: number;
  readonly duplicates: number;
  readonly text: string;
}

/** The goal of issue 35 section 5: flat heap within noise, 0 lost, 0 duplicate. */
export function soakVerdict(
  heap: MemoryTrend | undefined,
  lost: number,
  duplicates: number,
): SoakVerdict {
  const heapFlat = heap?.flat ?? false;
  const pass = heapFlat && lost === 0 && duplicates === 0;
  const slope =
    heap === undefined
      ? 'heap slope not measured'
      : `heap ${heap.mbPerHour} ± ${heap.stdErrorMbPerHour} MB/h over ${heap.points} readings (${heap.flat ? 'flat within noise' : 'growing'})`;
  return {
    pass,
    heapFlat,
    lost,
    duplicates,
    text: `${pass ? 'PASS' : 'FAIL'}: ${slope}, ${lost} lost, ${duplicates} duplicate`,
  };
}
