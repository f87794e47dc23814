import { join } from 'node:path';

/** How the overhead scenario starts the framework floor (through tsx, like the bare server). */
export function floorServerCommand(): string[] {
  return ['node', '--require', require.resolve('tsx/cjs'), join(__dirname, 'floor-server.ts')];
}
