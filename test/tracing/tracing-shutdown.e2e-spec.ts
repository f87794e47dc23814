import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { OrderStatus } from '@app/order-domain';
import { OtlpReceiver } from '../support/otlp-receiver';
import { startTestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { TRACE_FLUSH_TIMEOUT_MS } from '../../apps/order-status/src/tracing/tracing.module';
import { callerContext, restPublish, tracingEnv } from './tracing-support';

/** Graceful shutdown exports the spans still batched, and never waits long for a collector. */
describe('tracing at shutdown', () => {
  it('spans still batched when the service stops are exported by its shutdown', async () => {
    const receiver = await OtlpReceiver.start();
    try {
      // A batch delay far beyond the test: only the shutdown's flush can export them.
      const app = await startTestApp({
        ...tracingEnv(receiver, 'flush'),
        OTEL_BSP_SCHEDULE_DELAY: '600000',
      });
      await app.createOrder('f-1');
      const caller = callerContext();
      await restPublish(app, 'f-1', OrderStatus.Paid, { traceparent: caller.traceparent });
      expect(receiver.spans).toEqual([]);

      await app.close();

      const names = receiver.spans.filter((s) => s.traceId === caller.traceId).map((s) => s.name);
      expect(names.sort()).toEqual(['publish', 'store']);
    } finally {
      await receiver.close();
    }
  });

  it('a collector that never answers holds the shutdown no longer than the flush budget', async () => {
    // Accepts the export and never answers: the exporter waits for its own timeout.
    const open = new Set<Socket>();
    const silent = createServer(() => undefined);
    silent.on('connection', (socket) => {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const app = await startTestApp({
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_BSP_SCHEDULE_DELAY: '600000',
        OTEL_EXPORTER_OTLP_TIMEOUT: String(TRACE_FLUSH_TIMEOUT_MS * 2),
      });
      await app.createOrder('f-2');
      await restPublish(app, 'f-2', OrderStatus.Paid, { traceparent: callerContext().traceparent });
      const startedAt = Date.now();
      await app.close();
      const tookMs = Date.now() - startedAt;
      expect(tookMs).toBeGreaterThanOrEqual(TRACE_FLUSH_TIMEOUT_MS - 100);
      expect(tookMs).toBeLessThan(TRACE_FLUSH_TIMEOUT_MS * 2);
      // The export itself ends at its own timeout (nothing is left running after the test).
      await waitFor(() => open.size === 0, 'the exporter gave up its request', 10_000);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
