/**
 * Queries of both API families over a dump's structures and assignments, and the API's answers to
 * them as text (status, Content-Type and body, byte for byte): what tests compare before and after
 * a change that must not change an answer (a cluster layout, a backup restored).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/** The rows of a gzipped TSV table of a dump, by lower-cased column name. */
export function dumpTable(file: string): Record<string, string>[] {
  const [header, ...lines] = gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter(Boolean);
  const columns = header.split('\t').map((c) => c.toLowerCase());
  return lines.map((line) => Object.fromEntries(line.split('\t').map((value, i) => [columns[i], value])));
}

export interface Query {
  path: string;
  body?: unknown;
}

/**
 * Every `every`th structure by key, every `10 × every`th assignment by source id, every `5 × every`th
 * structure's connectivity, a few legacy routes, every `20 × every`th structure's similar structures
 * and a few substructures (with `structureSearches`: the index needs fingerprints); with `loads`, the answers that
 * tell when the loads ran too (a source's load records, the legacy release), the same only for the same loads.
 */
export function apiQueries(dump: string, { every = 1, structureSearches = true, loads = false } = {}): Query[] {
  const structures = dumpTable(join(dump, 'structure.tsv.gz'));
  const references = dumpTable(join(dump, 'reference.tsv.gz'));
  const each = <T>(rows: T[], step: number): T[] => rows.filter((_row, i) => i % (step * every) === 0);
  return [
    ...each(structures, 1).map((s) => ({
      path: '/api/v1/compounds',
      body: { type: 'inchikey', compound: s.standardinchikey },
    })),
    ...each(references, 10).map((r) => ({
      path: '/api/v1/compounds',
      body: { type: 'sourceID', compound: r.src_compound_id, sourceID: Number(r.src_id) },
    })),
    ...each(structures, 5).map((s) => ({
      path: '/api/v1/connectivity',
      body: { type: 'inchikey', compound: s.standardinchikey, searchComponents: true },
    })),
    ...each(structures, 25).map((s) => ({ path: `/rest/inchikey_all/${s.standardinchikey}` })),
    ...each(references, 25).flatMap((r) => [
      { path: `/rest/src_compound_id/${encodeURIComponent(r.src_compound_id)}/${r.src_id}` },
      { path: `/rest/src_compound_id_all_obsolete/${encodeURIComponent(r.src_compound_id)}/${r.src_id}` },
      { path: `/rest/cpd_search/${encodeURIComponent(r.src_compound_id)}/${r.src_id}/0/0/0` },
    ]),
    ...(structureSearches
      ? [
          ...each(structures, 20).map((s) => ({
            path: '/api/v1/similarity',
            body: { type: 'inchikey', compound: s.standardinchikey, threshold: 0.4, limit: 1000 },
          })),
          ...['c1ccc2ncccc2c1', 'C1CCNCC1', '[#6]S(=O)(=O)[NX3]'].map((compound) => ({
            path: '/api/v1/substructure',
            body: { type: 'smarts', compound, limit: 50 },
          })),
        ]
      : []),
    { path: '/rest/mapping/1/22' },
    { path: '/rest/src_ids/' },
    { path: '/rest/sources/1' },
    { path: '/api/v1/sources/' },
    { path: '/api/v1/sources/101' },
    ...(loads ? [{ path: '/api/v1/sources/101/loads' }, { path: '/rest/release' }] : []),
  ];
}

/** One answer as text: status, Content-Type and body. */
export async function answerOf(url: string, query: Query): Promise<string> {
  const response =
    query.body === undefined
      ? await fetch(`${url}${query.path}`)
      : await fetch(`${url}${query.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(query.body),
        });
  return `${response.status} ${response.headers.get('content-type')} ${await response.text()}`;
}

/** The answers of the API at `url` to every query, sixteen at a time. */
export async function answersOf(url: string, all: Query[]): Promise<string[]> {
  const found: string[] = [];
  for (let start = 0; start < all.length; start += 16)
    found.push(...(await Promise.all(all.slice(start, start + 16).map((query) => answerOf(url, query)))));
  return found;
}

/** The queries whose answers differ, with the new answer's start, for an assertion's message. */
export function differing(all: Query[], expected: string[], got: string[]): string[] {
  return got
    .map((answer, i) => (answer === expected[i] ? undefined : `${JSON.stringify(all[i])}: ${answer.slice(0, 200)}`))
    .filter((line): line is string => line !== undefined);
}
