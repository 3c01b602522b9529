// A lookup by source compound id takes two round trips to the engine: the id's assignments in its
// source (which give its structures' UCIs and keys), then every assignment of those structures and
// the structures themselves. This measures the alternative the data model allows: one small
// document per current (source, compound id), `_id` "<sourceId>/<compoundId>", holding the UCIs
// and keys of its structures, which the engine joins itself (a `terms` lookup) inside one
// `_msearch`: one round trip. It builds that index from the `bench-api` set (the reload cost: the
// documents a load would write besides its assignments, and their disk), checks that both ways
// find the same assignments and structures for 500 sampled ids, then compares them straight
// against the engine as `bench:api` measures its ceiling: full speed (16 loops, two-way-one-way-
// one-way-two-way) and at half the two-trip peak (an open loop). Everything it builds is deleted.
//
//   npm run bench:sourceid          # needs bench-api-* (loads it as `npm run bench:api` does)
import type { estypes } from '@elastic/elasticsearch';
import { readConfig, type Config } from '../src/config';
import { Engine } from '../src/engine/client';
import { ceilingLookups, driveEngine, ensureLoaded, paceEngine, prefix, samples } from './api';
import { engineCpuSeconds } from './load';
import type { Measure } from './load-generator';

const seconds = Number(process.env.BENCH_API_SECONDS || 10);
const idsIndex = `${prefix}-ids-by-source`;
const out = (text: string): boolean => process.stdout.write(`${text}\n`);
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface Id { sourceId: number; compoundId: string }
interface AssignmentHit { uci: number; sourceId: number; compoundId: string; standardInchiKey: string }
const idOf = (id: Id): string => `${id.sourceId}/${id.compoundId}`;

/** Builds one document per current (source, compound id) from the assignments; resolves with the seconds taken and the documents written. */
async function buildIds(engine: Engine): Promise<{ seconds: number; documents: number; engineCpu: number }> {
  await engine.client.indices.delete({ index: idsIndex }, { ignore: [404] });
  await engine.client.indices.create({
    index: idsIndex,
    settings: { index: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1' } },
    // Only the engine's own lookup reads them, from _source: nothing indexed, no doc values.
    mappings: { dynamic: 'strict', properties: { ucis: { type: 'long', index: false, doc_values: false }, standardInchiKeys: { type: 'keyword', index: false, doc_values: false } } },
  });
  const cpu = await engineCpuSeconds(engine);
  const started = process.hrtime.bigint();
  async function* documents(): AsyncGenerator<{ id: string; ucis: number[]; standardInchiKeys: string[] }> {
    const { id: pit } = await engine.client.openPointInTime({ index: engine.names.assignments, keep_alive: '2m' });
    let after: unknown[] | undefined;
    let current: { id: string; ucis: number[]; standardInchiKeys: string[] } | undefined;
    try {
      for (;;) {
        const result = await engine.client.search<AssignmentHit>({
          size: 10_000, pit: { id: pit, keep_alive: '2m' }, query: { term: { assignment: 1 } }, _source: ['uci', 'sourceId', 'compoundId', 'standardInchiKey'],
          sort: [{ sourceId: 'asc' }, { compoundId: 'asc' }, { uci: 'asc' }], track_total_hits: false, ...(after ? { search_after: after as never } : {}),
        });
        const hits = result.hits.hits;
        for (const hit of hits) {
          const x = hit._source!;
          const id = idOf(x);
          if (current?.id !== id) {
            if (current) yield current;
            current = { id, ucis: [], standardInchiKeys: [] };
          }
          current.ucis.push(x.uci);
          if (!current.standardInchiKeys.includes(x.standardInchiKey)) current.standardInchiKeys.push(x.standardInchiKey);
        }
        if (hits.length < 10_000) break;
        after = hits[hits.length - 1].sort;
      }
      if (current) yield current;
    } finally {
      await engine.client.closePointInTime({ id: pit }).catch(() => undefined);
    }
  }
  const stats = await engine.client.helpers.bulk<{ id: string; ucis: number[]; standardInchiKeys: string[] }>({
    datasource: documents(), concurrency: 3, flushBytes: 1_000_000, refreshOnCompletion: false,
    onDocument: (doc) => [{ index: { _index: idsIndex, _id: doc.id } }, { ucis: doc.ucis, standardInchiKeys: doc.standardInchiKeys }] as never,
  });
  await engine.client.indices.refresh({ index: idsIndex });
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, documents: stats.successful, engineCpu: (await engineCpuSeconds(engine)) - cpu };
}

