import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AlwaysOnSampler, BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { DomainEvent } from '@app/contracts';
import { heapAllocatedBytes } from '../../../apps/order-status/src/ops/metrics.service';
import { OrderTracing } from '../../../apps/order-status/src/tracing/order-tracing';
import { createTracerProvider } from '../../../apps/order-status/src/tracing/tracer-provider';

/**
 * What the service's tracing costs per publish with nothing else running: the in-process
 * simulator's traced publish (`OrderTracing.publishSync`, one root span with a fan-out's
 * `write` event) at the ladder's rate, in the simulator's 10 ms ticks: tracing off, 1 % of
 * traces sampled, every trace sampled with its spans made and dropped (the SDK's span,
 * sampler and batch processor alone), and every trace sampled and exported as the service
 * exports (OTLP/HTTP JSON to a sink in another process, whose CPU is not counted). The
 * difference to off is the floor a traced delivery pays at one subscriber per order,
 * whatever else the service does (the ladder's tracing rungs, docs/tracing.md).
 *
 *   tsx loadtest/src/ladder/span-cost.ts [--rate 2000] [--seconds 6] [--rounds 3]
 */

/** The simulator's tick (SIMULATOR_TICK_MS): publishes come in bursts of rate / 100. */
const TICK_MS = 10;
/** Ticks before the measured window: JIT, the first exports, the sink's connection. */
const WARMUP_MS = 2_000;

type Mode = 'off' | '1 % sampled' | '100 %, spans dropped' | '100 %';
const MODES: readonly Mode[] = ['off', '1 % sampled', '100 %, spans dropped', '100 %'];

interface Reading {
  readonly mode: Mode;
  readonly cpuUs: number;
  readonly heapBytes: number | undefined;
}

/** An exporter that accepts every batch and keeps nothing: the SDK's work without the wire. */
const DROPPING_EXPORTER = {
  export(_spans: unknown, done: (result: { code: 0 }) => void): void {
    done({ code: 0 });
  },
  shutdown: (): Promise<void> => Promise.resolve(),
};

function providerFor(mode: Mode, sinkUrl: string): TracerProvider | undefined {
  if (mode === 'off') return undefined;
  if (mode !== '100 %, spans dropped') {
    return createTracerProvider({
      serviceName: 'span-cost',
      sampler: 'parentbased_traceidratio',
      samplerRatio: mode === '1 % sampled' ? 0.01 : 1,
      tracesUrl: sinkUrl,
      scheduleDelayMs: 5_000,
      exportTimeoutMs: 10_000,
    });
  }
  return new TracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new BatchSpanProcessor({ exporter: DROPPING_EXPORTER })],
  });
}

/** `rate` traced publishes a second for `ms`, each fanned out to one SSE subscriber. */
async function publishFor(tracing: OrderTracing, rate: number, ms: number): Promise<number> {
  const perTick = Math.max(1, Math.round((rate * TICK_MS) / 1000));
  const delivery = tracing.delivery;
  let seq = 0;
  await new Promise<void>((resolve) => {
    const end = performance.now() + ms;
    const timer = setInterval(() => {
      for (let i = 0; i < perTick; i++) {
        seq++;
        const event: DomainEvent = { orderId: `order-${seq % 200}`, seq, publishedAtUs: seq };
        tracing.publishSync({ orderId: event.orderId, kind: 'payload' }, (context) => {
          const trace = delivery?.begin(event, context);
          trace?.written('sse', event);
          trace?.end(1);
          return event;
        });
      }
      if (performance.now() >= end) {
        clearInterval(timer);
        resolve();
      }
    }, TICK_MS);
  });
  return seq;
}

async function measure(mode: Mode, o: Options, sinkUrl: string): Promise<Reading> {
  const provider = providerFor(mode, sinkUrl);
  const tracing = new OrderTracing(provider, 'memory');
  await publishFor(tracing, o.rate, WARMUP_MS);
  const cpu = process.cpuUsage();
  const heap = heapAllocatedBytes();
  const n = await publishFor(tracing, o.rate, o.seconds * 1000);
  await provider?.forceFlush();
  const used = process.cpuUsage(cpu);
  const heapAfter = heapAllocatedBytes();
  await tracing.shutdown(2_000);
  return {
    mode,
    cpuUs: (used.user + used.system) / n,
    heapBytes: heap === undefined || heapAfter === undefined ? undefined : (heapAfter - heap) / n,
  };
}

/** The OTLP sink in a process of its own; resolves with its traces URL. */
function startSink(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ['--require', require.resolve('tsx/cjs'), join(__dirname, 'otlp-sink-main.ts')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout?.once('data', (chunk: Buffer) =>
      resolve({ child, url: `${chunk.toString().trim()}/v1/traces` }),
    );
  });
}

interface Options {
  readonly rate: number;
  readonly seconds: number;
  readonly rounds: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      rate: { type: 'string', default: '2000' },
      seconds: { type: 'string', default: '6' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const o = {
    rate: Number(values.rate),
    seconds: Number(values.seconds),
    rounds: Number(values.rounds),
  };
  if (!Object.values(o).every((v) => Number.isFinite(v) && v > 0)) {
    throw new Error('--rate, --seconds and --rounds take positive numbers');
  }
  return o;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

async function main(): Promise<void> {
  const o = options();
  const sink = await startSink();
  const readings: Reading[] = [];
  try {
    // Rounds alternate the modes, so a host that drifts moves them alike.
    for (let round = 0; round < o.rounds; round++) {
      for (const mode of MODES) readings.push(await measure(mode, o, sink.url));
    }
  } finally {
    sink.child.kill();
  }
  const off = median(readings.filter((r) => r.mode === 'off').map((r) => r.cpuUs));
  process.stdout.write(
    `${o.rate} traced publishes/s for ${o.seconds} s, ${o.rounds} rounds, Node ${process.version}\n` +
      `| mode | CPU µs / publish (median) | over off | heap B / publish (median) |\n|---|---|---|---|\n`,
  );
  for (const mode of MODES) {
    const mine = readings.filter((r) => r.mode === mode);
    const cpu = median(mine.map((r) => r.cpuUs));
    const heaps = mine.flatMap((r) => (r.heapBytes === undefined ? [] : [r.heapBytes]));
    const heap = heaps.length > 0 ? median(heaps).toFixed(0) : '-';
    process.stdout.write(
      `| ${mode} | ${cpu.toFixed(1)} | +${(cpu - off).toFixed(1)} | ${heap} |\n`,
    );
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
