import { errorBody, ErrorCode, GatewayError } from '@app/contracts';
import type { ErrorAck, OrdersSocket } from './orders-ws.events';

/** Does not name the event: a client's input does not belong in the answer. */
const UNKNOWN_EVENT: ErrorAck = {
  ok: false,
  ...errorBody(
    new GatewayError(
      ErrorCode.InvalidArgument,
      'unknown event: the /orders namespace takes subscribe and unsubscribe',
    ),
  ),
};

/**
 * Answers an event no handler listens for with an error ack, when the client asked for
 * one: socket.io drops such packets silently, which leaves the client waiting for its
 * ack until its own timeout. Installed per socket (packet middleware); an event counts
 * as known when the gateway has a listener for it, so no list is kept twice.
 */
export function answerUnknownEvents(socket: OrdersSocket): void {
  socket.use(([event, ...args], next) => {
    if (socket.listenerCount(event) > 0) {
      next();
      return;
    }
    const ack: unknown = args.at(-1);
    if (typeof ack === 'function') (ack as (res: ErrorAck) => void)(UNKNOWN_EVENT);
  });
}
