import { DEFAULT_AUDIENCE, DEFAULT_ISSUER } from './auth-options';
import { loadJose } from './jose-loader';
import type { Scope } from './scopes';

export interface DevTokenOptions {
  readonly subject: string;
  readonly scopes: readonly Scope[];
  /** Lifetime in seconds. */
  readonly ttlS: number;
  readonly secret: string;
  /** @default 'order-status-demo' */
  readonly issuer?: string;
  /** @default 'order-status' */
  readonly audience?: string;
}

/**
 * An HS256 token for development and tests (`npm run token`, the demo banner). Real
 * deployments get tokens from their identity provider and verify them with a JWKS.
 */
export async function signDevToken(o: DevTokenOptions): Promise<string> {
  const { SignJWT } = await loadJose();
  const nowS = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: o.scopes.join(' ') })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(o.subject)
    .setIssuer(o.issuer ?? DEFAULT_ISSUER)
    .setAudience(o.audience ?? DEFAULT_AUDIENCE)
    .setIssuedAt(nowS)
    .setExpirationTime(nowS + o.ttlS)
    .sign(new TextEncoder().encode(o.secret));
}

/** `90`, `90s`, `15m`, `2h`, `1d` as seconds; undefined when unreadable. */
export function parseTtl(value: string): number | undefined {
  const m = /^(\d{1,7})([smhd]?)$/.exec(value.trim());
  if (!m) return undefined;
  const unit = { '': 1, s: 1, m: 60, h: 3_600, d: 86_400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
  const s = Number(m[1]) * unit;
  return s > 0 ? s : undefined;
}
