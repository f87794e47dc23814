import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';

/** A socket on the keepalive: pinged each period, cut when the last ping went unanswered. */
export interface KeepaliveEntry {
  /** Pings the peer, or cuts it when it has not answered the previous ping. */
  keepalive(): void;
}

/**
 * Ping/pong keepalive (RFC 6455 section 5.5.2) for every raw WebSocket: proxies close idle
 * connections, and a peer that vanished without a FIN (a cable pulled, a laptop closed)
 * holds its slot until TCP gives up, which can take hours. Each period every socket that
 * answered its last ping gets a new one and every socket that did not is cut, so a dead
 * peer is gone within two periods. One timer for every socket, as SSE's heartbeat.
 */
@Injectable()
export class WebSocketKeepalive implements OnModuleDestroy {
  private readonly entries = new Set<KeepaliveEntry>();
  private readonly timer: NodeJS.Timeout;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.timer = setInterval(() => this.tick(), config.websocket.pingIntervalMs);
    this.timer.unref();
  }

  add(entry: KeepaliveEntry): void {
    this.entries.add(entry);
  }

  delete(entry: KeepaliveEntry): void {
    this.entries.delete(entry);
  }

  /** Sockets on the keepalive now (tests). */
  get size(): number {
    return this.entries.size;
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    for (const entry of this.entries) entry.keepalive();
  }
}
