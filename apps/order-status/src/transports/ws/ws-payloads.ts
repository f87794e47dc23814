import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { ErrorCode, GatewayError, SubscribeDto, UnsubscribeDto } from '@app/contracts';

type Dto = SubscribeDto | UnsubscribeDto;

/**
 * Validates a message body against its DTO explicitly. Nest's ValidationPipe would throw a
 * WsException, which socket.io clients only see as an `exception` event, never as the ack
 * they are waiting for; here every failure is a GatewayError the gateway acknowledges.
 * The options match the HTTP pipe (unknown properties are rejected, no type coercion:
 * `"5"` is not a seq).
 */
export function parsePayload<T extends Dto>(
  cls: new () => T,
  message: string,
  payload: unknown,
): T {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new GatewayError(ErrorCode.InvalidArgument, `${message} payload must be an object`);
  }
  const dto = plainToInstance(cls, payload);
  const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) {
    throw new GatewayError(ErrorCode.InvalidArgument, describe(errors));
  }
  return dto;
}

function describe(errors: ValidationError[]): string {
  const messages = errors.flatMap((e) => Object.values(e.constraints ?? {}));
  return [...new Set(messages)].join('; ');
}
