import type { DynamicModule, Type } from '@nestjs/common';
import type { StreamDomain } from '@app/contracts';
import { ORDER_DOMAIN } from '@app/order-domain';
import { PAYLOAD_DOMAIN } from '@app/payload-domain';
import { OrderPublishGrpcModule } from '../orders/order-publish-grpc.module';
import { OrdersModule } from '../orders/orders.module';
import { PayloadModule } from '../payload/payload.module';
import type { StreamDomainName } from '../config/benchmark-config';

/** What the app's wiring asks of a domain the service can carry. */
export interface ServedDomain {
  /**
   * Its descriptor, under the engine's base types: the stores, the bus and the transports
   * are generic over the domain and read everything they need from it at run time.
   */
  readonly domain: StreamDomain;
  /** The Nest modules of its publish API (routes, gRPC calls). */
  readonly publishing: (opts: { readonly adminEnabled: boolean }) => (Type | DynamicModule)[];
  /** Whether the demo simulator moves its streams (it publishes order events). */
  readonly simulated: boolean;
}

/**
 * The domains the service can carry, chosen by STREAM_DOMAIN (whose values are the keys'
 * names in config/benchmark-config.ts, kept apart so the configuration imports no module).
 */
export const SERVED_DOMAINS = {
  order: {
    domain: ORDER_DOMAIN,
    publishing: ({ adminEnabled }) => [
      OrdersModule.register({ adminEnabled }),
      OrderPublishGrpcModule,
    ],
    simulated: true,
  },
  payload: {
    domain: PAYLOAD_DOMAIN,
    publishing: ({ adminEnabled }) => [PayloadModule.register({ adminEnabled })],
    simulated: false,
  },
} as const satisfies Record<StreamDomainName, ServedDomain>;

export function servedDomain(name: StreamDomainName): ServedDomain {
  return SERVED_DOMAINS[name];
}
