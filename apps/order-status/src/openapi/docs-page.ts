import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';

/** Where the API documentation is served. */
export const DOCS_PATH = '/docs';
export const OPENAPI_JSON_PATH = `${DOCS_PATH}/openapi.json`;
const ASSETS_PATH = `${DOCS_PATH}/assets/`;
const INIT_SCRIPT_PATH = `${DOCS_PATH}/swagger-init.js`;

/**
 * The only files of swagger-ui-dist the page loads. The rest of that folder is not served:
 * its index.html and swagger-initializer.js load the Petstore example from the internet.
 */
const SWAGGER_UI_FILES: ReadonlySet<string> = new Set([
  '/swagger-ui-bundle.js',
  '/swagger-ui.css',
  '/favicon-32x32.png',
]);

/**
 * The page: files only, no inline script or style, so the docs CSP (security-headers.ts)
 * needs neither 'unsafe-inline' nor a hash that would change with every edit.
 */
const DOCS_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Order-status gateway API</title>
    <link rel="icon" type="image/png" href="${ASSETS_PATH}favicon-32x32.png" />
    <link rel="stylesheet" href="${ASSETS_PATH}swagger-ui.css" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${ASSETS_PATH}swagger-ui-bundle.js"></script>
    <script src="${INIT_SCRIPT_PATH}"></script>
  </body>
</html>
`;

/**
 * Starts Swagger UI on this origin's document. `validatorUrl: null`: by default the UI
 * sends the document to validator.swagger.io, a third party. `queryConfigEnabled: false`:
 * the UI takes no `?url=`/`?configUrl=` from the address bar, which is how older releases
 * could be made to render a hostile document on this origin.
 */
const INIT_SCRIPT = `'use strict';
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_JSON_PATH)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  queryConfigEnabled: false,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/**
 * The swagger-ui-dist folder @nestjs/swagger depends on (resolved through it, so the UI
 * is always the release that package was tested with, and no second copy is declared).
 */
export function swaggerUiDistDir(): string {
  // createRequire, not require.resolve: webpack would resolve the latter at build time.
  const here = createRequire(__filename);
  const fromSwagger = createRequire(here.resolve('@nestjs/swagger/package.json'));
  return dirname(fromSwagger.resolve('swagger-ui-dist/package.json'));
}

/**
 * Serves `/docs` (Swagger UI, bundled from node_modules: nothing is fetched from a CDN)
 * and `/docs/openapi.json`. The document is built on the first request, not at start-up:
 * most instances are never asked for it.
 */
export function serveApiDocs(app: NestFastifyApplication, build: () => OpenAPIObject): void {
  let json: string | undefined;
  const fastify = app.getHttpAdapter().getInstance();
  for (const path of [DOCS_PATH, `${DOCS_PATH}/`]) {
    fastify.get(path, (_req, reply) => {
      void reply
        .header('cache-control', 'no-cache')
        .type('text/html; charset=utf-8')
        .send(DOCS_HTML);
    });
  }
  fastify.get(INIT_SCRIPT_PATH, (_req, reply) => {
    void reply
      .header('cache-control', 'no-cache')
      .type('text/javascript; charset=utf-8')
      .send(INIT_SCRIPT);
  });
  fastify.get(OPENAPI_JSON_PATH, (_req, reply) => {
    json ??= JSON.stringify(build());
    void reply.header('cache-control', 'no-cache').type('application/json').send(json);
  });
  app.useStaticAssets({
    root: swaggerUiDistDir(),
    prefix: ASSETS_PATH,
    decorateReply: false,
    index: false,
    allowedPath: (pathName) => SWAGGER_UI_FILES.has(pathName),
    // Versioned with the package: revalidate, never serve a stale bundle.
    cacheControl: true,
    maxAge: 0,
    etag: true,
  });
}
