/**
 * `npm run export -- changes <sourceId> [folder] --since <loadId>`: the net change of a source's
 * current assignments since one of its loads, as the API's NDJSON form
 * (`GET /api/v1/sources/{sourceID}/changes?since=` with `Accept: application/x-ndjson`), one line a
 * change, written to a file named after the source and the load; moved into place once whole.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { changeLine, changeSpan, changesOfSpan } from '../domain/changes';
import { NoLongerAvailable, UnknownResource } from '../domain/errors';
import type { Engine } from '../engine/client';
import { sourceById } from '../engine/sources';
import { ExportRequestError } from './run';

export interface ChangesExportOptions {
  sourceId: number;
  since: string;
  folder: string;
}

/** The file a changes export writes. */
export function changesFileName(sourceId: number, since: string): string {
  return `changes-src${sourceId}-since-${since.replace(/[^A-Za-z0-9_-]/g, '_')}.ndjson`;
}

/** Writes the changes file; resolves with the summary (file, span, count of each kind). */
export async function exportChanges(engine: Engine, options: ChangesExportOptions): Promise<Record<string, unknown>> {
  const started = Date.now();
  if (!(await sourceById(engine, options.sourceId)))
    throw new ExportRequestError(`source ${options.sourceId} is not known`);
  const span = await changeSpan(engine, options.sourceId, options.since).catch((error) => {
    if (error instanceof UnknownResource || error instanceof NoLongerAvailable)
      throw new ExportRequestError(error.message);
    throw error;
  });
  const folder = resolve(options.folder);
  await mkdir(folder, { recursive: true });
  const file = join(folder, changesFileName(options.sourceId, options.since));
  const partial = `${file}.partial`;
  const counts = { added: 0, dropped: 0, moved: 0 };
  const out = createWriteStream(partial);
  try {
    for await (const change of changesOfSpan(engine, span)) {
      counts[change.change] += 1;
      if (!out.write(changeLine(change))) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    await rename(partial, file);
  } catch (error) {
    out.destroy();
    await rm(partial, { force: true });
    throw error;
  }
  return {
    command: 'changes',
    sourceID: options.sourceId,
    status: 'done',
    file,
    format: 'ndjson',
    since: span.since,
    until: span.until,
    ...counts,
    seconds: Math.round((Date.now() - started) / 10) / 100,
  };
}
