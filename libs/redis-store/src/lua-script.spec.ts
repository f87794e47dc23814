import { PUBLISH_SCRIPT, READ_HISTORY_SCRIPT } from './redis-scripts';
import * as authScripts from './auth-state/auth-state-scripts';
import { LuaScript } from './lua-script';

describe('LuaScript', () => {
  it('refuses a Redis command as its name: the custom command would shadow it', () => {
    expect(() => new LuaScript('eval', 'return 1')).toThrow(TypeError);
    expect(() => new LuaScript('publish', 'return 1')).toThrow(TypeError);
  });

  it('names every script of the store and the auth state differently', () => {
    const names = [PUBLISH_SCRIPT, READ_HISTORY_SCRIPT, ...Object.values(authScripts)].map(
      (s) => s.name,
    );
    expect(new Set(names).size).toBe(names.length);
  });
});
