import { GRPC_CALL_CANCELLED } from '@app/contracts';
import { EventEmitter } from 'node:events';
import { status as GrpcCode } from '@grpc/grpc-js';
import { NEVER, Observable, Subject, of, throwError } from 'rxjs';
import { followStreamCall } from './stream-call';

/** A server-streaming call as far as followStreamCall sees it. */
class FakeCall extends EventEmitter {
  cancelled = false;
  readonly errors: unknown[] = [];
  ends = 0;

  constructor() {
    super();
    this.on('error', (err: unknown) => this.errors.push(err));
  }

  end(): void {
    this.ends++;
  }

  cancel(): void {
    this.cancelled = true;
    this.emit(GRPC_CALL_CANCELLED, GRPC_CALL_CANCELLED);
  }
}

describe('followStreamCall', () => {
  it('ends the call (status OK) when the handler completes', async () => {
    const call = new FakeCall();
    const done = new Subject<never>();
    await followStreamCall(call, Promise.resolve(done));
    expect(call.ends).toBe(0);
    done.complete();
    expect({ ends: call.ends, errors: call.errors }).toEqual({ ends: 1, errors: [] });
    expect(call.listenerCount(GRPC_CALL_CANCELLED)).toBe(0);
  });

  it('emits the error (the status grpc-js sends), then ends the call', async () => {
    const call = new FakeCall();
    const status = { code: GrpcCode.NOT_FOUND, details: 'order x not found' };
    await followStreamCall(
      call,
      throwError(() => status),
    );
    expect({ ends: call.ends, errors: call.errors }).toEqual({ ends: 1, errors: [status] });
  });

  it('unsubscribes when the client cancels, and writes nothing more', async () => {
    const call = new FakeCall();
    let unsubscribed = 0;
    const source = new Observable<never>(() => () => unsubscribed++);
    await followStreamCall(call, source);
    call.cancel();
    expect({ unsubscribed, ends: call.ends, errors: call.errors }).toEqual({
      unsubscribed: 1,
      ends: 0,
      errors: [],
    });
    expect(call.listenerCount(GRPC_CALL_CANCELLED)).toBe(0);
  });

  it('does not subscribe at all when the call was cancelled while the handler ran', async () => {
    const call = new FakeCall();
    let subscribed = 0;
    const source = new Observable<never>(() => {
      subscribed++;
    });
    const pending = followStreamCall(call, Promise.resolve(source));
    call.cancel();
    await pending;
    expect(subscribed).toBe(0);
  });

  it('answers INTERNAL for a handler that emits (values are not written without back-pressure)', async () => {
    const call = new FakeCall();
    await followStreamCall(call, of({ event: 1 }));
    expect(call.errors).toEqual([{ code: GrpcCode.INTERNAL, details: 'internal error' }]);
    expect(call.ends).toBe(1);
  });

  it('answers a handler that rejects or returns no stream', async () => {
    const rejected = new FakeCall();
    const err = new Error('boom');
    await followStreamCall(rejected, Promise.reject(err));
    expect(rejected.errors).toEqual([err]);
    const plain = new FakeCall();
    await followStreamCall(plain, 42);
    expect(plain.errors).toEqual([{ code: GrpcCode.INTERNAL, details: 'internal error' }]);
    // An Observable that never ends keeps the call open.
    const open = new FakeCall();
    await followStreamCall(open, NEVER);
    expect({ ends: open.ends, errors: open.errors }).toEqual({ ends: 0, errors: [] });
  });
});
