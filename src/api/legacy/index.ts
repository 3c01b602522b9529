/**
 * The legacy API (UniChem 1 REST, docs/legacy.md) under /legacy/rest/ and /rest/: handlers by operationId,
 * the answer to a legacy path no operation matches, and the legacy error shape.
 */
import type { Request, RequestHandler } from 'express';
import { openApiDocument } from '../document';
import { HttpError, isLegacyPath } from '../errors';
import { legacyFormat, renderLegacyErrorBody } from './format';
import { formatOf } from './handlers';

export { legacyHandlers } from './handlers';

/** The forms of each legacy method, from the OpenAPI document: `inchikey` → ["inchikey/{key}"]. */
function legacyForms(): Map<string, string[]> {
  const forms = new Map<string, string[]>();
  for (const path of Object.keys(openApiDocument().paths ?? {})) {
    if (!path.startsWith('/rest/')) continue;
    const form = path.slice('/rest/'.length).replace(/\/$/, '');
    const method = form.split('/')[0].toLowerCase();
    forms.set(method, [...(forms.get(method) ?? []), form]);
  }
  return forms;
}

/**
 * A legacy path that no operation matched: an unknown method or a wrong number of segments is a 400
 * (UniChem 1 answered so), never the 404 of an unknown path. Other paths pass through.
 */
export function unmatchedLegacyPath(): RequestHandler {
  const forms = legacyForms();
  const methods = [...forms.values()]
    .map((list) => list[0].split('/')[0])
    .sort()
    .join(', ');
  return (req, res, next) => {
    if (!isLegacyPath(req.path)) {
      next();
      return;
    }
    // HEAD reaches here as GET (src/app.ts).
    if (req.method !== 'GET') {
      res.set('Allow', 'GET, HEAD, OPTIONS');
      throw new HttpError(405, `the legacy API answers GET (and HEAD) only, not ${req.method}`);
    }
    const segments = req.path
      .replace(/^\/(legacy\/)?rest\/?/, '')
      .replace(/\/$/, '')
      .split('/');
    const [method, ...rest] = segments;
    if (!method) throw new HttpError(400, `no method given: the methods are ${methods}`);
    const known = forms.get(method.toLowerCase());
    if (!known) throw new HttpError(400, `"${method}" is not a method of this API: the methods are ${methods}`);
    throw new HttpError(
      400,
      `wrong number of segments for ${method} (${rest.length} after the method): its forms are ${known.join(', ')}`,
    );
  };
}

/** Renders an error in the legacy shape, in the format the request asked for (JSON when its callback is the fault). */
export function renderLegacyError(req: Request, _status: number, message: string): { type: string; body: string } {
  let format;
  try {
    format = formatOf(req);
  } catch {
    format = legacyFormat(undefined, false);
  }
  return renderLegacyErrorBody(format, message);
}
