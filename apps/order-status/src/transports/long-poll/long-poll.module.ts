import { Module } from '@nestjs/common';
import { LongPollController } from './long-poll.controller';

@Module({ controllers: [LongPollController] })
export class LongPollModule {}
