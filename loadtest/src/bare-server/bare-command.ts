import { join } from 'node:path';
import type { TransportName } from '../clients/transport';

/** How the overhead scenario starts the bare server (through tsx, like the CLI itself). */
export function bareServerCommand(_transport: TransportName): string[] {
  return ['node', '--require', require.resolve('tsx/cjs'), join(__dirname, 'bare-server.ts')];
}
