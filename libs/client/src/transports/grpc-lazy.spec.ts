import { ORDER_DOMAIN } from '@app/order-domain/order-domain';
import { WatchError } from '../watch-error';
import { lazyGrpcConnector } from './grpc-lazy';

describe('lazyGrpcConnector', () => {
  it('ends with a permanent error, not retries, when the channel cannot be made', async () => {
    const connector = lazyGrpcConnector({
      baseUrl: '',
      longPollWaitS: 1,
      useEventSource: false,
      domain: ORDER_DOMAIN,
    });
    const attempt = connector.connect({
      orderId: 'o',
      afterSeq: 0,
      token: () => undefined,
      tokenVersion: () => 0,
      signal: new AbortController().signal,
      opened: () => undefined,
      item: () => undefined,
      cursor: () => 0,
    });
    const err = await attempt.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WatchError);
    expect(err).toMatchObject({ code: 'invalid_argument', permanent: true });
    expect((err as Error).message).toMatch(/^transport 'grpc' could not start: /);
    connector.close();
  });
});
