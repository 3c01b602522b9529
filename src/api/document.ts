/** The OpenAPI document (src/api/openapi.yaml): the source of truth for routes, validation and the docs page. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';

let cached: OpenAPIV3.DocumentV3 | undefined;

/** The parsed document (read once per process; callers must not mutate it). */
export function openApiDocument(): OpenAPIV3.DocumentV3 {
  cached ??= parse(readFileSync(join(__dirname, 'openapi.yaml'), 'utf8')) as OpenAPIV3.DocumentV3;
  return cached;
}

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  servers: string[];
}

/** Every operation of the document with its HTTP method, path (in Express syntax) and server base paths. */
export function operations(document = openApiDocument()): Operation[] {
  const found: Operation[] = [];
  const defaults = (document.servers ?? [{ url: '/' }]).map((s) => s.url);
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!item) continue;
    const servers = item.servers ? item.servers.map((s) => s.url) : defaults;
    for (const method of ['get', 'post', 'put', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (!operation?.operationId) continue;
      found.push({ method, path: path.replace(/\{([^}]+)\}/g, ':$1'), operationId: operation.operationId, servers });
    }
  }
  return found;
}