/** The lookup in one round trip: the engine reads the id's document and searches with its UCIs and keys. */
function oneTrip(engine: Engine) {
  const { client, names } = engine;
  const assignmentSort: Record<string, 'asc'>[] = [{ uci: 'asc' }, { sourceId: 'asc' }, { compoundId: 'asc' }];
  return async (id: Id): Promise<{ assignments: AssignmentHit[]; keys: string[] }> => {
    const lookup = (path: string): object => ({ index: idsIndex, id: idOf(id), path });
    const { responses } = await client.msearch<AssignmentHit>({
      searches: [
        { index: names.assignments }, { size: 100, track_total_hits: false, query: { bool: { filter: [{ terms: { uci: lookup('ucis') } }, { term: { assignment: 1 } }] } }, sort: assignmentSort },
        { index: names.compounds }, { size: 100, track_total_hits: false, query: { terms: { standardInchiKey: lookup('standardInchiKeys') } }, _source: { excludes: ['loadId'] } },
      ] as never,
    });
    for (const response of responses) if ('error' in response) throw new Error(JSON.stringify(response.error));
    const [assignments, structures] = responses as estypes.SearchResponse<AssignmentHit>[];
    let hits = assignments.hits.hits;
    const all = hits.map((hit) => hit._source!);
    for (let size = 100; hits.length === size; size = 5_000) {
      const more = await client.search<AssignmentHit>({ index: names.assignments, size: 5_000, track_total_hits: false, query: { bool: { filter: [{ terms: { uci: lookup('ucis') } }, { term: { assignment: 1 } }] } } as never, sort: assignmentSort, search_after: hits[hits.length - 1].sort });
      hits = more.hits.hits;
      all.push(...hits.map((hit) => hit._source!));
    }
    return { assignments: all, keys: structures.hits.hits.map((hit) => hit._id!).sort() };
  };
}

/** The two round trips, returning what they found (as `ceilingLookups` sends them, which returns nothing). */
function twoTrips(engine: Engine) {
  const { client, names } = engine;
  return async (id: Id): Promise<{ assignments: AssignmentHit[]; keys: string[] }> => {
    const own = await client.search<AssignmentHit>({ index: names.assignmentsOf(id.sourceId), size: 100, query: { bool: { filter: [{ term: { compoundId: id.compoundId } }, { term: { sourceId: id.sourceId } }, { term: { assignment: 1 } }] } } });
    const hits = own.hits.hits.map((hit) => hit._source!);
    if (hits.length === 0) return { assignments: [], keys: [] };
    const [assignments, structures] = await Promise.all([
      client.search<AssignmentHit>({ index: names.assignments, size: 10_000, query: { bool: { filter: [{ terms: { uci: [...new Set(hits.map((x) => x.uci))] } }, { term: { assignment: 1 } }] } }, sort: [{ uci: 'asc' }, { sourceId: 'asc' }, { compoundId: 'asc' }] }),
      client.search({ index: names.compounds, size: 100, query: { ids: { values: [...new Set(hits.map((x) => x.standardInchiKey))] } }, _source: false }),
    ]);
    return { assignments: assignments.hits.hits.map((hit) => hit._source!), keys: structures.hits.hits.map((hit) => hit._id!).sort() };
  };
}

