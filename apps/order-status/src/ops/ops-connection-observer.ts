import {
  ConnectionObserver,
  type ConnectionHandle,
  type ConnectionMemorySource,
} from '../connections/connection-observer';
import type { ConnectionLog } from './connection-log';

/** Ops' side of the connection layer's reports: the log lines and the memory gauges. */
export class OpsConnectionObserver extends ConnectionObserver {
  constructor(
    private readonly log: ConnectionLog,
    private readonly memory: (source: ConnectionMemorySource) => void,
  ) {
    super();
  }

  get enabled(): boolean {
    return this.log.enabled;
  }

  opened(transport: string, principal: string, attrs?: Record<string, unknown>): ConnectionHandle {
    return this.log.opened(transport, principal, attrs);
  }

  trackMemory(source: ConnectionMemorySource): void {
    this.memory(source);
  }
}
