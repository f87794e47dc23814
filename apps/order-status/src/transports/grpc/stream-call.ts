import { status as GrpcCode } from '@grpc/grpc-js';
import { isObservable, type Observable, type Subscription } from 'rxjs';
import { GRPC_CALL_CANCELLED } from '@app/contracts';
import type { GrpcStatus } from './grpc-status';

/** The parts of a grpc-js server-streaming call used here. */
export interface StreamCallLike {
  readonly cancelled: boolean;
  once(event: typeof GRPC_CALL_CANCELLED, listener: () => void): unknown;
  off(event: typeof GRPC_CALL_CANCELLED, listener: () => void): unknown;
  /** grpc-js sends an emitted error's `code`, `details` and `metadata` as the call's status. */
  emit(event: 'error', err: unknown): boolean;
  end(): unknown;
}

/**
 * What ends a server-streaming call whose handler (Nest's handler chain, exception filter
 * included) returned `result` (an Observable, or a promise of one): completion ends the call (status OK), an error is emitted
 * on it (grpc-js sends it as the status), the client's cancellation unsubscribes.
 *
 * The service's streaming handlers write their messages to the call themselves, with the
 * bus's back-pressure (subscribe-stream.ts), and never emit: a value is a bug, answered
 * with INTERNAL rather than written without back-pressure.
 */
export async function followStreamCall(call: StreamCallLike, result: unknown): Promise<void> {
  let source: unknown;
  try {
    source = await result;
  } catch (err) {
    fail(call, err);
    return;
  }
  if (call.cancelled) return;
  if (!isObservable(source)) {
    fail(call, NOT_A_STREAM);
    return;
  }
  new StreamCallEnd(call).follow(source);
}

const NOT_A_STREAM: GrpcStatus = {
  code: GrpcCode.INTERNAL,
  details: 'internal error',
};

function fail(call: StreamCallLike, err: unknown): void {
  call.emit('error', err);
  call.end();
}

/** One call's end; an object rather than closures, since an open call keeps it. */
class StreamCallEnd {
  private subscription: Subscription | undefined;
  private over = false;
  private readonly onCancelled = () => this.cancelled();

  constructor(private readonly call: StreamCallLike) {}

  follow(source: Observable<unknown>): void {
    this.call.once(GRPC_CALL_CANCELLED, this.onCancelled);
    const subscription = source.subscribe({
      next: () => this.finish(NOT_A_STREAM),
      error: (err: unknown) => this.finish(err),
      complete: () => this.finish(undefined),
    });
    if (this.over) subscription.unsubscribe();
    else this.subscription = subscription;
  }

  private finish(err: unknown): void {
    if (this.over) return;
    this.over = true;
    this.call.off(GRPC_CALL_CANCELLED, this.onCancelled);
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    if (err !== undefined) this.call.emit('error', err);
    this.call.end();
  }

  private cancelled(): void {
    if (this.over) return;
    this.over = true;
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }
}
