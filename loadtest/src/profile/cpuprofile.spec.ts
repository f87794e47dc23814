import { areaOf, summarizeProfile, type CpuProfile } from './cpuprofile';

const frame = (functionName: string, url = '', lineNumber = 0) => ({
  functionName,
  url,
  lineNumber,
});

describe('summarizeProfile', () => {
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)') },
      { id: 2, callFrame: frame('(idle)') },
      { id: 3, callFrame: frame('write', 'node:internal/http2/core', 9) },
      { id: 4, callFrame: frame('encode', 'file:///x/node_modules/@grpc/grpc-js/build/a.js', 1) },
      { id: 5, callFrame: frame('publish', 'file:///x/dist/apps/order-status/main.js', 41) },
    ],
    samples: [2, 3, 4, 4, 5, 2],
    timeDeltas: [1000, 1000, 2000, 2000, 1000, 3000],
    startTime: 0,
    endTime: 10_000,
  };

  it('charges each sample its time delta and leaves idle out of busy time', () => {
    const s = summarizeProfile(profile);
    expect(s.busyMs).toBe(6);
    expect(s.wallMs).toBe(10);
    expect(s.functions[0]).toEqual({
      name: 'encode node_modules/@grpc/grpc-js/build/a.js:2',
      area: '@grpc/grpc-js',
      ms: 4,
      pct: 66.7,
    });
    expect(s.areas.map((a) => [a.name, a.ms])).toEqual([
      ['@grpc/grpc-js', 4],
      ['node:http2', 1],
      ['service (dist bundle: apps + libs)', 1],
    ]);
  });

  it('leaves out the first skipMs', () => {
    // Samples end at 1, 2, 4, 6, 7 and 10 ms: skipping 3 ms keeps encode, encode, publish.
    const s = summarizeProfile(profile, 25, 3);
    expect(s.busyMs).toBe(5);
    expect(s.areas.map((a) => a.name)).toEqual([
      '@grpc/grpc-js',
      'service (dist bundle: apps + libs)',
    ]);
  });

  it('limits the function list to top', () => {
    expect(summarizeProfile(profile, 1).functions).toHaveLength(1);
  });
});

describe('areaOf', () => {
  it('names packages, node internals and V8 buckets', () => {
    expect(areaOf('file:///a/node_modules/socket.io/dist/x.js', 'f')).toBe('socket.io');
    expect(areaOf('node:net', 'f')).toBe('node:net');
    expect(areaOf('', '(garbage collector)')).toBe('(garbage collector)');
    expect(areaOf('file:///w/loadtest/src/bare-server/bare-server.ts', 'f')).toBe('bare server');
  });
});
