import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ORDER_STATUSES } from './order-status';
import { PublishStatusDto } from './publish-status.dto';
import { SubscribeDto, UnsubscribeDto } from '@app/contracts/subscribe.dto';

function errorsOf<T extends object>(cls: new () => T, body: object): string[] {
  return validateSync(plainToInstance(cls, body)).flatMap((e) =>
    Object.values(e.constraints ?? {}),
  );
}

describe('PublishStatusDto', () => {
  it.each(ORDER_STATUSES)('accepts status %s', (status) => {
    expect(errorsOf(PublishStatusDto, { status })).toEqual([]);
  });

  it.each([
    [{}, 'status must be one of'],
    [{ status: 'lost' }, 'status must be one of'],
  ])('rejects %p', (body, message) => {
    const errors = errorsOf(PublishStatusDto, body);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join('; ')).toContain(message);
  });
});

describe('SubscribeDto / UnsubscribeDto', () => {
  it('accepts a valid id with and without afterSeq', () => {
    expect(errorsOf(SubscribeDto, { orderId: 'order-1' })).toEqual([]);
    expect(errorsOf(SubscribeDto, { orderId: 'order-1', afterSeq: 0 })).toEqual([]);
    expect(errorsOf(SubscribeDto, { orderId: 'order-1', afterSeq: 42 })).toEqual([]);
    expect(errorsOf(UnsubscribeDto, { orderId: 'A_1' })).toEqual([]);
  });

  it.each([
    [{ orderId: '' }, 'orderId must match'],
    [{ orderId: '-x' }, 'orderId must match'],
    [{ orderId: 'x', afterSeq: -1 }, 'afterSeq must be a non-negative integer'],
    [{ orderId: 'x', afterSeq: 1.5 }, 'afterSeq must be a non-negative integer'],
    [{ orderId: 'x', afterSeq: '3' }, 'afterSeq must be a non-negative integer'],
  ])('rejects %p', (body, message) => {
    expect(errorsOf(SubscribeDto, body).join('; ')).toContain(message);
  });

  it('UnsubscribeDto rejects a bad id', () => {
    expect(errorsOf(UnsubscribeDto, { orderId: 'a b' }).join('; ')).toContain('orderId must match');
  });
});
