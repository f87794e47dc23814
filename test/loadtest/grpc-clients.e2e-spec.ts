import { GrpcConnector } from '../../loadtest/src/clients/grpc-connector';
import { LeanGrpcConnector } from '../../loadtest/src/clients/lean/lean-grpc-connector';
import { RawGrpcConnector } from '../../loadtest/src/clients/lean/raw-grpc-connector';
import type { Connector } from '../../loadtest/src/clients/transport';
import { follow } from './follow';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The load test's gRPC clients against the service itself (auth, its stream ends, its
 * refusals): grpc-js's client, the lean one (as a shared channel uses it) and the raw
 * one report the same calls, so a scale run counts the same whichever reads.
 */
describe('load-test gRPC clients against the service', () => {
  let app: TestApp;
  const connectors: Connector[] = [];
  const clients = (token: string | undefined): [string, Connector][] => {
    const made: [string, Connector][] = [
      ['grpc-js', new GrpcConnector(app.grpcAddress, token, false)],
      ['lean, shared channel', new LeanGrpcConnector(app.grpcAddress, token)],
      ['raw', new RawGrpcConnector(app.grpcAddress, token)],
    ];
    connectors.push(...made.map(([, c]) => c));
    return made;
  };

  beforeAll(async () => {
    // Streams end at 400 ms (the service's maximum stream age): every call has an end.
    app = await startTestApp({ STREAM_MAX_AGE_MS: '400', STREAM_MAX_AGE_JITTER_MS: '0' });
    await app.createOwnedOrder('lc-1', 'alice');
    for (let i = 0; i < 3; i++) await app.progress('lc-1');
    await app.createOwnedOrder('lc-2', 'bob');
  });
  afterAll(async () => {
    await Promise.all(connectors.map((c) => c.close()));
    await app.close();
  });

  const alice = (): string => app.token({ sub: 'alice', scopes: ['orders:read'] });

  it('read the replay and the service-ended stream alike (max_age)', async () => {
    const outcomes = await Promise.all(clients(alice()).map(([, c]) => follow(c, 'lc-1')));
    expect(outcomes[0]).toEqual([
      'open',
      'event 1',
      'event 2',
      'event 3',
      'event 4',
      'end max_age',
    ]);
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[2]).toEqual(outcomes[0]);
  });

  it.each([
    ['another customer’s order', 'lc-2', true, 'error grpc_NOT_FOUND'],
    ['no token', 'lc-1', false, 'error grpc_UNAUTHENTICATED'],
  ])('read a refusal alike: %s', async (_name, orderId, withToken, expected) => {
    const made = clients(withToken ? alice() : undefined);
    const outcomes = await Promise.all(made.map(([, c]) => follow(c, orderId)));
    for (const [i, [name]] of made.entries())
      expect([name, outcomes[i]]).toEqual([name, [expected]]);
  });
});
