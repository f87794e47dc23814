import { StreamEndReason } from '@app/contracts';
import type { DrainAnswer } from '../../connections/http-drain-gate';
import { endFrame, retryFrame } from './sse-frames';

/**
 * EventSource turned away during the drain gets a well-formed stream with `retry:` and
 * `end`, as an open stream does: an error status would make it give up for good (WHATWG
 * HTML, "fail the connection").
 */
export const sseDrainAnswer: DrainAnswer = {
  accepts: (req) => (req.headers.accept ?? '').includes('text/event-stream'),
  send: (reply, retryAfterMs) => {
    void reply
      .status(200)
      .header('content-type', 'text/event-stream; charset=utf-8')
      .send(retryFrame(retryAfterMs) + endFrame(StreamEndReason.Shutdown, retryAfterMs));
  },
};
