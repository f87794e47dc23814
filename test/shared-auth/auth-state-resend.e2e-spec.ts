import { Redis } from 'ioredis';
import { Scope, type Principal } from '@app/auth';
import { ErrorCode } from '@app/contracts';
import { authStateKeys, RedisAuthState } from '@app/redis-store';
import {
  ACQUIRE_CONNECTION_SCRIPT,
  COUNT_TICKET_SCRIPT,
  RATE_LIMIT_SCRIPT,
} from '../../libs/redis-store/src/auth-state/auth-state-scripts';
import type { LuaScript } from '../../libs/redis-store/src/lua-script';
import { CommandTrap } from '../idempotency/command-trap';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait-for';

/**
 * The caller's 503 comes while its command is parked, whatever this is (the trap holds it
 * until the test cuts the connection); the same timeout also bounds the retries that must
 * succeed. At 300 ms a stall of this process longer than that (GC, a busy core: CI runs
 * two suites side by side) made a retry time out before its answer was read; reproduced
 * by blocking the loop for 400 ms after sending it.
 */
const COMMAND_TIMEOUT_MS = 2_000;
const keys = authStateKeys('os');
const alice: Principal = {
  subject: 'alice',
  scopes: new Set([Scope.OrdersRead]),
  expiresAtMs: Date.now() + 3_600_000,
};

/**
 * Every write of the auth state counts something: a rate-limit hit, a connection slot, an
 * issued ticket. When the connection drops while one is in flight, its caller gets 503
 * (the command timeout) and retries; if the connection re-sent the command on reconnect
 * (ioredis's default), Redis would count the request that failed as well as its retry.
 * The command is parked in a relay (CommandTrap: Redis never sees it) and that connection
 * is cut, so "in flight when the connection dropped" is a state the test sets up. After
 * the reconnection a PING on the same connection answers only after anything re-sent
 * before it has run, so "nothing was re-sent" is checked, not hoped for.
 */
describe('shared auth state: a command in flight when the connection drops', () => {
  let redis: RedisServer;
  let admin: Redis;
  let trap: CommandTrap | undefined;
  let state: RedisAuthState | undefined;

  beforeAll(async () => {
    redis = await RedisServer.launch();
    admin = new Redis(redis.url);
  });
  afterEach(async () => {
    await state?.close();
    await trap?.close();
    state = trap = undefined;
    await admin.flushall();
  });
  afterAll(async () => {
    admin?.disconnect();
    await redis?.shutdown();
  });

  /**
   * An auth state whose `script` commands the trap parks once armed. A connection sends a
   * script's text the first time it runs it (EVALSHA after), and the trapped call is this
   * connection's first of the script, so the trap waits for the text. A re-send on the new
   * connection would go as EVAL too, which Redis runs: the double count would show.
   */
  async function trapped(
    script: LuaScript<unknown>,
    max = 3,
  ): Promise<[RedisAuthState, CommandTrap]> {
    const t = await CommandTrap.listen(redis.port, script.lua);
    const s = new RedisAuthState({
      redis: {
        url: `redis://127.0.0.1:${t.port}`,
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        connectTimeoutMs: 500,
        reconnectMaxDelayMs: 50,
      },
      maxConnectionsPerPrincipal: max,
      instanceId: 'i1',
    });
    [state, trap] = [s, t];
    await waitFor(() => s.client.status === 'ready', 'auth state ready');
    return [s, t];
  }

  /** Parks the command `call` sends, expects its 503, cuts the connection, reconnects. */
  async function failMidFlight(
    s: RedisAuthState,
    t: CommandTrap,
    call: () => Promise<unknown>,
  ): Promise<void> {
    t.arm();
    await expect(call()).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    expect(t.holding).toBe(true);
    const accepted = t.accepted;
    t.cut();
    await waitFor(() => t.accepted > accepted && s.client.status === 'ready', 'reconnected');
    // Anything the connection re-sent on reconnect ran before this answer.
    await s.client.ping();
  }

  it('a rate-limit hit that failed is not counted (its retry is the one hit)', async () => {
    const [s, t] = await trapped(RATE_LIMIT_SCRIPT);
    const hit = () => s.rateStorage.increment('alice', 60_000, 10, 0, 'publish');
    await failMidFlight(s, t, hit);

    expect(await admin.get(keys.rateHits('publish:alice'))).toBeNull();
    expect((await hit()).totalHits).toBe(1);
  });

  it('a connection slot whose acquire failed is not taken (the one slot is still free)', async () => {
    const [s, t] = await trapped(ACQUIRE_CONNECTION_SCRIPT, 1);
    await failMidFlight(s, t, () => s.connections.acquire('alice'));

    expect(await admin.hget(keys.connections('alice'), 'n:i1')).toBeNull();
    await expect(s.connections.acquire('alice')).resolves.toBeInstanceOf(Function);
  });

  it('a ticket whose issue failed is not counted against the subject', async () => {
    const [s, t] = await trapped(COUNT_TICKET_SCRIPT);
    await failMidFlight(s, t, () => s.tickets.issue(alice, 'order-1'));

    expect(await admin.get(keys.ticketCount('alice'))).toBeNull();
  });
});
