import { stablePort } from './stable-port';
import { startTestApp, type TestApp } from './test-app';

/**
 * A service for `restartOnSamePorts`: its HTTP and gRPC ports lie below the ephemeral
 * range, so no other test's `listen(0)` takes them between the close and the restart.
 */
export async function startRestartableApp(env: Record<string, string>): Promise<TestApp> {
  return startTestApp({
    HTTP_PORT: String(await stablePort()),
    GRPC_PORT: String(await stablePort()),
    ...env,
  });
}

/**
 * Closes `first` (started by `startRestartableApp`) and starts a fresh service on its HTTP
 * and gRPC ports, so clients that were connected reconnect to the address they know, as
 * after a deploy. `current` is told which app is running at each step (none between the
 * close and the start), so a suite's afterEach never closes an app twice nor misses the
 * new one.
 */
export async function restartOnSamePorts(
  first: TestApp,
  env: Record<string, string>,
  current: (app: TestApp | undefined) => void,
): Promise<TestApp> {
  await first.close();
  current(undefined);
  const second = await startTestApp({
    ...env,
    HTTP_PORT: String(first.ports.http),
    GRPC_PORT: String(first.ports.grpc),
  });
  current(second);
  return second;
}
