/** The v1 handlers, by operationId of the OpenAPI document. Each calls one domain function. */
import type { Request, RequestHandler, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { inchiKeyCase, type CompoundQuery, type LookupContext } from '../../domain/lookup';
import { changesAsJson, changesAsNdjson } from '../../domain/changes';
import {
  findCompounds,
  getSource,
  inchiOfUci,
  listSources,
  searchConnectivity,
  sourceChangeSpan,
  sourceLoadList,
} from './responses';
import { searchSimilar, searchSubstructure } from './similarity';
import { log } from '../../log';
import { currentRequest } from '../../request-context';
import { clusterReport } from '../../engine/health';
import { engineReady } from '../../engine/lookups';
import { DepictionFailed, type Depictor } from '../../toolkits/depiction';
import { isStructureType, structureText } from '../../domain/structures';
import { HttpError } from '../errors';

/**
 * The query of a validated v1 body, as the domain reads it: `compound` trimmed (docs/api.md; a molfile
 * at its end only), an InChIKey in upper case, a UCI sent
 * as a JSON number made its digits, and `sourceID` dropped unless `type` is `sourceID` (clients
 * send `""`, `0` or `null` there with every other type; UniChem ignores it).
 */
export function compoundQuery<T extends { type: CompoundQuery['type']; compound: string | number; sourceID?: unknown }>(
  body: T,
): Omit<T, 'compound' | 'sourceID'> & CompoundQuery {
  const { sourceID, compound, ...rest } = body;
  // A molfile keeps its leading lines: they are its header.
  const trimmed = isStructureType(body.type) ? structureText(body.type, String(compound)) : String(compound).trim();
  // A key in lower or mixed case is answered, and echoed, as the upper-case key it stands for.
  const text = body.type === 'inchikey' ? inchiKeyCase(trimmed) : trimmed;
  const query = { ...rest, compound: text } as Omit<T, 'compound' | 'sourceID'> & CompoundQuery;
  if (body.type === 'sourceID') query.sourceID = sourceID as number;
  return query;
}

/**
 * The whole number a route's last path segment names, as sent: the validator reads `0x1`, `1e0` or
 * ` 1` as numbers too (and leaves its reading in req.params); only decimal digits are one here.
 */
function decimalParameter(req: Request, name: string, fromEnd = 0): number {
  // As it is in the URL: a percent-encoded digit is not one either.
  const segments = req.path.replace(/\/$/, '').split('/');
  const text = segments[segments.length - 1 - fromEnd] ?? '';
  if (!/^[0-9]+$/.test(text))
    throw new HttpError(
      400,
      `"${name}" is ${JSON.stringify(text)}: it must be a whole number written in decimal digits`,
    );
  return Number(text);
}

/**
 * Sends text chunks as they come. The first chunk is read before the status is sent, so that a
 * failure there is still an error answer; a failure after it cuts the answer short (the connection
 * is closed), never a complete-looking wrong one.
 */
async function streamText(req: Request, res: Response, type: string, chunks: AsyncGenerator<string>): Promise<void> {
  const first = await chunks.next();
  res.type(type);
  try {
    await pipeline(async function* () {
      if (!first.done) yield first.value;
      yield* chunks;
    }, res);
  } catch (error) {
    if (!res.destroyed || res.writableFinished) throw error;
    log.error('a streamed answer failed after its first byte', {
      path: req.originalUrl,
      requestId: currentRequest()?.id,
      error: (error as Error)?.stack ?? String(error),
    });
  } finally {
    await chunks.return(undefined);
  }
}

/**
 * A similarity or substructure answer; one that searched says, in a header too, how many stored
 * structures it could not search (they have no fingerprint).
 */
function sendSearchAnswer(res: Response, body: object): void {
  const { unsearchable } = body as { unsearchable?: number };
  if (unsearchable !== undefined) res.set('X-Unsearchable-Structures', String(unsearchable));
  res.json(body);
}

export function v1Handlers(context: LookupContext, depictor: Depictor): Record<string, RequestHandler> {
  return {
    postCompounds: async (req, res) => {
      res.json(await findCompounds(context, compoundQuery(req.body)));
    },
    postConnectivity: async (req, res) => {
      res.json(await searchConnectivity(context, compoundQuery(req.body)));
    },
    postSimilarity: async (req, res) => {
      sendSearchAnswer(res, await searchSimilar(context, compoundQuery(req.body)));
    },
    postSubstructure: async (req, res) => {
      sendSearchAnswer(res, await searchSubstructure(context, req.body));
    },
    getSources: async (_req, res) => {
      res.json(await listSources(context));
    },
    getSource: async (req, res) => {
      res.json(await getSource(context, decimalParameter(req, 'sourceID')));
    },
    getSourceLoads: async (req, res) => {
      res.json(await sourceLoadList(context, decimalParameter(req, 'sourceID', 1)));
    },
    getSourceChanges: async (req, res) => {
      const span = await sourceChangeSpan(context, decimalParameter(req, 'sourceID', 1), String(req.query.since));
      const ndjson = req.accepts(['application/json', 'application/x-ndjson']) === 'application/x-ndjson';
      await streamText(
        req,
        res,
        ndjson ? 'application/x-ndjson' : 'application/json',
        ndjson ? changesAsNdjson(context.engine, span) : changesAsJson(context.engine, span),
      );
    },
    getImage: async (req, res) => {
      const inchi = await inchiOfUci(context, decimalParameter(req, 'uci'));
      try {
        res
          .type('image/svg+xml')
          .set('Cache-Control', 'public, max-age=86400')
          .send(await depictor.svg(inchi));
      } catch (error) {
        if (error instanceof DepictionFailed) throw new HttpError(422, error.message);
        throw error;
      }
    },
    getHealth: async (_req, res) => {
      // Always 200 while the process is up: the engine's state is reported, not a reason to restart the API.
      const engine = await clusterReport(context.engine).catch(() => undefined);
      // Degraded: a shard copy is missing, or a disk is past the high watermark (new shards are not
      // placed there; past the flood stage no write is accepted, so no load can succeed).
      const diskFull = engine?.disk.nodes.some((node) => node.past);
      // A restore in progress: the data answers 503 until it ends (npm run restore).
      const restore = context.engine.restore?.current;
      const status = !engine
        ? 'engine unreachable'
        : restore
          ? 'restoring'
          : engine.status === 'green' && !diskFull
            ? 'ok'
            : 'degraded';
      res.json({
        status,
        ...(restore ? { restore: { backup: restore.snapshot, started: restore.started } } : {}),
        ...(engine ? { engine } : {}),
      });
    },
    getReady: async (_req, res) => {
      const state = await engineReady(context.engine);
      if (!state.ready) res.set('Retry-After', '1');
      res
        .status(state.ready ? 200 : 503)
        .json(state.ready ? { status: 'ready' } : { status: 'not ready', reason: state.reason });
    },
  };
}
