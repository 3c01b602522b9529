/**
 * Table dumps in UniChem's formats (docs/loading.md): source.tsv.gz, structure.tsv.gz and reference.tsv.gz,
 * so that `npm run load -- dump <folder>` of the output rebuilds the same service elsewhere.
 */
import { join } from 'node:path';
import type { SourceDocument } from '../engine/documents';
import type { Engine } from '../engine/client';
import { compoundsByUci } from '../engine/compounds';
import { TextWriter, toBinary } from './files';
import type { Progress } from './progress';
import { structureGroups, type Snapshot, type StructureGroup } from './snapshot';

/**
 * UniChem's source table columns, in its order, then SRC_RELEASE_DATE and IDS_ARE_NAMES (not in
 * UniChem's table, but part of a chemxref source; the loader reads them back). Columns chemxref does
 * not keep are empty.
 */
export const sourceColumns = [
  'SRC_ID',
  'NAME',
  'DESCRIPTION',
  'CURRENT_RELEASE_U',
  'CREATED',
  'LAST_UPDATED',
  'USERSTAMP',
  'NUMBER_OR_DATE',
  'NAME_LONG',
  'SRC_DETAILS',
  'SRC_URL',
  'BASE_ID_URL',
  'BASE_ID_URL_AVAILABLE',
  'AUX_REQUIRED',
  'AUX_FOR_URL',
  'AUX_DESCRIPTION',
  'PRIVATE',
  'NAME_LABEL',
  'SRC_CLASS',
  'KEYS_ONLY',
  'UPDATE_MIN',
  'UPDATE_OPT',
  'UPDATE_MAX',
  'UPDATE_J',
  'UPDATE_COMMENTS',
  'SYNONYMS',
  'SRC_RELEASE_DATE',
  'IDS_ARE_NAMES',
] as const;

/** A tab-separated field: tabs and line breaks inside free text become spaces. */
function field(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? '1' : '0';
  return toBinary(String(value).replace(/[\t\r\n]+/g, ' '));
}

const months = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

/**
 * A date as the source table gives it, so that the loader reads back the very same value: UniChem's
 * Oracle form (22-NOV-2026 00:00:00) for a date kept to the second, which is what the loader makes
 * of that form, and ISO 8601 with milliseconds (as kept) otherwise.
 */
export function sourceTableDate(value: string | null): string | null {
  if (value === null) return null;
  const whole = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}:\d{2}:\d{2})Z$/.exec(value);
  if (!whole) return value;
  return `${whole[3]}-${months[Number(whole[2]) - 1]}-${whole[1]} ${whole[4]}`;
}

/** One source as a row of the source table. */
export function sourceRow(source: SourceDocument): string {
  const values: Record<(typeof sourceColumns)[number], string | number | boolean | null> = {
    SRC_ID: source.sourceID,
    NAME: source.name,
    DESCRIPTION: source.description,
    CURRENT_RELEASE_U: source.srcReleaseNumber,
    CREATED: sourceTableDate(source.created),
    LAST_UPDATED: sourceTableDate(source.lastUpdated),
    USERSTAMP: null,
    NUMBER_OR_DATE: null,
    NAME_LONG: source.nameLong,
    SRC_DETAILS: source.srcDetails,
    SRC_URL: source.srcUrl,
    BASE_ID_URL: source.baseIdUrl,
    BASE_ID_URL_AVAILABLE: source.baseIdUrlAvailable,
    AUX_REQUIRED: null,
    AUX_FOR_URL: source.auxForUrl,
    AUX_DESCRIPTION: null,
    PRIVATE: source.private,
    NAME_LABEL: source.nameLabel,
    SRC_CLASS: null,
    KEYS_ONLY: null,
    UPDATE_MIN: null,
    UPDATE_OPT: null,
    UPDATE_MAX: null,
    UPDATE_J: null,
    UPDATE_COMMENTS: source.updateComments,
    SYNONYMS: null,
    SRC_RELEASE_DATE: sourceTableDate(source.srcReleaseDate),
    IDS_ARE_NAMES: source.idsAreNames ?? false,
  };
  return `${sourceColumns.map((column) => field(values[column])).join('\t')}\n`;
}

