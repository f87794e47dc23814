import { asyncContextFrameEnabled, requestContextEnabled, runtimeFlags } from './request-context';

describe('asyncContextFrameEnabled', () => {
  it.each([
    ['20.20.2', [], false],
    ['v20.19.0', [], false],
    ['22.12.0', [], false],
    ['22.12.0', ['--experimental-async-context-frame'], true],
    ['24.0.0', [], true],
    ['26.12.1', [], true],
    ['26.12.1', ['--no-async-context-frame'], false],
    ['not a version', [], false],
  ])('Node %s with flags %j: %s', (version, flags, expected) => {
    expect(asyncContextFrameEnabled(version, flags)).toBe(expected);
  });

  it('reads the flags from the command line and NODE_OPTIONS', () => {
    expect(
      runtimeFlags(['--inspect'], ' --no-async-context-frame  --max-old-space-size=512 '),
    ).toEqual(['--inspect', '--no-async-context-frame', '--max-old-space-size=512']);
    expect(runtimeFlags([], undefined)).toEqual([]);
  });
});

describe('requestContextEnabled', () => {
  it.each([
    ['auto', true, true],
    ['auto', false, false],
    ['on', false, true],
    ['on', true, true],
    ['off', true, false],
    ['off', false, false],
  ] as const)('%s where AsyncContextFrame is %s: %s', (setting, frame, expected) => {
    expect(requestContextEnabled(setting, frame)).toBe(expected);
  });
});
