import { Redis } from 'ioredis';
import type { RedisClient } from './redis-client';

/** A custom command as `defineCommand` puts it on the client: numkeys, keys, then args. */
type ScriptCommand = (...numKeysKeysAndArgs: (string | number)[]) => Promise<unknown>;

/**
 * A Lua script that returns `Reply`, run as an ioredis custom command (`defineCommand`).
 * ioredis's Script sends the script's text the first time a connection runs it and its
 * SHA (EVALSHA) after that; a NOSCRIPT answer (Redis restarted behind the same
 * connection, a failover, SCRIPT FLUSH) sends it again as EVAL. It does so on a single
 * Redis and on whichever cluster node serves the keys' slot alike, so every script here
 * runs on both. The command is defined on a client the first time the script runs there.
 */
export class LuaScript<Reply> {
  /**
   * @param name the command's name on the client; not a Redis command's, which the
   *   custom command would shadow
   */
  constructor(
    readonly name: string,
    readonly lua: string,
  ) {
    if (name in Redis.prototype) throw new TypeError(`script name ${name} is a Redis command`);
  }

  /**
   * Runs the script with `keys` (their number is sent with them, so one script serves
   * callers with more or fewer keys) and `args`. Resolves with the script's reply as
   * ioredis decodes it; rejects with Redis's or the connection's error.
   */
  run(
    client: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<Reply> {
    const commands = client as unknown as Partial<Record<string, ScriptCommand>>;
    if (commands[this.name] === undefined) client.defineCommand(this.name, { lua: this.lua });
    const command = commands[this.name] as ScriptCommand;
    return command.call(client, keys.length, ...keys, ...args) as Promise<Reply>;
  }
}
