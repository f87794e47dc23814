import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * The Content-Security-Policy of the demo page. It is served from this origin with its
 * scripts and styles as files (no CDN, no inline script), and talks to this origin only
 * (fetch, EventSource, socket.io over ws/wss), so 'self' is all it needs. `connect-src`
 * lists ws:/wss: explicitly because older browsers do not count a WebSocket to the same
 * host as 'self' (CSP Level 2).
 */
export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  // Inline style attributes are common in small demo pages and carry no script.
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'", 'ws:', 'wss:'],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
} as const;

/**
 * The CSP of the API documentation (/docs: Swagger UI from swagger-ui-dist, served from
 * this origin). Stricter than the demo page's: no inline style either (the page and its
 * start-up script are files), no framing, no base or form targets. `data:` images are
 * the icons swagger-ui.css embeds; `connect-src 'self'` lets "Try it out" call the API.
 * Checked in headless Chromium by test/api-docs (no violation while the spec renders).
 */
export const DOCS_CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
} as const;

/** helmet's full default set (its default CSP directives plus ours), for the page. */
const PAGE_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { directives: { ...CONTENT_SECURITY_POLICY } },
  // Same answer as frame-ancestors 'none', for browsers that only know the old header.
  xFrameOptions: { action: 'deny' },
};

/**
 * The client library's builds: the page set, but `Cross-Origin-Resource-Policy:
 * cross-origin`, so a page of another origin may load them (a classic script is a no-cors
 * load, which `same-origin` blocks; Fetch standard, CORP check). They are public code with
 * no user data, what CORP protects; a module script is a CORS load, answered for the
 * origins in HTTP_CORS_ORIGINS only.
 */
const LIBRARY_OPTIONS: HelmetOptions = {
  ...PAGE_OPTIONS,
  crossOriginResourcePolicy: { policy: 'cross-origin' },
};

/** helmet's page set with the docs CSP alone (none of helmet's default directives). */
const DOCS_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: { ...DOCS_CONTENT_SECURITY_POLICY } },
  xFrameOptions: { action: 'deny' },
};

/**
 * API responses (JSON, event streams, metrics) are never rendered as documents, so the
 * headers that only shape how a page behaves (opener and agent-cluster isolation, DNS
 * prefetch, IE download and XSS-filter switches, Flash policies) are left out, as the
 * OWASP REST Security Cheat Sheet advises. What is kept still matters if an API URL is
 * opened in a tab or framed: no sniffing a JSON body into HTML, a CSP that allows
 * nothing and no framing, no cross-origin embedding, no referrer, and HSTS.
 * Fewer headers also means fewer bytes on every poll answer and less memory per held
 * stream (the load test's bytes and idle scenarios measure both).
 */
const API_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xFrameOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};

export type HeaderSet = Readonly<Record<string, string>>;

/**
 * Runs helmet's middleware once against a recording response and keeps the headers it
 * sets. helmet stays the authority on header names and values, but nothing is rebuilt
 * per request (@fastify/helmet calls helmet(options), re-serialising the CSP, on every
 * request) and held responses share the strings.
 */
export function recordHelmetHeaders(options: HelmetOptions): HeaderSet {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let done = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err !== undefined) throw err instanceof Error ? err : new Error('helmet failed');
    done = true;
  });
  // helmet's middleware is synchronous; if a version ever is not, fail at start-up.
  if (!done) throw new Error('helmet middleware did not finish synchronously');
  return Object.freeze(headers);
}

export interface SecurityHeaders {
  /** The demo page and its assets. */
  readonly page: HeaderSet;
  /** The client library's browser builds, which other origins may load. */
  readonly library: HeaderSet;
  /** The API documentation (/docs) and its assets. */
  readonly docs: HeaderSet;
  /** Everything else: /v1 API, streams, health, metrics, errors. */
  readonly api: HeaderSet;
}

/** Recorded once, when this module loads: fixed strings shared by every response. */
export const SECURITY_HEADERS: SecurityHeaders = Object.freeze({
  page: recordHelmetHeaders(PAGE_OPTIONS),
  library: recordHelmetHeaders(LIBRARY_OPTIONS),
  docs: recordHelmetHeaders(DOCS_OPTIONS),
  api: recordHelmetHeaders(API_OPTIONS),
});
