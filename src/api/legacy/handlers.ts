/**
 * The legacy handlers, by operationId of the OpenAPI document (paths under /rest/, served under
 * /legacy/rest/ and /rest/). Each reads its path segments, calls one legacy function and writes the
 * answer in the format the request asked for.
 */
import { pipeline } from 'node:stream/promises';
import type { Request, RequestHandler } from 'express';
import { blankCompound } from '../errors';
import { log } from '../../log';
import { currentRequest } from '../../request-context';
import { InvalidQuery } from '../../domain/errors';
import { inchiKeyCase, type LookupContext } from '../../domain/lookup';
import { compoundSearch, criterionNames, keySearch, parseCriteria } from './connectivity';
import { legacyFormat, legacyList, renderLegacy, type LegacyFormat, type LegacyValue } from './format';
import {
  auxiliaryDataOf,
  idsOfId,
  idsOfKey,
  inchiOfKey,
  mapOfOrphanId,
  mappingOf,
  releaseFigures,
  sourceDetails,
  sourceIds,
  sourcesOfOrphanId,
  structuresOfId,
  urlsOfId,
  verboseIdsOfKey,
} from './lookups';

/**
 * The format `req` asks for (JSONP by `?callback=`, XML by `Accept: text/xml`, else JSON); InvalidQuery for a bad
 * callback.
 */
export function formatOf(req: Request): LegacyFormat {
  const best = req.accepts(['application/json', 'text/xml', 'application/xml']);
  return legacyFormat(req.query?.callback, best === 'text/xml' || best === 'application/xml');
}

type Params = Record<string, string | undefined>;

function answer(produce: (params: Params) => Promise<LegacyValue>): RequestHandler {
  return async (req, res) => {
    const format = formatOf(req);
    const params = { ...req.params } as Params;
    // A compound (a key or an id) of only whitespace gets the 400 the v1 API gives, not a 404 for "   ".
    if ((params.key !== undefined && params.key.trim() === '') || (params.id !== undefined && params.id.trim() === ''))
      throw new InvalidQuery(blankCompound);
    // A key (or first block) in lower or mixed case is read, and answered, as its upper-case form.
    if (params.key !== undefined) params.key = inchiKeyCase(params.key);
    const { type, body } = renderLegacy(format, await produce(params));
    res.type(type).send(body);
  };
}

/**
 * A list answer of any length (a whole-source mapping), written as its pages come: a page is read
 * only once the client has taken the previous one (backpressure), and nothing more is read once the
 * client has gone (the abort signal stops the engine request in flight, and the pages' own cleanup
 * closes what they hold). The first page is read before anything is written, so a bad request or
 * an engine failure up to then gets its status and legacy error body; a failure after the first
 * byte cuts the connection, so the client sees a truncated answer rather than a wrong complete one.
 */
function streamed(produce: (params: Params, signal: AbortSignal) => AsyncGenerator<LegacyValue[]>): RequestHandler {
  return async (req, res) => {
    const format = formatOf(req);
    const gone = new AbortController();
    const abandoned = (): void => {
      if (!res.writableFinished) gone.abort();
    };
    res.once('close', abandoned);
    const pages = produce(req.params as Params, gone.signal);
    let first: IteratorResult<LegacyValue[]>;
    try {
      first = await pages.next();
    } catch (error) {
      res.off('close', abandoned);
      if (gone.signal.aborted) return;
      throw error;
    }
    const list = legacyList(format);
    res.type(list.type);
    if (req.method === 'HEAD') {
      await pages.return(undefined);
      res.end();
      return;
    }
    try {
      await pipeline(async function* () {
        yield list.open + (first.done ? '' : list.items(first.value));
        for await (const page of pages) {
          const text = list.items(page);
          if (text !== '') yield text;
        }
        yield list.close;
      }, res);
    } catch (error) {
      // pipeline has destroyed the response (and with it the connection); a client that left is no failure of ours.
      if (!gone.signal.aborted)
        log.error('a streamed legacy answer failed after its first byte', {
          path: req.originalUrl,
          requestId: currentRequest()?.id,
          error: (error as Error)?.stack ?? String(error),
        });
      gone.abort();
    } finally {
      res.off('close', abandoned);
      // Closes the points in time, should the pipeline have ended without finishing the pages.
      await pages.return(undefined);
    }
  };
}

/** Every prefix of the criteria list: key_search/{key}, key_search/{key}/{A}, ..., .../{H}. */
const criteriaSuffixes = criterionNames
  .map((_, i) => criterionNames.slice(0, i).join(''))
  .concat(criterionNames.join(''));

/** The legacy handlers by operationId. */
export function legacyHandlers(context: LookupContext): Record<string, RequestHandler> {
  const handlers: Record<string, RequestHandler> = {
    legacyInchikey: answer((p) => idsOfKey(context, p.key!, false)),
    legacyInchikeyAll: answer((p) => idsOfKey(context, p.key!, true)),
    legacyVerboseInchikey: answer((p) => verboseIdsOfKey(context, p.key!)),
    legacySrcCompoundId: answer((p) => idsOfId(context, p.id!, p.src!, p.to_src, 'current')),
    legacySrcCompoundIdAll: answer((p) => idsOfId(context, p.id!, p.src!, p.to_src, 'all')),
    legacySrcCompoundIdAllObsolete: answer((p) => idsOfId(context, p.id!, p.src!, p.to_src, 'obsolete')),
    legacyMapping: streamed((p, signal) => mappingOf(context, p.src!, p.to_src!, { signal })),
    legacyMappingAux: streamed((p, signal) => auxiliaryDataOf(context, p.src!, { signal })),
    legacySrcCompoundIdUrl: answer((p) => urlsOfId(context, p.id!, p.src!, p.to_src!)),
    legacyStructure: answer((p) => structuresOfId(context, p.id!, p.src!, false)),
    legacyStructureAll: answer((p) => structuresOfId(context, p.id!, p.src!, true)),
    legacyInchi: answer((p) => inchiOfKey(context, p.key!)),
    legacySrcIds: answer(() => sourceIds(context)),
    legacySource: answer((p) => sourceDetails(context, p.src!)),
    legacyRelease: answer(() => releaseFigures(context)),
    legacyOrphanIdSource: answer((p) => sourcesOfOrphanId(context, p.id!)),
    legacyOrphanIdMap: answer((p) => mapOfOrphanId(context, p.id!, p.to_src)),
  };
  // The same handler serves each form with and without `to_src`.
  for (const id of [
    'legacySrcCompoundId',
    'legacySrcCompoundIdAll',
    'legacySrcCompoundIdAllObsolete',
    'legacyOrphanIdMap',
  ])
    handlers[`${id}To`] = handlers[id];
  // ... and each number of trailing criteria.
  for (const suffix of criteriaSuffixes) {
    handlers[`legacyKeySearch${suffix}`] = answer((p) => keySearch(context, p.key!, parseCriteria(p)));
    handlers[`legacyCpdSearch${suffix}`] = answer((p) => compoundSearch(context, p.id!, p.src!, parseCriteria(p)));
  }
  return handlers;
}
