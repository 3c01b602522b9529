/**
 * `npm run load -- sources <file>`: source metadata from UniChem's source table (TSV, CSV or a JSON
 * array; UniChem's snake_case columns or the v1 API's camelCase names).
 */
import type { SourceDocument } from '../src/engine/documents';
import { allSources, putSource } from '../src/engine/sources';
import { ByteCounter, FileFormatError, detectFormat, fileSize, readColumns, readRows, type Row } from './read';
import { rejectMalformed } from './reject';
import { Reject, type LoadRun } from './run';
import type { DryRunMemory } from './uci-bitset';

const months: Record<string, string> = {
  JAN: '01',
  FEB: '02',
  MAR: '03',
  APR: '04',
  MAY: '05',
  JUN: '06',
  JUL: '07',
  AUG: '08',
  SEP: '09',
  OCT: '10',
  NOV: '11',
  DEC: '12',
};

/** A date from UniChem's Oracle form (31-DEC-2010 09:00:01) or ISO 8601, as ISO 8601; null when empty. */
export function parseSourceDate(value: string | undefined): string | null {
  if (!value) return null;
  const oracle = /^(\d{1,2})-([A-Z]{3})-(\d{4})(?:\s+(\d{2}):(\d{2}):(\d{2}))?$/i.exec(value);
  if (oracle) {
    const month = months[oracle[2].toUpperCase()];
    if (!month) throw new Reject('bad-date', `"${value}" is not a date`);
    const [hh, mm, ss] = [oracle[4] ?? '00', oracle[5] ?? '00', oracle[6] ?? '00'];
    return `${oracle[3]}-${month}-${oracle[1].padStart(2, '0')}T${hh}:${mm}:${ss}Z`;
  }
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) throw new Reject('bad-date', `"${value}" is not a date`);
  return new Date(parsed).toISOString();
}

function pick(fields: Record<string, string>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = fields[name];
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}

function flag(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|t|y|yes)$/i.test(value);
}

/** The columns that mark a source whose compound ids are names (chemxref's own; UniChem's table has none). */
const namesColumns = ['ids_are_names', 'idsarenames'];

/**
 * A source document from one row; throws Reject for a row that cannot be a source. `idsAreNames` is
 * set only by a row that has the column (a table without it leaves a source's mark as it was).
 */
export function sourceFromRow(fields: Record<string, string>): Omit<SourceDocument, 'UCICount'> {
  const id = pick(fields, 'src_id', 'sourceid', 'source_id', 'id');
  if (!id || !/^[0-9]+$/.test(id) || Number(id) < 1)
    throw new Reject('bad-source-id', `src_id "${id ?? ''}" is not a positive integer`);
  const name = pick(fields, 'name', 'short_name', 'shortname');
  if (!name) throw new Reject('no-source-name', 'the source has no name');
  return {
    sourceID: Number(id),
    name: name.toLowerCase(),
    nameLabel: pick(fields, 'name_label', 'namelabel') ?? null,
    nameLong: pick(fields, 'name_long', 'namelong', 'longname') ?? null,
    description: pick(fields, 'description') ?? null,
    srcUrl: pick(fields, 'src_url', 'srcurl') ?? null,
    baseIdUrl: pick(fields, 'base_id_url', 'baseidurl') ?? null,
    baseIdUrlAvailable: flag(pick(fields, 'base_id_url_available', 'baseidurlavailable')),
    auxForUrl: flag(pick(fields, 'aux_for_url', 'auxforurl')),
    srcDetails: pick(fields, 'src_details', 'srcdetails') ?? null,
    srcReleaseNumber:
      pick(fields, 'src_release_number', 'srcreleasenumber', 'current_release_u', 'release_number') ?? null,
    srcReleaseDate: parseSourceDate(pick(fields, 'src_release_date', 'srcreleasedate', 'release_date')),
    created: parseSourceDate(pick(fields, 'created')),
    lastUpdated: parseSourceDate(pick(fields, 'last_updated', 'lastupdated')),
    updateComments: pick(fields, 'update_comments', 'updatecomments') ?? null,
    private: flag(pick(fields, 'private')),
    ...(namesColumns.some((column) => fields[column] !== undefined)
      ? { idsAreNames: flag(pick(fields, ...namesColumns)) }
      : {}),
  };
}

/** Loads source metadata; a source already known keeps its UCI count (it belongs to its assignments). */
export async function loadSources(run: LoadRun, file: string, dryRun?: DryRunMemory): Promise<void> {
  const format = await detectFormat(file);
  if (format === 'sdf' || format === 'jsonl')
    throw new FileFormatError(`${file}: a source table is TSV, CSV or a JSON array`);
  const columns = await readColumns(file, format);
  const hasId = ['src_id', 'sourceid', 'source_id', 'id'].some((c) => columns.includes(c));
  if (!hasId || !columns.includes('name')) {
    throw new FileFormatError(
      `${file}: a source table needs the columns src_id and name (found: ${columns.join(', ') || 'none'})`,
    );
  }
  const known = new Map(
    (run.dryRun ? await allSources(run.engine).catch(() => []) : await allSources(run.engine)).map((s) => [
      s.sourceID,
      s,
    ]),
  );
  const seen = new Map<number, number>();
  const names = new Map([...known.values()].map((s) => [s.name, s.sourceID]));
  const counter = new ByteCounter(fileSize(file));
  run.track(counter);
  for await (const row of readRows(file, format, counter) as AsyncIterable<Row>) {
    run.rowsRead += 1;
    try {
      rejectMalformed(row.fields);
      const source = sourceFromRow(row.fields);
      if (seen.has(source.sourceID))
        throw new Reject(
          'duplicate-source',
          `src_id ${source.sourceID} already given on line ${seen.get(source.sourceID)}`,
        );
      const owner = names.get(source.name);
      if (owner !== undefined && owner !== source.sourceID)
        throw new Reject('duplicate-source-name', `the name "${source.name}" already belongs to source ${owner}`);
      seen.set(source.sourceID, row.line);
      names.set(source.name, source.sourceID);
      const previous = known.get(source.sourceID);
      dryRun?.sourceIds.add(source.sourceID);
      // Kept only when true, so that a source index made before the field existed takes every other source.
      const { idsAreNames, ...metadata } = source;
      const marked = idsAreNames ?? previous?.idsAreNames;
      if (!run.dryRun)
        await putSource(run.engine, {
          ...metadata,
          UCICount: previous?.UCICount ?? 0,
          ...(previous?.retired ? { retired: true } : {}),
          ...(marked ? { idsAreNames: true } : {}),
        });
      run.rowsLoaded += 1;
    } catch (error) {
      if (!(error instanceof Reject)) throw error;
      run.reject(row, error);
    }
    await run.tick();
  }
}
