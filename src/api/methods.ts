/**
 * HTTP methods (RFC 9110): a path the service answers tells which methods it takes. `OPTIONS` is
 * answered with `Allow`; a method the path does not take is a 405 with `Allow`, in the API family's
 * error shape; `HEAD` is answered wherever `GET` is. Also: repeated slashes in a path (from a base
 * URL with a trailing slash, `//api/v1/sources`) reach the route the single-slash path names.
 */
import type { RequestHandler } from 'express';
import { HttpError } from './errors';

export interface Route {
  pattern: RegExp;
  methods: Set<string>;
}

/**
 * A path of the document (`/rest/inchi/{key}`) under a server base path, as a pattern of the request paths it answers.
 */
function pathPattern(base: string, path: string): RegExp {
  const full = `${base.replace(/\/$/, '')}${path}`.replace(/\/$/, '') || '/';
  const source = full
    .split(/(\{[^}]+\})/)
    .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  // Express routes are case-insensitive and take an optional trailing slash: so are these.
  return new RegExp(`^${source === '/' ? '' : source}/?$`, 'i');
}

/**
 * The routes of `operations` (method, document path, server base paths) and of `pages` (GET-only paths outside the
 * document).
 */
export function routeTable(
  operations: { method: string; path: string; servers: string[] }[],
  pages: string[],
): Route[] {
  const byPattern = new Map<string, Route>();
  const add = (pattern: RegExp, method: string): void => {
    const route = byPattern.get(pattern.source) ?? { pattern, methods: new Set<string>() };
    route.methods.add(method.toUpperCase());
    byPattern.set(pattern.source, route);
  };
  for (const operation of operations) {
    const path = operation.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
    for (const server of operation.servers) add(pathPattern(server, path), operation.method);
  }
  for (const page of pages) add(pathPattern('/', page), 'GET');
  return [...byPattern.values()];
}

/** The methods a path answers, `Allow`'s value; undefined for a path no route answers. */
export function allowedMethods(routes: Route[], path: string): string | undefined {
  const methods = new Set<string>();
  for (const route of routes) if (route.pattern.test(path)) for (const method of route.methods) methods.add(method);
  if (methods.size === 0) return undefined;
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  return [...methods].sort().join(', ');
}

/** Collapses repeated slashes in the path (not in the query): `//rest//src_ids/` → `/rest/src_ids/`. */
export const collapseSlashes: RequestHandler = (req, _res, next) => {
  const query = req.url.indexOf('?');
  const path = query < 0 ? req.url : req.url.slice(0, query);
  if (path.includes('//')) req.url = path.replace(/\/{2,}/g, '/') + (query < 0 ? '' : req.url.slice(query));
  next();
};

/**
 * Sets `Allow` on OPTIONS (CORS then answers it), and answers a method a known path does not take with a 405 naming the
 * ones it does.
 */
export function methodGuard(routes: Route[]): RequestHandler {
  // Every route's pattern is tried against a path once, not on each request: a lookup's path is
  // always the same one. Paths holding ids vary without end, so the memory is emptied when full.
  const known = new Map<string, string | undefined>();
  const allowOf = (path: string): string | undefined => {
    if (known.has(path)) return known.get(path);
    if (known.size >= 10_000) known.clear();
    const allow = allowedMethods(routes, path);
    known.set(path, allow);
    return allow;
  };
  return (req, res, next) => {
    const allow = allowOf(req.path);
    if (allow === undefined) {
      next();
      return;
    }
    res.set('Allow', allow);
    if (req.method === 'OPTIONS' || allow.split(', ').includes(req.method)) {
      next();
      return;
    }
    next(new HttpError(405, `${req.method} is not a method of ${req.path}: it answers ${allow}`));
  };
}
