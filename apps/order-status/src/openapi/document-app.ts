import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from '../app.module';
import { loadConfig } from '../config/app-config';
import { buildOpenApiDocument } from './openapi-document';

/**
 * The environment the committed docs/openapi.json is built with: the defaults, so the
 * document does not depend on the shell that runs the export (every route mounted,
 * default cookie name).
 */
const DOCUMENT_ENV = { LOG_LEVEL: 'silent', SIMULATOR_ENABLED: 'false' } as const;

/**
 * Builds the OpenAPI document from the application module without listening or starting
 * anything: the module graph is created (controllers need instances for the scanner),
 * the document read, and the application closed again.
 */
export async function exportOpenApiDocument(): Promise<OpenAPIObject> {
  const config = loadConfig(DOCUMENT_ENV);
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ config }),
    new FastifyAdapter(),
    { logger: false, abortOnError: false },
  );
  try {
    return buildOpenApiDocument(app, config);
  } finally {
    await app.close();
  }
}

/** The document as it is committed: two-space JSON with a final newline. */
export function serializeOpenApiDocument(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
