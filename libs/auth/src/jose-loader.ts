import type * as JoseModule from 'jose' with { 'resolution-mode': 'import' };

export type Jose = typeof JoseModule;
export type JWTVerifyGetKey = JoseModule.JWTVerifyGetKey;
export type JoseJwk = JoseModule.JWK;
export type JWTPayload = JoseModule.JWTPayload;

let loading: Promise<Jose> | undefined;

/**
 * jose 6 is published as ESM only, and this project compiles to CommonJS (`module:
 * node16`), where TypeScript refuses a static `import` of an ES module. A dynamic import
 * is allowed, loads it once, and works under Node (require(esm) since 20.19, webpack),
 * tsx and Jest (which compiles jose to CommonJS, see jest.config.js).
 */
export function loadJose(): Promise<Jose> {
  return (loading ??= import('jose'));
}
