import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { HEARTBEAT_FRAME } from './sse-frames';

interface Writable {
  write(chunk: string): boolean;
}

/**
 * One timer for every open SSE stream instead of one per connection: at thousands of
 * streams a shared interval costs one wake-up per period, not thousands.
 */
@Injectable()
export class SseHeartbeat implements OnModuleDestroy {
  private readonly streams = new Set<Writable>();
  private readonly timer: NodeJS.Timeout;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.timer = setInterval(() => {
      for (const s of this.streams) s.write(HEARTBEAT_FRAME);
    }, config.sse.heartbeatMs);
    this.timer.unref();
  }

  add(stream: Writable): void {
    this.streams.add(stream);
  }

  delete(stream: Writable): void {
    this.streams.delete(stream);
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }
}
