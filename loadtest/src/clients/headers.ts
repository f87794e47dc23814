import type { HeaderProfile } from './transport';

/**
 * What a Chrome tab sends to an API on the same site: user agent, accept, language,
 * fetch metadata and a session cookie (the seed-001 "browser" profile). No
 * accept-encoding: the load test reads bodies uncompressed.
 */
const BROWSER_HEADERS: Readonly<Record<string, string>> = {
  'user-agent':
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  accept: 'text/event-stream, application/json, */*',
  'accept-language': 'en-GB,en-US;q=0.9,en;q=0.8',
  'cache-control': 'no-cache',
  referer: 'http://127.0.0.1/orders/track',
  'sec-fetch-dest': 'empty',
  'sec-fetch-mode': 'cors',
  'sec-fetch-site': 'same-origin',
  cookie:
    'session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjdXN0b21lci00MjEiLCJpYXQiOjE3NjQ0NzAwMDB9.' +
    'c2lnbmF0dXJlLXBsYWNlaG9sZGVyLWZvci1ieXRlLWNvdW50aW5n; _ga=GA1.1.1234567890.1764470000; ' +
    'consent=analytics%3Dfalse%26ads%3Dfalse',
};

export function requestHeaders(
  profile: HeaderProfile,
  token: string | undefined,
  accept: string,
): Record<string, string> {
  const headers: Record<string, string> =
    profile === 'browser' ? { ...BROWSER_HEADERS } : { accept };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return headers;
}
