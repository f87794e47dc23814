import { ResetReason, StreamEndReason } from '@app/contracts';

const list = (values: readonly string[]) => values.map((v) => `\`${v}\``).join(', ');

/*
 * The prose of the streaming routes, whose bodies OpenAPI 3.0 cannot describe frame by
 * frame; docs/asyncapi.yaml has the message schemas. Enum values are taken from the
 * contracts so the text cannot name a reason the code does not have.
 */

export const SSE_STREAM_DESCRIPTION = `
\`text/event-stream\` (WHATWG HTML, server-sent events) over HTTP/1.1 or HTTP/2. The stream
opens with a \`retry:\` line, then sends, in seq order:

- \`event: status\`: one OrderStatusChanged, a real change of status (JSON in \`data:\`);
- \`event: tracking\`: one TrackingUpdated (location, ETA; the status does not change);
- \`event: reset\`: a StreamReset (\`reason\`: ${list(Object.values(ResetReason))}) with the
  snapshot to replace the view with;
- \`event: skipped\`: a StreamSkipped range dropped because this client read too slowly;
- \`event: end\`: \`{"reason"}\`, one of ${list(Object.values(StreamEndReason))}; reconnect
  unless \`completed\` (\`token_expired\`: with a fresh credential).

Status changes and tracking updates share the order's seq sequence. Every frame but
\`end\` carries \`id:\`, the cursor after it (the event's seq, the snapshot's
\`lastSeq\`, the range's \`toSeq\`), so EventSource's automatic reconnect resumes exactly there
with \`Last-Event-ID\`. Quiet streams get a \`: ping\` comment every SSE_HEARTBEAT_MS.

Credentials: a bearer token, or (for EventSource, which cannot send headers) a single-use
\`?ticket=\` from \`POST /v1/stream-tickets\` or the session cookie from \`POST /v1/session\`.
Errors before the stream opens are JSON error bodies with their HTTP status.
`.trim();

export const LONG_POLL_DESCRIPTION = `
Answers 200 as soon as anything exists after \`after\` (at most LONG_POLL_MAX_BATCH events:
status changes and tracking updates, each named by \`type\`), 204 when \`wait\` seconds pass
with nothing new. Send \`next\` as \`after\` on the next poll.
An answer holds at most one \`reset\` or \`skipped\`, which comes before every event in
\`events\`: apply it first. \`completed: true\`: the order is finished, stop polling.
Needs a bearer token (\`orders:read\` for your own order, \`orders:read:any\` for any); a held
poll counts as an open connection of the caller while it waits, and is never held past
the token's expiry.
`.trim();
