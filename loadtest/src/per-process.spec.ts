import { argvForTransport } from './per-process';

describe('argvForTransport', () => {
  it('keeps every flag and replaces --transports and --out, in both forms', () => {
    expect(
      argvForTransport(
        ['scale', '--transports', 'sse,ws', '--duration', '5', '--out=/tmp/x', '--tiny'],
        'ws',
        '/tmp/ws',
      ),
    ).toEqual(['scale', '--duration', '5', '--tiny', '--transports', 'ws', '--out', '/tmp/ws']);
    expect(
      argvForTransport(
        ['scale', '--transports=sse,ws', '--out', '/tmp/x', '--node', '/n'],
        'sse',
        '/o',
      ),
    ).toEqual(['scale', '--node', '/n', '--transports', 'sse', '--out', '/o']);
  });
});
