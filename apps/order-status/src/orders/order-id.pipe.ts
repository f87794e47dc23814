import { Injectable, type PipeTransform } from '@nestjs/common';
import { parseOrderId } from '@app/contracts';

/** Validates the `:orderId` route parameter; a bad id is a typed 400, never a lookup. */
@Injectable()
export class OrderIdPipe implements PipeTransform<unknown, string> {
  transform(value: unknown): string {
    return parseOrderId(value);
  }
}
