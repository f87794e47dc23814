import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';

/**
 * A stream on the heartbeat: it sets `active` whenever it writes an event (a field store,
 * no lookup), and `beat()` writes the heartbeat frame. The stream itself is the entry, so
 * a registration costs one Set slot.
 */
export interface HeartbeatEntry {
  active: boolean;
  beat(): void;
}

/**
 * Keeps quiet SSE streams alive through proxies' idle timeouts. One timer for every open
 * stream instead of one per connection: at thousands of streams a shared interval costs
 * one wake-up per period, not thousands.
 *
 * Only streams that sent nothing since the last beat get a heartbeat: a stream carrying
 * events needs none, and writing to every stream at once stalls the event loop right
 * when the streams are busiest.
 */
@Injectable()
export class SseHeartbeat implements OnModuleDestroy {
  private readonly entries = new Set<HeartbeatEntry>();
  private readonly timer: NodeJS.Timeout;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.timer = setInterval(() => this.beat(), config.sse.heartbeatMs);
    this.timer.unref();
  }

  add(entry: HeartbeatEntry): void {
    this.entries.add(entry);
  }

  delete(entry: HeartbeatEntry): void {
    this.entries.delete(entry);
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  private beat(): void {
    for (const entry of this.entries) {
      if (entry.active) entry.active = false;
      else entry.beat();
    }
  }
}
