import type { Server } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, protoPath as HEALTH_PROTO_PATH } from 'grpc-health-check';
import { ORDER_STATUS_PROTO_PACKAGE } from '@app/contracts';
import { GRPC_SERVICE } from './grpc-messages';

/** The fully qualified service name health checks and reflection report. */
export const ORDER_STATUS_SERVICE_FQN = `${ORDER_STATUS_PROTO_PACKAGE}.${GRPC_SERVICE}`;

/**
 * Names the health service answers for: '' is the whole server, as the gRPC health
 * checking protocol specifies (grpc/doc/health-checking.md).
 */
export const HEALTH_SERVICE_NAMES: readonly string[] = ['', ORDER_STATUS_SERVICE_FQN];

/**
 * What lets a stock client find its way around the gRPC port: the standard health
 * service (grpc.health.v1.Health, for load balancers and `grpc_health_probe`) and server
 * reflection (grpc.reflection.v1 and v1alpha, for `grpcurl list` / `describe`), both on
 * the same grpc-js server as OrderStatusService.
 *
 * Health starts NOT_SERVING and turns SERVING once Nest has added the service's
 * handlers, and goes back to NOT_SERVING when the server shuts down, so `Watch`ers
 * see the service leave before its connections do.
 */
export class GrpcDiscovery {
  private readonly health = new HealthImplementation(
    Object.fromEntries(HEALTH_SERVICE_NAMES.map((name) => [name, 'NOT_SERVING'])),
  );

  /** Adds health and reflection to `server` (Nest's `onLoadPackageDefinition` hook). */
  register(pkg: PackageDefinition, server: Pick<Server, 'addService'>): void {
    this.health.addToServer(server);
    // The health proto is added to what reflection describes so `grpcurl list` shows it.
    const healthPkg = loadSync(HEALTH_PROTO_PATH, { keepCase: true });
    new ReflectionService({ ...healthPkg, ...pkg }).addToServer(server);
  }

  markServing(): void {
    for (const name of HEALTH_SERVICE_NAMES) this.health.setStatus(name, 'SERVING');
  }

  markNotServing(): void {
    for (const name of HEALTH_SERVICE_NAMES) this.health.setStatus(name, 'NOT_SERVING');
  }
}
