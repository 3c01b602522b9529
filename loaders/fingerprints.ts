/**
 * `npm run load -- fingerprints`: computes the fingerprints of every structure that has none yet, or
 * has one an older chemxref computed otherwise (`moleculeDerivation`), in UCI order from the last one
 * done, in worker threads on every core. Fingerprints are derived data (docs/similarity.md): this
 * command computes them, as does a load that adds structures at its end (unless --no-fingerprints),
 * and it goes on where it stopped when it is run again. A structure whose InChI cannot be rebuilt
 * gets no fingerprint and is a rejected row (its reason says why). A run that wrote at least as many
 * fingerprints as the index held before merges it into one segment (below).
 */
import {
  lastFingerprintedUci,
  olderFingerprints,
  writeFingerprints,
  type FingerprintDocument,
} from '../src/engine/fingerprints';
import { mappingOf } from '../src/engine/client';
import { mergeIntoOneSegment } from '../src/engine/schema';
import { MoleculeToolkit, moleculeDerivation as derivation } from '../src/toolkits/molecules';
import { ByteCounter } from './read';
import { Reject, type LoadRun } from './run';

/** Structures each worker gets at a time; a page of the scan holds one such batch per worker. */
const perWorker = 250;

/**
 * How often the fingerprints index is refreshed during a run: what it writes becomes searchable within
 * this time (and all of it at its end), and the engine makes and merges fewer small segments than at
 * the mapping's 1 s (the demo's 28,437 structures: 10-11 s of the engine's CPU, against 13).
 */
const backfillRefresh = '30s';
const mappingRefresh = (mappingOf('fingerprints').settings.index as { refresh_interval: string }).refresh_interval;

async function refreshEvery(run: LoadRun, interval: string): Promise<void> {
  await run.engine.client.indices.putSettings({
    index: run.engine.names.fingerprints,
    settings: { index: { refresh_interval: interval } },
  });
}

interface Structure {
  uci: number;
  standardInchi: string;
  standardInchiKey: string;
}

/** The next page of structures after UCI `after`, in UCI order. */
async function pageAfter(run: LoadRun, after: number, size: number): Promise<Structure[]> {
  const result = await run.engine.client.search<Structure>({
    index: run.engine.names.compounds,
    query: { range: { uci: { gt: after } } },
    sort: [{ uci: 'asc' }],
    size,
    _source: ['uci', 'standardInchi', 'standardInchiKey'],
    track_total_hits: false,
  });
  return result.hits.hits.map((hit) => hit._source!);
}

async function structuresAfter(run: LoadRun, after: number): Promise<number> {
  const result = await run.engine.client.count({
    index: run.engine.names.compounds,
    query: { range: { uci: { gt: after } } },
  });
  return result.count;
}

export async function loadFingerprints(run: LoadRun, toolkit = MoleculeToolkit.perCore()): Promise<void> {
  const engine = run.engine;
  try {
    await engine.client.indices.refresh({ index: [engine.names.compounds, engine.names.fingerprints] });
    // Older fingerprints are made again in UCI order, so this derivation's last UCI is where to go on.
    let after = await lastFingerprintedUci(engine, derivation);
    const held = (await engine.client.count({ index: engine.names.fingerprints })).count;
    const counter = new ByteCounter(await structuresAfter(run, after));
    run.track(counter);
    run.details.resumedAfterUci = after;
    run.details.structuresWithoutFingerprints = counter.totalBytes;
    const older = await olderFingerprints(engine, derivation);
    if (older > 0) run.details.olderFingerprints = older;
    if (run.dryRun) return;
    await refreshEvery(run, backfillRefresh);
    const size = perWorker * toolkit.size;
    // A read or write that fails while another step is awaited is reported where it is awaited.
    const later = <T>(promise: Promise<T>): Promise<T> => (promise.catch(() => undefined), promise);
    let page = later(pageAfter(run, after, size));
    let written: Promise<void> = Promise.resolve();
    for (;;) {
      const structures = await page;
      if (structures.length === 0) break;
      after = structures[structures.length - 1].uci;
      // The next page is read, and the last one written, while this one is computed.
      page = later(pageAfter(run, after, size));
      const computed = await toolkit.fingerprints(structures.map((s) => s.standardInchi));
      const documents: FingerprintDocument[] = [];
      const rejected: number[] = [];
      computed.forEach((result, i) => {
        const { uci, standardInchi, standardInchiKey } = structures[i];
        run.rowsRead += 1;
        if ('error' in result) {
          run.reject({ line: uci, raw: `${uci}\t${standardInchi}` }, new Reject('no-fingerprint', result.error));
          rejected.push(uci);
          return;
        }
        documents.push({ uci, standardInchiKey, popcount: result.morgan.length, derivation, ...result });
      });
      await written;
      // A rejected structure loses the fingerprint an older chemxref may have given it.
      written = later(writeFingerprints(engine, documents, rejected));
      run.rowsLoaded += documents.length;
      counter.bytesRead += structures.length;
      await run.tick();
    }
    await written;
    await engine.client.indices.refresh({ index: engine.names.fingerprints });
    // A similarity search seeks each of its terms in every segment: on the 500k set, one segment
    // answered 2.7-3.3 times faster than the 21 a backfill leaves. After a smaller increment the
    // engine's merge policy keeps segments few, and `consolidate` merges them again.
    if (run.rowsLoaded > 0 && run.rowsLoaded >= held) {
      await mergeIntoOneSegment(engine, engine.names.fingerprints);
      run.details.mergedIntoOneSegment = true;
    }
  } finally {
    if (!run.dryRun) await refreshEvery(run, mappingRefresh).catch(() => undefined);
    await toolkit.close();
  }
}
