import WebSocket from 'ws';

export const GC_TIMEOUT_MS = 10_000;

/**
 * Sends `methods` one after the other to the service's inspector (Chrome DevTools
 * Protocol) and returns each one's result; undefined if the inspector could not be
 * reached or a call did not answer within GC_TIMEOUT_MS.
 */
async function inspect(
  inspectorUrl: string | undefined,
  methods: readonly string[],
): Promise<unknown[] | undefined> {
  if (inspectorUrl === undefined) return undefined;
  const ws = new WebSocket(inspectorUrl);
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const results: unknown[] = [];
    for (const [i, method] of methods.entries()) {
      const id = i + 1;
      const answer = new Promise<{ result?: unknown } | undefined>((resolve) => {
        const timer = setTimeout(() => resolve(undefined), GC_TIMEOUT_MS);
        ws.on('message', (data: Buffer) => {
          const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown };
          if (msg.id === id) {
            clearTimeout(timer);
            resolve(msg);
          }
        });
      });
      ws.send(JSON.stringify({ id, method }));
      const msg = await answer;
      if (msg === undefined) return undefined;
      results.push(msg.result);
    }
    return results;
  } catch {
    return undefined;
  } finally {
    ws.close();
  }
}

/**
 * Forces a full GC in the service through its inspector (`HeapProfiler.collectGarbage`),
 * twice as seed 001 did with --expose-gc, so RSS per connection is not measured on top
 * of garbage. Resolves false if it could not.
 */
export async function collectGarbage(inspectorUrl: string | undefined): Promise<boolean> {
  const results = await inspect(inspectorUrl, GC_TWICE);
  return results !== undefined;
}

/**
 * Forces a full GC, then reads the JS heap in use (`Runtime.getHeapUsage`): what the
 * service really still holds. RSS alone cannot tell that: after a burst the allocator
 * and V8 keep freed pages mapped, so RSS stays up although nothing is retained.
 * Undefined if the inspector could not be asked.
 */
export async function heapUsedAfterGc(
  inspectorUrl: string | undefined,
): Promise<number | undefined> {
  const results = await inspect(inspectorUrl, [...GC_TWICE, 'Runtime.getHeapUsage']);
  const usage = results?.[2] as { usedSize?: number } | undefined;
  return usage?.usedSize;
}

const GC_TWICE = ['HeapProfiler.collectGarbage', 'HeapProfiler.collectGarbage'];
