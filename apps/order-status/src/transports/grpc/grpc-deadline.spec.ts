import { ErrorCode, GatewayError } from '@app/contracts';
import { remainingMs, withinDeadline } from './grpc-deadline';

describe('withinDeadline', () => {
  it('fails fast with DeadlineExceeded when the deadline is already spent', async () => {
    const work = jest.fn(async () => 'done');
    await expect(withinDeadline(Date.now() - 1, work)).rejects.toMatchObject({
      code: ErrorCode.DeadlineExceeded,
    });
    await expect(withinDeadline(new Date(Date.now() - 1), work)).rejects.toBeInstanceOf(
      GatewayError,
    );
    expect(work).not.toHaveBeenCalled();
  });

  it('runs work without a timer when there is no deadline (Infinity)', async () => {
    await expect(withinDeadline(Infinity, async (left) => left)).resolves.toBe(Infinity);
  });

  it('gives work the remaining time and wins when work is fast', async () => {
    const left = await withinDeadline(Date.now() + 1_000, async (ms) => ms);
    expect(left).toBeGreaterThan(900);
    expect(left).toBeLessThanOrEqual(1_000);
  });

  it('rejects with DeadlineExceeded when work outlives the deadline', async () => {
    const started = Date.now();
    const never = new Promise<never>(() => undefined);
    await expect(withinDeadline(Date.now() + 50, () => never)).rejects.toMatchObject({
      code: ErrorCode.DeadlineExceeded,
    });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('lets a failure of work through unchanged', async () => {
    const err = new GatewayError(ErrorCode.NotFound, 'nope');
    await expect(withinDeadline(Date.now() + 1_000, () => Promise.reject(err))).rejects.toBe(err);
  });
});

describe('remainingMs', () => {
  it('accepts a Date or a ms timestamp', () => {
    expect(remainingMs(new Date(Date.now() + 500))).toBeGreaterThan(400);
    expect(remainingMs(Date.now() - 10)).toBeLessThan(0);
  });
});
