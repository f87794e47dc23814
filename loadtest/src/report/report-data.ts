import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from '../scenarios/result';

export const RESULTS_SCHEMA = 'order-status-loadtest/v1';

/** The whole results file; its schema is documented in docs/loadtest-method.md. */
export interface Report {
  readonly schema: typeof RESULTS_SCHEMA;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: {
    readonly cpuModel: string;
    readonly cores: number;
    readonly memoryBytes: number;
    readonly platform: string;
    readonly kernel: string;
    /** 1, 5 and 15 minute load averages when the run started (others' work shows here). */
    readonly loadAverage?: readonly number[];
  };
  readonly versions: Record<string, string>;
  readonly settings: {
    readonly argv: readonly string[];
    readonly scenarios: readonly string[];
    readonly transports: readonly string[];
    readonly pinned: boolean;
    readonly target: string | null;
    /** The service bundle the runs started (LOADTEST_SERVICE_ENTRY or dist/), as portablePath records it. */
    readonly serviceEntry?: string;
    /** `--node`: the binary that ran the service and bare servers, and its version. */
    readonly serviceNode?: { readonly path: string; readonly version: string };
    /** Node or V8 flags every started server ran with (`--node-flag`). */
    readonly serviceNodeFlags?: readonly string[];
    /** Each transport's runs came from a fresh generator process (scale, see per-process.ts). */
    readonly processPerTransport?: boolean;
  };
  readonly runs: readonly RunResult[];
  /** Scenarios that ended without their runs (a service that did not start, say), and why. */
  readonly aborted?: readonly AbortedScenario[];
}

export interface AbortedScenario {
  readonly scenario: string;
  readonly error: string;
}

function pkgVersion(name: string): string {
  try {
    const root = join(__dirname, '../../../node_modules', name, 'package.json');
    return (JSON.parse(readFileSync(root, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function gitCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export function machineInfo(): Report['machine'] {
  return {
    cpuModel: cpus()[0]?.model ?? 'unknown',
    // cpus(), not availableParallelism(): the generator has pinned itself to one core.
    cores: cpus().length,
    memoryBytes: totalmem(),
    platform: process.platform,
    kernel: release(),
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

export function versions(): Record<string, string> {
  const names = [
    '@grpc/grpc-js',
    'socket.io',
    'socket.io-client',
    '@nestjs/core',
    '@nestjs/platform-fastify',
    'hdr-histogram-js',
    'chart.js',
  ];
  return {
    node: process.version,
    commit: gitCommit(),
    ...Object.fromEntries(names.map((n) => [n, pkgVersion(n)])),
  };
}
