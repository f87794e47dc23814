import { NchanPublisher } from './nchan-publisher';
import type { ControlReply, ControlRequest } from './publisher-ipc';

/**
 * The Nchan publisher's own process (started by `PublisherProcess.launch`, pinned to the
 * generator's core): it answers the load test's ServiceControl calls over the IPC channel.
 * argv: the host and port of Nchan's publisher location.
 */
function main(): void {
  const [host, port] = process.argv.slice(2);
  const send = process.send?.bind(process);
  if (host === undefined || port === undefined || send === undefined) {
    process.stderr.write('usage: publisher-process HOST PORT (started with an IPC channel)\n');
    process.exit(2);
  }
  const publisher = new NchanPublisher(host, Number(port));
  process.on('message', (req: ControlRequest) => {
    void run(publisher, req).then((reply) => send(reply));
  });
  // The parent went away (or closed the channel): nothing is left to publish for.
  process.on('disconnect', () => {
    void publisher.close().finally(() => process.exit(0));
  });
}

async function run(publisher: NchanPublisher, req: ControlRequest): Promise<ControlReply> {
  try {
    switch (req.method) {
      case 'prepare':
        return { id: req.id, ok: true, value: await publisher.prepare(req.schedule) };
      case 'start':
        return { id: req.id, ok: true, value: await publisher.start() };
      case 'stop':
        return { id: req.id, ok: true, value: await publisher.stop() };
      case 'status':
        return { id: req.id, ok: true, value: await publisher.status() };
      case 'lastSeqs': {
        const seqs = await publisher.lastSeqs(req.orderIds);
        return { id: req.id, ok: true, value: [...seqs] };
      }
      case 'close':
        await publisher.close();
        return { id: req.id, ok: true, value: null };
    }
  } catch (err) {
    return { id: req.id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

main();
