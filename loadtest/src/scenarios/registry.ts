import { backpressure } from './backpressure';
import { broadcast } from './broadcast';
import { cluster } from './cluster';
import { clusterFailover } from './cluster-failover';
import { hostile } from './hostile';
import { idle } from './idle';
import { ladder } from './ladder';
import { overhead } from './overhead';
import { reconnect } from './reconnect';
import { routing } from './routing';
import { scale } from './scale';
import { soak } from './soak';
import type { Scenario } from './scenario';
import { bytes, slowConsumer, steady, wan } from './steady';
import { unary } from './unary';

export const SCENARIOS: readonly Scenario[] = [
  steady,
  idle,
  bytes,
  wan,
  slowConsumer,
  backpressure,
  reconnect,
  unary,
  overhead,
  ladder,
  broadcast,
  scale,
  cluster,
  clusterFailover,
  routing,
  hostile,
  soak,
];

export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
