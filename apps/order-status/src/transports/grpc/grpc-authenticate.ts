import type { Metadata } from '@grpc/grpc-js';
import type { Principal } from '@app/auth';
import type { AuthService } from '../../auth/auth.service';

/** The call's `authorization` metadata (`Bearer <token>`), verified (UNAUTHENTICATED otherwise). */
export function authenticateCall(auth: AuthService, metadata: Metadata): Promise<Principal> {
  const values = metadata.get('authorization').filter((v): v is string => typeof v === 'string');
  return auth.authenticateHeader(values.length > 0 ? values : undefined, 'grpc');
}
