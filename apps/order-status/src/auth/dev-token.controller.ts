import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorCode, GatewayError } from '@app/contracts';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { ApiErrors, ApiPublic } from '../openapi/api-decorators';
import { DevTokenBody } from '../openapi/app-schemas';
import { Public } from './auth.decorators';
import { demoToken } from './demo-banner';

/**
 * `GET /v1/dev/token`: the demo page fetches its token here, so opening `/` after
 * `npm start` just works. Only in demo mode, where the signing secret is the public demo
 * secret and anyone could mint the same token anyway; otherwise 404 (tokens then come
 * from an identity provider).
 */
@Controller('v1/dev')
@ApiTags('credentials')
export class DevTokenController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Public()
  @Get('token')
  @ApiOperation({
    operationId: 'getDevToken',
    summary: 'A demo token (demo mode only)',
    description:
      'Only while the service runs with the public demo secret (no key material configured, not production); 404 otherwise.',
  })
  @ApiOkResponse({ type: DevTokenBody })
  @ApiErrors(ErrorCode.NotFound)
  @ApiPublic()
  async token(): Promise<{ token: string }> {
    const token = await demoToken(this.config.auth);
    if (token === undefined) throw new GatewayError(ErrorCode.NotFound, 'not in demo mode');
    return { token };
  }
}
