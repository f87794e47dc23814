/**
 * `npm run token -- --sub alice --scope orders:read [--scope ...] [--ttl 15m]`: prints a
 * development token signed with the service's HS256 secret (AUTH_HS256_SECRET, or the
 * demo secret), with the same issuer and audience the service checks. For production,
 * tokens come from your identity provider instead.
 */
import { parseArgs } from 'node:util';
import { isScope, parseTtl, signDevToken, SCOPES, type Scope } from '@app/auth';
import { loadConfig } from '../config/app-config';

const USAGE = `usage: npm run token -- --sub <customer-id> --scope <scope> [--scope <scope>] [--ttl 15m]
scopes: ${SCOPES.join(', ')}`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sub: { type: 'string' },
      scope: { type: 'string', multiple: true },
      ttl: { type: 'string', default: '15m' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const scopes = (values.scope ?? []).flatMap((s) => s.split(/[ ,]+/)).filter((s) => s !== '');
  const ttlS = parseTtl(values.ttl);
  const bad = scopes.filter((s) => !isScope(s));
  if (!values.sub || scopes.length === 0 || bad.length > 0 || ttlS === undefined) {
    process.stderr.write(`${bad.length > 0 ? `unknown scope: ${bad.join(', ')}\n` : ''}${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const { auth } = loadConfig(process.env);
  if (!auth.hs256Secret) {
    process.stderr.write(
      'no AUTH_HS256_SECRET configured: tokens come from your identity provider\n',
    );
    process.exitCode = 1;
    return;
  }
  const token = await signDevToken({
    subject: values.sub,
    scopes: scopes as Scope[],
    ttlS,
    secret: auth.hs256Secret,
    issuer: auth.issuer,
    audience: auth.audience,
  });
  process.stdout.write(`${token}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