async function main(): Promise<void> {
  const config: Config = { ...readConfig(), ES_INDEX_PREFIX: prefix };
  const engine = new Engine(config);
  try {
    await ensureLoaded(engine, config);
    const { ids } = await samples();
    const built = await buildIds(engine);
    await engine.client.indices.forcemerge({ index: idsIndex, max_num_segments: 1 }, { requestTimeout: 600_000 });
    const sizes = await engine.client.cat.indices({ index: `${idsIndex},${engine.names.assignments}`, bytes: 'b', format: 'json' }) as unknown as Record<string, string>[];
    const bytesOf = (row: Record<string, string> | undefined): number => Number(row?.['pri.store.size'] ?? NaN);
    const idsBytes = bytesOf(sizes.find((row) => row.index === idsIndex));
    const assignmentRows = sizes.filter((row) => row.index !== idsIndex);
    const assignmentBytes = assignmentRows.reduce((sum, row) => sum + bytesOf(row), 0);
    const assignmentDocs = assignmentRows.reduce((sum, row) => sum + Number(row['docs.count']), 0);
    out(`built ${idsIndex}: ${fmt(built.documents)} documents (one per current source compound id) in ${fmt(built.seconds, 1)} s (${fmt(built.documents / built.seconds)} documents/s, engine CPU ${fmt(built.engineCpu, 1)} s, the scan of the assignments included)`);
    out(`disk, force-merged: ${fmt(idsBytes)} bytes, ${fmt(idsBytes / built.documents)} bytes per document; the assignments: ${fmt(assignmentBytes)} bytes for ${fmt(assignmentDocs)} (${fmt(assignmentBytes / assignmentDocs)} per assignment, not force-merged): +${fmt((100 * idsBytes) / assignmentBytes)} %`);

    const one = oneTrip(engine);
    const two = twoTrips(engine);
    let checked = 0;
    for (const id of ids.slice(0, 500)) {
      const [a, b] = [await one(id), await two(id)];
      if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${idOf(id)}: one round trip found ${JSON.stringify(a).slice(0, 300)}, two found ${JSON.stringify(b).slice(0, 300)}`);
      checked += 1;
    }
    out(`the same assignments and structures both ways for ${checked} sampled ids`);

    const ceiling = ceilingLookups(engine);
    const runs: Record<'two' | 'one', Measure[]> = { two: [], one: [] };
    const lookups = { two: ceiling.compoundsBySourceId, one: async (id: Id) => one(id) };
    const measured = async (which: 'two' | 'one', run: () => Promise<Measure>): Promise<Measure> => {
      const cpu = await engineCpuSeconds(engine);
      const measure = await run();
      return { ...measure, cpuMs: { engine: ((await engineCpuSeconds(engine)) - cpu) * 1000 / Math.max(1, measure.requests), api: NaN, client: NaN } };
    };
    await driveEngine(lookups.two, ids, 5);
    await driveEngine(lookups.one, ids, 5);
    for (const which of ['two', 'one', 'one', 'two'] as const) {
      const measure = await measured(which, () => driveEngine(lookups[which], ids, seconds));
      runs[which].push(measure);
      out(`${which === 'two' ? 'two round trips' : 'one round trip'}, 16 loops: ${fmt(measure.rps)} lookups/s, p50 ${fmt(measure.p50, 1)} / p99 ${fmt(measure.p99, 1)} ms, engine CPU ${fmt(measure.cpuMs!.engine, 2)} ms a lookup`);
    }
    const mean = (list: Measure[], key: 'rps' | 'p50' | 'p99'): number => list.reduce((sum, m) => sum + m[key], 0) / list.length;
    const rate = Math.round(mean(runs.two, 'rps') / 2);
    const half: Record<'two' | 'one', Measure[]> = { two: [], one: [] };
    for (const which of ['two', 'one', 'one', 'two'] as const) {
      const measure = await measured(which, () => paceEngine(lookups[which], ids, seconds, rate));
      half[which].push(measure);
      out(`${which === 'two' ? 'two round trips' : 'one round trip'} at ${fmt(rate)}/s: p50 ${fmt(measure.p50, 1)} / p99 ${fmt(measure.p99, 1)} ms, engine CPU ${fmt(measure.cpuMs!.engine, 2)} ms a lookup`);
    }
    out('');
    out('| lookup by source compound id | lookups/s, 16 loops | p50 / p99 ms | at half the two-trip peak: p50 / p99 ms | engine CPU ms a lookup |');
    out('|---|---|---|---|---|');
    for (const which of ['two', 'one'] as const) {
      const cpu = [...runs[which], ...half[which]].reduce((sum, m) => sum + m.cpuMs!.engine, 0) / 4;
      out(`| ${which === 'two' ? 'two round trips (as served)' : 'one round trip (terms lookup)'} | ${fmt(mean(runs[which], 'rps'))} | ${fmt(mean(runs[which], 'p50'), 1)} / ${fmt(mean(runs[which], 'p99'), 1)} | ${fmt(mean(half[which], 'p50'), 1)} / ${fmt(mean(half[which], 'p99'), 1)} | ${fmt(cpu, 2)} |`);
    }
    out(`one / two: ${fmt(mean(runs.one, 'rps') / mean(runs.two, 'rps'), 2)}× the lookups/s; at ${fmt(rate)}/s p50 ${fmt(mean(half.one, 'p50') / mean(half.two, 'p50'), 2)}×, p99 ${fmt(mean(half.one, 'p99') / mean(half.two, 'p99'), 2)}× (means of two runs each)`);
  } finally {
    await engine.client.indices.delete({ index: idsIndex }, { ignore: [404] }).catch(() => undefined);
    await engine.close();
  }
}

main().catch((error) => {
  process.stderr.write(`bench:sourceid failed: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
