import { Module } from '@nestjs/common';
import { WebSocketKeepalive } from './websocket-keepalive.service';
import { WebSocketUpgradeRequiredController } from './websocket-upgrade-required.controller';
import { WebSocketUpgrades } from './websocket-upgrades.service';

/** The raw WebSocket transport; bootstrap attaches it to the HTTP listeners. */
@Module({
  controllers: [WebSocketUpgradeRequiredController],
  providers: [WebSocketUpgrades, WebSocketKeepalive],
  exports: [WebSocketUpgrades],
})
export class WebSocketModule {}
