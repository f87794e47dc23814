import { parseCli } from './cli';
import { runnableRungs } from './ladder/rungs';

describe('parseCli --node', () => {
  it('takes an executable file and resolves it to an absolute path', () => {
    const parsed = parseCli(['overhead', '--node', process.execPath]);
    expect('errors' in parsed).toBe(false);
    if ('errors' in parsed) return;
    expect(parsed.node).toBe(process.execPath);
  });

  it('refuses a path that is not an executable file before any run starts', () => {
    for (const bad of ['/nonexistent/bin/node', __dirname]) {
      const parsed = parseCli(['overhead', '--node', bad]);
      expect(parsed).toEqual({ errors: [`--node must be an executable file, got ${bad}`] });
    }
  });

  it('leaves the service on the node of PATH without --node', () => {
    const parsed = parseCli(['overhead']);
    expect('errors' in parsed ? parsed.errors : parsed.node).toBeUndefined();
  });
});

describe('parseCli --node-flag', () => {
  it('takes each flag given, in order', () => {
    const parsed = parseCli([
      'steady',
      '--node-flag=--no-allocation-site-pretenuring',
      '--node-flag=--max-semi-space-size=64',
    ]);
    expect('errors' in parsed ? parsed.errors : parsed.nodeFlags).toEqual([
      '--no-allocation-site-pretenuring',
      '--max-semi-space-size=64',
    ]);
  });

  it('refuses anything but one flag per option', () => {
    for (const bad of ['rm', '-x', '--a b', '--a;b', '--']) {
      expect(parseCli(['steady', `--node-flag=${bad}`])).toEqual({
        errors: [`--node-flag takes one flag such as --max-semi-space-size=64, got ${bad}`],
      });
    }
  });

  it('starts the servers with no extra flag without it', () => {
    const parsed = parseCli(['steady']);
    expect('errors' in parsed ? parsed.errors : parsed.nodeFlags).toBeUndefined();
  });
});

describe('parseCli --reference', () => {
  it('takes a full-size run of the service, and refuses --tiny or --target with it', () => {
    const parsed = parseCli(['steady', '--reference']);
    expect('errors' in parsed ? parsed.errors : parsed.reference).toBe(true);
    for (const extra of [['--tiny'], ['--target', 'http://127.0.0.1:3000']]) {
      expect(parseCli(['steady', '--reference', ...extra])).toEqual({
        errors: ['--reference takes neither --tiny nor --target: a reference run is full size'],
      });
    }
  });
});

describe('parseCli --rungs', () => {
  it('selects ladder rungs by id, in the ladder order, at any size', () => {
    const parsed = parseCli(['ladder', '--rungs', 'tracing-100, metrics']);
    expect('errors' in parsed ? parsed.errors : parsed.overrides.rungs).toEqual([
      'tracing-100',
      'metrics',
    ]);
    const ids = (tiny: boolean) =>
      runnableRungs('sse', tiny, ['tracing-100', 'metrics']).map((r) => r.id);
    expect(ids(false)).toEqual(['metrics', 'tracing-100']);
    expect(ids(true)).toEqual(['metrics', 'tracing-100']);
  });

  it('refuses an unknown rung and names the known ones', () => {
    const parsed = parseCli(['ladder', '--rungs', 'metrics,tracing-50']);
    expect('errors' in parsed && parsed.errors[0]).toMatch(
      /^unknown rung\(s\) tracing-50; known: bare, .*tracing-100$/,
    );
  });
});

describe('parseCli --orders for the ladder', () => {
  it('takes one order count, so one fan-out prices every rung', () => {
    const parsed = parseCli(['ladder', '--orders', '20']);
    expect('errors' in parsed ? parsed.errors : parsed.overrides.orders).toEqual([20]);
    const many = parseCli(['ladder', '--orders', '1,20']);
    expect('errors' in many && many.errors[0]).toMatch(/^the ladder takes one --orders/);
    expect('errors' in parseCli(['broadcast', '--orders', '1,20'])).toBe(false);
  });
});