/** Writes source.tsv.gz; returns its row count. */
export async function writeSourceTable(sources: SourceDocument[], folder: string): Promise<number> {
  const writer = new TextWriter(join(folder, 'source.tsv.gz'), { gzip: true });
  await writer.write(`${sourceColumns.join('\t')}\n`);
  for (const source of sources) await writer.write(sourceRow(source));
  await writer.end();
  return sources.length;
}

export interface AssignmentTablesCounts {
  structures: number;
  references: number;
  currentReferences: number;
  obsoleteReferences: number;
  /** UCIs assigned in a release whose structure is not in the compounds index (should be none). */
  missingStructures: number;
}

const structureBatch = 5_000;

/**
 * Writes structure.tsv.gz (every structure with at least one assignment, current or obsolete, by
 * UCI) and reference.tsv.gz (every assignment, by UCI, source, compound id) in one walk of the
 * snapshot; the InChIs are read from the engine a batch of UCIs at a time.
 */
export async function writeAssignmentTables(
  engine: Engine,
  snapshot: Snapshot,
  sourceIds: number[],
  folder: string,
  progress: Progress,
): Promise<AssignmentTablesCounts> {
  const counts: AssignmentTablesCounts = {
    structures: 0,
    references: 0,
    currentReferences: 0,
    obsoleteReferences: 0,
    missingStructures: 0,
  };
  const structures = new TextWriter(join(folder, 'structure.tsv.gz'), { gzip: true });
  const references = new TextWriter(join(folder, 'reference.tsv.gz'), { gzip: true });
  await structures.write('UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\n');
  // The header really is misspelt upstream; UniChem's readers expect it so. AUX_SRC, after UniChem's
  // four columns, carries the sources' auxiliary data, so that a dump loaded again keeps it.
  await references.write('UCI\tSRC_ID\tSRC_COMPOUND_ID\tASSIGMENT\tAUX_SRC\n');
  const total = [...snapshot.releases.values()].reduce((sum, release) => sum + release.rows, 0);
  progress.begin('write structure and reference tables', total);

  const flush = async (groups: StructureGroup[]): Promise<void> => {
    const found = await compoundsByUci(
      engine,
      groups.map((group) => group.uci),
      ['uci', 'standardInchi', 'standardInchiKey'],
    );
    let structureText = '';
    let referenceText = '';
    let rows = 0;
    for (const group of groups) {
      const structure = found.get(group.uci);
      if (structure) {
        structureText += `${group.uci}\t${toBinary(structure.standardInchi)}\t${structure.standardInchiKey}\n`;
        counts.structures += 1;
      } else {
        counts.missingStructures += 1;
      }
      for (const member of group.members) {
        for (let i = 0; i < member.ids.length; i += 1) {
          referenceText += `${group.uci}\t${member.sourceId}\t${member.ids[i]}\t${member.assignments[i]}\t${member.aux[i]}\n`;
          if (member.assignments[i] === 1) counts.currentReferences += 1;
          else counts.obsoleteReferences += 1;
          rows += 1;
        }
      }
    }
    counts.references += rows;
    // write() answers a promise only when its stream asks to wait for a drain.
    await Promise.all(
      [structures.write(structureText), references.write(referenceText)].filter((wait) => wait !== undefined),
    );
    progress.tick(rows);
  };

  try {
    let batch: StructureGroup[] = [];
    for await (const group of structureGroups(snapshot, sourceIds)) {
      batch.push(group);
      if (batch.length >= structureBatch) {
        await flush(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await flush(batch);
    await structures.end();
    await references.end();
  } catch (error) {
    structures.destroy();
    references.destroy();
    throw error;
  }
  return counts;
}
