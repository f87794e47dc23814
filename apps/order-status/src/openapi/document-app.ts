import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from '../app.module';
import { loadConfig, type AppConfig } from '../config/app-config';
import { buildOpenApiDocument } from './openapi-document';

/**
 * The environment the committed docs/openapi.json is built with: the defaults, so the
 * document does not depend on the shell that runs the export (every route mounted,
 * default cookie name).
 */
const DOCUMENT_ENV = { LOG_LEVEL: 'silent', SIMULATOR_ENABLED: 'false' } as const;

/**
 * Creates the application module without listening or starting anything (controllers
 * need instances for the scanner), hands it to `use`, and closes it again.
 */
export async function withDocumentApp<T>(
  use: (app: NestFastifyApplication, config: AppConfig) => T | Promise<T>,
): Promise<T> {
  const config = loadConfig(DOCUMENT_ENV);
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ config }),
    new FastifyAdapter(),
    { logger: false, abortOnError: false },
  );
  try {
    return await use(app, config);
  } finally {
    await app.close();
  }
}

/** The OpenAPI document of the REST routes, as docs/openapi.json holds it. */
export function exportOpenApiDocument(): Promise<OpenAPIObject> {
  return withDocumentApp(buildOpenApiDocument);
}

/** The document as it is committed: two-space JSON with a final newline. */
export function serializeOpenApiDocument(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
