import { parseTraceMessage, traceMessagePrefix } from './trace-message';

const EVENT = '{"orderId":"o-1","seq":2,"status":"paid","publishedAtUs":1}';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('trace context on an order channel message', () => {
  it('an untraced message is the event JSON alone', () => {
    expect(traceMessagePrefix(undefined)).toBe('');
    expect(parseTraceMessage(EVENT)).toEqual({ json: EVENT });
  });

  it('round-trips traceparent, with and without tracestate', () => {
    for (const context of [
      { traceparent: TRACEPARENT },
      { traceparent: TRACEPARENT, tracestate: 'a=1,b=2' },
    ]) {
      const message = traceMessagePrefix(context) + EVENT;
      expect(parseTraceMessage(message)).toEqual({ json: EVENT, context });
      expect(JSON.parse(parseTraceMessage(message).json)).toEqual(JSON.parse(EVENT));
    }
  });

  it('does not carry a context that would cut the message in the wrong place', () => {
    expect(traceMessagePrefix({ traceparent: `${TRACEPARENT}\n{` })).toBe('');
    expect(traceMessagePrefix({ traceparent: TRACEPARENT, tracestate: 'a=1\r\nb=2' })).toBe('');
    expect(traceMessagePrefix({ traceparent: '{' })).toBe('');
  });

  it('a message with no complete prefix is left to the JSON parser', () => {
    expect(parseTraceMessage('garbage')).toEqual({ json: 'garbage' });
  });
});
