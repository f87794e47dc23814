import { readdirSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import { launchNchan, nchanAvailable } from '../../loadtest/src/nchan/nchan-server';
import type { RunningService } from '../../loadtest/src/service/launcher';

/**
 * Nchan's publisher (the load test's, Nchan has no simulator) runs in a process of its
 * own: publishing 5,000 events/s from the generator's process blocked the event loop that
 * timestamps deliveries and was counted as the generator's CPU. Here: preparing orders
 * opens no socket in this (the generator's) process, the events still reach Nchan's
 * subscribers, and stopping Nchan ends the publisher's process.
 */
const nchan = nchanAvailable();
if (!nchan.ok) process.stderr.write(`SKIPPED Nchan publisher process: ${nchan.reason}\n`);
const ORDERS = 20;

/** Sockets this process holds (Linux: /proc/self/fd links named `socket:[inode]`). */
function ownSockets(): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // The descriptor closed between the listing and the read.
    }
  }
  return n;
}

/** The first `data:` line of an order's SSE stream on Nchan (it replays the oldest message). */
function firstSseData(port: number, orderId: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: `/v1/orders/${orderId}/stream`,
        headers: { accept: 'text/event-stream' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (t: string) => {
          text += t;
          const line = text.split('\n').find((l) => l.startsWith('data:'));
          if (line !== undefined) {
            req.destroy();
            resolve(line.slice('data:'.length).trim());
          }
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

(nchan.ok ? describe : describe.skip)('Nchan publisher process', () => {
  jest.setTimeout(60_000);
  let running: RunningService | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  it('publishes from its own process, and ends with Nchan', async () => {
    running = await launchNchan();
    const { control } = running;
    if (control === undefined) throw new Error('launchNchan returned no publisher');
    const before = ownSockets();
    await control.prepare({ orders: ORDERS, ratePerOrder: 20, prefix: 'np' });
    // One WebSocket per order in the generator's process before this change.
    expect(ownSockets() - before).toBeLessThan(ORDERS / 2);

    const created = JSON.parse(await firstSseData(running.httpPort, 'np-7')) as {
      orderId: string;
      seq: number;
    };
    expect(created).toMatchObject({ orderId: 'np-7', seq: 1 });

    await control.start();
    await new Promise((r) => setTimeout(r, 300));
    const stopped = await control.stop();
    expect(stopped.state).toBe('stopped');
    // 20 created events, then about 20 a second for each order for 0.3 s.
    expect(stopped.published).toBeGreaterThan(ORDERS);
    const seqs = await control.lastSeqs(['np-1', 'np-20', 'unknown']);
    expect(seqs.get('np-1')).toBeGreaterThan(1);
    expect(seqs.get('np-20')).toBeGreaterThan(1);
    expect(seqs.get('unknown')).toBe(0);
    expect(await control.lastSeq('np-1')).toBe(seqs.get('np-1'));

    // The run samples the publisher through the helper pids Nchan's launcher names.
    const [publisherPid, ...others] = running.helperPids ?? [];
    expect(others).toEqual([]);
    if (publisherPid === undefined) throw new Error('launchNchan named no publisher process');
    expect(publisherPid).not.toBe(process.pid);
    expect(alive(publisherPid)).toBe(true);
    await running.stop();
    running = undefined;
    expect(alive(publisherPid)).toBe(false);
  });
});
