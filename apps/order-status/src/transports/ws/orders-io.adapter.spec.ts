import { EventEmitter } from 'node:events';
import type { INestApplicationContext } from '@nestjs/common';
import type { MessageMappingProperties } from '@nestjs/websockets';
import { from, type Observable } from 'rxjs';
import type { Socket } from 'socket.io';
import type { AppConfig } from '../../config/app-config';
import { OrdersIoAdapter } from './orders-io.adapter';

/** A socket as far as message handling goes: events in, emits recorded. */
class FakeSocket extends EventEmitter {
  connected = true;
  readonly emitted: unknown[][] = [];

  send(event: string, ...args: unknown[]): void {
    super.emit(event, ...args);
  }

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (typeof event === 'string' && !['subscribe', 'unsubscribe', 'echo'].includes(event)) {
      this.emitted.push([event, ...args]);
      return true;
    }
    return super.emit(event, ...args);
  }
}

/** Nest's transform: the handler's (possibly async) result as an Observable. */
const transform = (result: unknown): Observable<unknown> => from(Promise.resolve(result));
const settle = () => new Promise((resolve) => setImmediate(resolve));

function bind(handlers: Partial<MessageMappingProperties>[]) {
  const adapter = new OrdersIoAdapter(
    undefined as unknown as INestApplicationContext,
    [],
    {} as AppConfig,
  );
  const errors: unknown[] = [];
  jest
    .spyOn((adapter as unknown as { logger: { error(e: unknown): void } }).logger, 'error')
    .mockImplementation((e: unknown) => void errors.push(e));
  const socket = new FakeSocket();
  adapter.bindMessageHandlers(
    socket as unknown as Socket,
    handlers.map((h) => ({
      methodName: 'm',
      isAckHandledManually: false,
      ...h,
    })) as MessageMappingProperties[],
    transform,
  );
  return { socket, errors };
}

describe('OrdersIoAdapter.bindMessageHandlers', () => {
  it('one plain listener per message; results are acked, `event` results emitted', async () => {
    const { socket } = bind([
      { message: 'echo', callback: (data: unknown) => Promise.resolve({ echoed: data }) },
      {
        message: 'subscribe',
        callback: () => Promise.resolve({ event: 'status', data: { seq: 1 } }),
      },
    ]);
    expect(socket.listenerCount('echo')).toBe(1);
    const acks: unknown[] = [];
    socket.send('echo', { a: 1 }, (res: unknown) => acks.push(res));
    socket.send('subscribe', { orderId: 'o' });
    await settle();
    expect(acks).toEqual([{ echoed: { a: 1 } }]);
    expect(socket.emitted).toEqual([['status', { seq: 1 }]]);
  });

  it('leaves the ack to a handler that takes it (@Ack()), and sends nothing for a void result', async () => {
    const acks: unknown[] = [];
    const { socket } = bind([
      {
        message: 'subscribe',
        isAckHandledManually: true,
        callback: (_data: unknown, ack: (r: unknown) => void) => {
          ack({ ok: true });
          return Promise.resolve({ ignored: true });
        },
      },
      { message: 'unsubscribe', callback: () => Promise.resolve(undefined) },
    ]);
    socket.send('subscribe', {}, (res: unknown) => acks.push(res));
    socket.send('unsubscribe', {}, (res: unknown) => acks.push(res));
    await settle();
    expect(acks).toEqual([{ ok: true }]);
  });

  it('logs a failing handler and goes on serving the socket', async () => {
    let calls = 0;
    const { socket, errors } = bind([
      {
        message: 'echo',
        callback: (data: unknown) => {
          calls++;
          if (data === 'throw') throw new Error('sync');
          if (data === 'reject') return Promise.reject(new Error('async'));
          return Promise.resolve(data);
        },
      },
    ]);
    const acks: unknown[] = [];
    socket.send('echo', 'throw', (r: unknown) => acks.push(r));
    socket.send('echo', 'reject', (r: unknown) => acks.push(r));
    socket.send('echo', 'fine', (r: unknown) => acks.push(r));
    await settle();
    expect(calls).toBe(3);
    expect(errors.map((e) => (e as Error).message)).toEqual(['sync', 'async']);
    expect(acks).toEqual(['fine']);
  });

  it('ignores messages once the socket is disconnected', async () => {
    let calls = 0;
    const { socket } = bind([{ message: 'echo', callback: () => Promise.resolve(calls++) }]);
    socket.connected = false;
    socket.send('echo', 'late');
    await settle();
    expect(calls).toBe(0);
  });
});
