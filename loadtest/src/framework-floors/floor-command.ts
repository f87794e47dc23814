import { join } from 'node:path';

/** How the overhead scenario starts the NestJS floor (through tsx, like the bare server). */
export function floorServerCommand(): string[] {
  return ['node', '--require', require.resolve('tsx/cjs'), join(__dirname, 'floor-server.ts')];
}

/** The Fastify floor (the same long-poll on Fastify alone), started the same way. */
export function fastifyFloorServerCommand(): string[] {
  return [
    'node',
    '--require',
    require.resolve('tsx/cjs'),
    join(__dirname, 'fastify-floor-server.ts'),
  ];
}
