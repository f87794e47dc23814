/**
 * The bodies of a `multipart/mixed` response, in order: how Nchan answers a long-poll with
 * `nchan_longpoll_multipart_response on`, every message retained after the client's
 * cursor in one response (each part may carry its own headers, e.g. the Content-Type the
 * message was published with). `undefined` when `contentType` is not multipart/mixed.
 * Throws on a body that does not follow RFC 2046's delimiter lines.
 */
export function multipartBodies(
  contentType: string | undefined,
  body: string,
): string[] | undefined {
  const boundary = /^multipart\/mixed;\s*boundary="?([^";]+)"?/i.exec(contentType ?? '')?.[1];
  if (boundary === undefined) return undefined;
  const delimiter = `--${boundary}`;
  const parts = body.split(`\r\n${delimiter}`);
  // The first delimiter has no CRLF before it when it opens the body.
  if (!parts[0].startsWith(delimiter))
    throw new Error('multipart body without its first delimiter');
  parts[0] = parts[0].slice(delimiter.length);
  const last = parts.pop();
  if (last === undefined || !last.startsWith('--'))
    throw new Error('multipart body without its close delimiter');
  return parts.map((part) => {
    // A part: the rest of the delimiter line, its headers (maybe none), a blank line, the body.
    const headersEnd = part.indexOf('\r\n\r\n');
    if (headersEnd < 0) throw new Error('multipart part without a header section');
    return part.slice(headersEnd + 4);
  });
}
