import { Global, Module } from '@nestjs/common';
import { StreamConnections } from './stream-connections.service';

/** The connection life cycle every transport uses (global: each transport module injects it). */
@Global()
@Module({ providers: [StreamConnections], exports: [StreamConnections] })
export class ConnectionsModule {}
