import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import { AUTH_POLICY, type AuthPolicy } from '../../apps/order-status/src/auth/auth.decorators';
import { API_PREFIX } from '../../apps/order-status/src/auth/http-auth.guard';
import { SecurityScheme } from '../../apps/order-status/src/openapi/api-decorators';
import { withDocumentApp } from '../../apps/order-status/src/openapi/document-app';
import { buildOpenApiDocument } from '../../apps/order-status/src/openapi/openapi-document';

/** One REST route as the controllers declare it. */
interface Route {
  readonly method: string;
  /** OpenAPI form: `/v1/orders/{orderId}`. */
  readonly path: string;
  readonly policy: AuthPolicy;
  /** The class `@Body()` is validated with, if the route takes a body. */
  readonly body?: Type;
}

interface Operation {
  readonly operationId?: string;
  readonly summary?: string;
  readonly tags?: string[];
  readonly security?: Record<string, string[]>[];
  readonly responses: Record<string, unknown>;
  readonly requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
}

interface Schema {
  readonly properties?: Record<string, unknown>;
  readonly required?: string[];
}

const join = (...parts: (string | undefined)[]) =>
  `/${parts
    .flatMap((p) => (p ?? '').split('/'))
    .filter((p) => p !== '')
    .join('/')}`;

/** What `@ApiExcludeController()` sets (@nestjs/swagger's DECORATORS, not exported). */
const API_EXCLUDE_CONTROLLER = 'swagger/apiExcludeController';

/** Every HTTP route of every controller in the application, from Nest's own metadata. */
function controllerRoutes(modules: ModulesContainer, excluded: string[] = []): Route[] {
  const scanner = new MetadataScanner();
  const routes: Route[] = [];
  for (const module of modules.values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type;
      if (Reflect.getMetadata(API_EXCLUDE_CONTROLLER, controller) !== undefined) {
        excluded.push(controller.name);
        continue;
      }
      const prototype = controller.prototype as Record<string, (...a: unknown[]) => unknown>;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        // gRPC and socket.io handlers carry no HTTP method.
        if (method === undefined || path === undefined) continue;
        const full = join(Reflect.getMetadata(PATH_METADATA, controller) as string, path);
        const policy =
          (Reflect.getMetadata(AUTH_POLICY, handler) as AuthPolicy | undefined) ??
          (Reflect.getMetadata(AUTH_POLICY, controller) as AuthPolicy | undefined) ??
          (`${full}/`.startsWith(API_PREFIX) ? 'bearer' : 'public');
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<
          string,
          { index: number }
        >;
        const bodyArg = Object.entries(args).find(
          ([key]) => Number(key.split(':')[0]) === Number(RouteParamtypes.BODY),
        );
        const paramTypes = (Reflect.getMetadata('design:paramtypes', prototype, name) ??
          []) as Type[];
        routes.push({
          method: RequestMethod[method].toLowerCase(),
          path: full.replace(/:(\w+)/g, '{$1}'),
          policy,
          ...(bodyArg !== undefined ? { body: paramTypes[bodyArg[1].index] } : {}),
        });
      }
    }
  }
  return routes;
}

/** Property names a DTO validates, and which of them are optional (`@IsOptional`). */
function validatedFields(dto: Type): { name: string; optional: boolean }[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const names = [...new Set(metadata.map((m) => m.propertyName))];
  return names
    .map((name) => ({
      name,
      optional: metadata.some((m) => m.propertyName === name && m.type === 'conditionalValidation'),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function schemaFields(schema: Schema): { name: string; optional: boolean }[] {
  const required = new Set(schema.required ?? []);
  return Object.keys(schema.properties ?? {})
    .map((name) => ({ name, optional: !required.has(name) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

const EXPECTED_SECURITY: Record<AuthPolicy, string[]> = {
  public: [],
  bearer: [SecurityScheme.Bearer],
  stream: [SecurityScheme.Bearer, SecurityScheme.StreamTicket, SecurityScheme.SessionCookie],
};

describe('OpenAPI document against the controllers', () => {
  let routes: Route[];
  let document: OpenAPIObject;
  const excluded: string[] = [];

  beforeAll(async () => {
    [routes, document] = await withDocumentApp((app, config) => [
      controllerRoutes(app.get(ModulesContainer), excluded),
      buildOpenApiDocument(app, config),
    ]);
  });

  it('leaves out no controller (a WebSocket route documents its HTTP answers too)', () => {
    expect(excluded).toEqual([]);
  });

  function operation(route: Route): Operation {
    const found = (document.paths[route.path] as Record<string, Operation> | undefined)?.[
      route.method
    ];
    if (found === undefined) throw new Error(`${route.method} ${route.path} is not documented`);
    return found;
  }

  it('documents every route, and nothing else', () => {
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${path}`),
    );
    expect(routes.length).toBeGreaterThan(10);
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('gives every operation an id, a summary, a declared tag, a success and its credentials', () => {
    const tags = new Set((document.tags ?? []).map((t) => t.name));
    const ids = new Set<string>();
    for (const route of routes) {
      const op = operation(route);
      const what = `${route.method} ${route.path}`;
      expect([what, typeof op.summary, op.summary?.length]).toEqual([
        what,
        'string',
        expect.any(Number),
      ]);
      expect([what, op.operationId !== undefined && !ids.has(op.operationId)]).toEqual([
        what,
        true,
      ]);
      ids.add(op.operationId ?? '');
      expect([what, op.tags?.length, op.tags?.every((t) => tags.has(t))]).toEqual([what, 1, true]);
      // 101 is the success of a WebSocket route (RFC 6455 section 4.2.2).
      expect([what, Object.keys(op.responses).some((s) => /^(?:2\d\d|101)$/.test(s))]).toEqual([
        what,
        true,
      ]);
      // The guard's policy for the route, alternatives in OpenAPI's form.
      const schemes = (op.security ?? []).flatMap((requirement) => Object.keys(requirement));
      expect([what, schemes.sort()]).toEqual([what, [...EXPECTED_SECURITY[route.policy]].sort()]);
    }
  });

  it('documents each request body with the fields its DTO validates, required unless @IsOptional', () => {
    const withBody = routes.filter((r) => r.body !== undefined);
    expect(withBody.length).toBeGreaterThan(0);
    for (const route of withBody) {
      const what = `${route.method} ${route.path}`;
      const ref = operation(route).requestBody?.content['application/json']?.schema.$ref ?? '';
      const schema = document.components?.schemas?.[ref.replace('#/components/schemas/', '')];
      expect([what, schema === undefined]).toEqual([what, false]);
      expect([what, schemaFields(schema as Schema)]).toEqual([
        what,
        validatedFields(route.body as Type),
      ]);
    }
  });
});
