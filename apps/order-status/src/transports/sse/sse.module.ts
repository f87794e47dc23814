import { Module } from '@nestjs/common';
import { SseController } from './sse.controller';
import { SseHeartbeat } from './sse-heartbeat.service';

@Module({ controllers: [SseController], providers: [SseHeartbeat] })
export class SseModule {}
