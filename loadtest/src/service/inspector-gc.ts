import WebSocket from 'ws';

export const GC_TIMEOUT_MS = 10_000;

/**
 * Forces a full GC in the service through its inspector (Chrome DevTools Protocol,
 * `HeapProfiler.collectGarbage`), twice as seed 001 did with --expose-gc, so RSS per
 * connection is not measured on top of garbage. Resolves false if it could not.
 */
export async function collectGarbage(inspectorUrl: string | undefined): Promise<boolean> {
  if (inspectorUrl === undefined) return false;
  const ws = new WebSocket(inspectorUrl);
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    for (let id = 1; id <= 2; id += 1) {
      const done = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), GC_TIMEOUT_MS);
        ws.on('message', (data: Buffer) => {
          const msg = JSON.parse(data.toString()) as { id?: number };
          if (msg.id === id) {
            clearTimeout(timer);
            resolve(true);
          }
        });
      });
      ws.send(JSON.stringify({ id, method: 'HeapProfiler.collectGarbage' }));
      if (!(await done)) return false;
    }
    return true;
  } catch {
    return false;
  } finally {
    ws.close();
  }
}
