import { parseCli } from './cli';

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
