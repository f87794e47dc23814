import { EventSource } from 'eventsource';
import { DEFAULT_TEST_TOKEN } from './auth';

/**
 * An EventSource (the `eventsource` package, WHATWG semantics) that sends a bearer
 * token: Node's fetch can set headers, which a browser's EventSource cannot (browsers use
 * the session cookie or a stream ticket instead).
 */
export function authorizedEventSource(
  url: string,
  token: string = DEFAULT_TEST_TOKEN,
): EventSource {
  return new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
      }),
  });
}
