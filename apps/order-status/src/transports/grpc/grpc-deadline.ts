import type { Deadline } from '@grpc/grpc-js';
import { ErrorCode, GatewayError } from '@app/contracts';

/** Milliseconds left before `deadline` (grpc-js: a Date, a ms timestamp, or Infinity). */
export function remainingMs(deadline: Deadline): number {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return at - Date.now();
}

/**
 * Runs `work` within the caller's deadline. A call whose deadline is already spent fails
 * at once with DEADLINE_EXCEEDED instead of doing work nobody waits for; otherwise `work`
 * gets the remaining time and is raced against it, so a slow store cannot hold a handler
 * past the client's deadline (gRPC deadline propagation, grpc.io/docs/guides/deadlines).
 *
 * The race does not undo `work`: a publish that completes after the deadline still took
 * effect, which is what DEADLINE_EXCEEDED means in gRPC (the outcome is unknown).
 */
export async function withinDeadline<T>(
  deadline: Deadline,
  work: (remainingMs: number) => Promise<T>,
): Promise<T> {
  const left = remainingMs(deadline);
  if (left <= 0) {
    throw new GatewayError(ErrorCode.DeadlineExceeded, 'deadline exceeded before the call started');
  }
  if (!Number.isFinite(left)) return work(left);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new GatewayError(ErrorCode.DeadlineExceeded, 'deadline exceeded')),
      left,
    );
  });
  try {
    return await Promise.race([work(left), expired]);
  } finally {
    clearTimeout(timer);
  }
}
