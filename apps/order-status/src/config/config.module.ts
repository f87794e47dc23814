import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from './app-config';

/** DI token for the validated configuration. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** Makes the configuration read at start-up injectable everywhere as `@Inject(APP_CONFIG)`. */
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}
