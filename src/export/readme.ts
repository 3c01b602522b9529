/** README.txt of an export: what it holds, which source releases it reflects, and its row counts. */
import { textTable } from '../cli';
import type { LoadRecord, SourceDocument } from '../engine/documents';
import type { SourceRelease } from './snapshot';

export interface ExportedFile {
  path: string;
  rows: number;
  note?: string;
}

export interface ReadmeInput {
  command: 'mappings' | 'dump';
  written: Date;
  indexPrefix: string;
  sources: SourceDocument[];
  releases: SourceRelease[];
  /** Load records, most recent first (the load history). */
  loads: LoadRecord[];
  files: ExportedFile[];
  notes: string[];
}

/** The load that wrote a release index, from the load history (most recent first). */
export function loadOfIndex(loads: LoadRecord[], index: string): LoadRecord | undefined {
  return loads.find((load) => load.status === 'done' && (load.index ?? '').split(',').includes(index));
}

/** When a release index was created: its name ends with the creation time in milliseconds. */
export function releaseCreated(index: string): string | null {
  const match = /-([0-9]{10,})$/.exec(index);
  return match ? new Date(Number(match[1])).toISOString() : null;
}

/** The text of README.txt. */
export function readmeText(input: ReadmeInput): string {
  const byId = new Map(input.sources.map((source) => [source.sourceID, source]));
  const what =
    input.command === 'mappings'
      ? [
          'Whole-source mapping files, as UniChem publishes them: wholeSourceMapping/src_id{N}/src{N}src{M}.txt.gz',
          'holds one row per (compound id in source N, compound id in source M) currently assigned to the',
          "same structure, under the header From src:'N'<TAB>To src:'M'. Current assignments only; a pair",
          'that shares no structure has a file with the header only. Rows are sorted by the first column,',
          'then the second, comparing the UTF-8 bytes of the ids as unsigned bytes (the order of',
          '`LC_ALL=C sort`); the same two ids sharing several structures give one row.',
        ]
      : [
          "Table dump in the formats of UniChem's dumps, loadable by `npm run load -- dump <this folder>`:",
          "- source.tsv.gz: UniChem's source table columns, plus SRC_RELEASE_DATE and IDS_ARE_NAMES (1 for",
          '  a source whose compound ids are names); dates as UniChem writes them (31-DEC-2010 09:00:01),',
          '  or ISO 8601 for dates kept to the millisecond;',
          '- structure.tsv.gz: UCI, STANDARDINCHI, STANDARDINCHIKEY of every structure with at least one',
          '  assignment, current or obsolete, by UCI;',
          '- reference.tsv.gz: UCI, SRC_ID, SRC_COMPOUND_ID, ASSIGMENT (misspelt as upstream; 1 current,',
          '  0 obsolete), by UCI, then source, then compound id (UTF-8 byte order).',
        ];
  const releaseRows = [['src_id', 'name', 'release', 'rows', 'release index', 'index created', 'load', 'loaded from']];
  for (const release of input.releases) {
    const source = byId.get(release.sourceId);
    const load = release.index ? loadOfIndex(input.loads, release.index) : undefined;
    releaseRows.push([
      String(release.sourceId),
      source?.name ?? '?',
      source?.srcReleaseNumber ?? '-',
      String(release.rows),
      release.index ?? '(no release loaded)',
      release.index ? (releaseCreated(release.index) ?? '-') : '-',
      load ? `${load.loadId} (${load.command}, ended ${load.ended ?? '?'})` : '-',
      load?.file ?? '-',
    ]);
  }
  const fileRows = [
    ['file', 'rows'],
    ...input.files.map((file) => [file.path, String(file.rows) + (file.note ? `  ${file.note}` : '')]),
  ];
  const totalRows = input.files.reduce((sum, file) => sum + file.rows, 0);
  return [
    `chemxref export: ${input.command}`,
    `Written: ${input.written.toISOString()} (index prefix ${input.indexPrefix})`,
    '',
    ...what,
    '',
    'Source releases this export reflects (each source is read wholly from one release, resolved at the',
    'start; a source reloaded during the export is read wholly from its new release instead). "rows" is',
    `the number of ` +
      `${input.command === 'mappings' ? 'current assignments' : 'assignments (current and obsolete)'} read.`,
    '',
    textTable(releaseRows),
    '',
    `Files (rows exclude the header line; ${totalRows} rows in all):`,
    '',
    textTable(fileRows),
    ...(input.notes.length > 0 ? ['', 'Notes:', ...input.notes.map((note) => `- ${note}`)] : []),
    '',
  ].join('\n');
}
