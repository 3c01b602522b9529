/**
 * One export run: read a consistent snapshot of the releases, write the files into a staging folder
 * inside the target folder, then move them into place (README.txt last), so a failed export leaves
 * the folder as it was and a finished one is never half written.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import type { SourceDocument } from '../engine/documents';
import type { Engine } from '../engine/client';
import { loadHistory } from '../engine/loads';
import { allSources } from '../engine/sources';
import { sourcePairs, writeMappingFiles } from './mappings';
import { writeAssignmentTables, writeSourceTable } from './dump';
import { Progress } from './progress';
import { readmeText, type ExportedFile } from './readme';
import { takeSnapshot, type SnapshotOptions } from './snapshot';

/** A request that cannot be exported (unknown source, ...): exit code 2 in the CLI. */
export class ExportRequestError extends Error {}

export type ExportCommand = 'mappings' | 'dump';

export interface ExportOptions {
  folder: string;
  /** Progress line on stderr; on by default when stderr is a terminal. */
  progress?: boolean;
  /** Mapping files from this source only. */
  from?: number;
  /** Mapping files to this source only. */
  to?: number;
  /** Rows per engine request while reading the releases. */
  pageSize?: number;
  /** Test hook, called after each page read (see SnapshotOptions). */
  afterPage?: SnapshotOptions['afterPage'];
}

export interface ExportSummary {
  command: ExportCommand;
  folder: string;
  status: 'done';
  files: number;
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  releases: Record<string, string | null>;
  restarts: number;
  skippedIds: number;
  [key: string]: unknown;
}

function knownSource(sources: SourceDocument[], sourceId: number | undefined, what: string): void {
  if (sourceId !== undefined && !sources.some((source) => source.sourceID === sourceId)) {
    throw new ExportRequestError(`${what} source ${sourceId} is not known`);
  }
}

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath ?? (entry as { path?: string }).path!, entry.name)));
}

/** Runs one export; resolves with its summary. */
export async function runExport(
  engine: Engine,
  command: ExportCommand,
  options: ExportOptions,
): Promise<ExportSummary> {
  const started = Date.now();
  const folder = resolve(options.folder);
  const progress = new Progress(options.progress ?? Boolean(process.stderr.isTTY));
  const sources = await allSources(engine);
  if (command === 'mappings') {
    knownSource(sources, options.from, '--from');
    knownSource(sources, options.to, '--to');
  }
  const staging = join(folder, `.chemxref-export-${Date.now()}-${randomBytes(3).toString('hex')}`);
  const work = join(staging, 'work');
  const out = join(staging, 'out');
  await mkdir(work, { recursive: true });
  await mkdir(out, { recursive: true });
  try {
    const allIds = sources.map((source) => source.sourceID);
    const pairs = command === 'mappings' ? sourcePairs(allIds, { from: options.from, to: options.to }) : [];
    const read =
      command === 'mappings'
        ? [...new Set(pairs.flatMap((pair) => [pair.from, pair.to]))].sort((a, b) => a - b)
        : allIds;
    const snapshot = await takeSnapshot(engine, read, {
      currentOnly: command === 'mappings',
      folder: work,
      progress,
      pageSize: options.pageSize,
      afterPage: options.afterPage,
    });
    const readSeconds = (Date.now() - started) / 1000;
    const releases = [...snapshot.releases.values()];
    const skippedIds = releases.reduce((sum, release) => sum + release.skippedIds, 0);
    const files: ExportedFile[] = [];
    const notes: string[] = [];
    const extra: Record<string, unknown> = {};
    if (command === 'mappings') {
      const written = await writeMappingFiles(snapshot, pairs, out, work, progress);
      for (const file of written) files.push({ path: file.path, rows: file.rows });
      extra.pairs = pairs.length;
    } else {
      files.push({ path: 'source.tsv.gz', rows: await writeSourceTable(sources, out) });
      const counts = await writeAssignmentTables(engine, snapshot, read, out, progress);
      files.push({ path: 'structure.tsv.gz', rows: counts.structures });
      files.push({
        path: 'reference.tsv.gz',
        rows: counts.references,
        note: `(${counts.currentReferences} current, ${counts.obsoleteReferences} obsolete)`,
      });
      Object.assign(extra, counts);
      if (counts.missingStructures > 0) {
        notes.push(
          `${counts.missingStructures} UCI(s) are assigned in a release but ` +
            `missing from the structures index; their references are in ` +
            `reference.tsv.gz, their structures are not.`,
        );
      }
      notes.push(
        "reference.tsv.gz has a fifth column, AUX_SRC, after UniChem's four: " +
          "the sources' auxiliary data of each assignment (empty when none). Not " +
          "carried by UniChem's formats, so not in this dump: the retired flag " +
          'of retired sources.',
      );
    }
    if (skippedIds > 0)
      notes.push(
        `${skippedIds} assignment(s) left out: their compound ids hold a tab, ` +
          `a line break or NUL, which a tab-separated file cannot carry.`,
      );
    const restarts = releases.reduce((sum, release) => sum + release.restarts, 0);
    if (restarts > 0)
      notes.push(
        `A source was reloaded during the export: ${releases
          .filter((r) => r.restarts > 0)
          .map((r) => `source ${r.sourceId}`)
          .join(', ')} was read again from its new release.`,
      );

    const loads = await loadHistory(engine, 10_000);
    const readme = readmeText({
      command,
      written: new Date(),
      indexPrefix: engine.names.prefix,
      sources,
      releases,
      loads,
      files,
      notes,
    });
    await writeFile(join(out, 'README.txt'), readme);

    // Move into place: the data files first, README.txt last.
    const produced = (await filesUnder(out)).filter((path) => path !== 'README.txt');
    for (const path of [...produced, 'README.txt']) {
      await mkdir(dirname(join(folder, path)), { recursive: true });
      await rename(join(out, path), join(folder, path));
    }
    progress.done();
    const rows = files.reduce((sum, file) => sum + file.rows, 0);
    const seconds = (Date.now() - started) / 1000;
    const round = (value: number): number => Math.round(value * 100) / 100;
    return {
      command,
      folder,
      status: 'done',
      files: files.length,
      rows,
      seconds: round(seconds),
      rowsPerSecond: Math.round(rows / Math.max(seconds, 0.001)),
      readSeconds: round(readSeconds),
      assignmentsRead: releases.reduce((sum, release) => sum + release.rows, 0),
      peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
      releases: Object.fromEntries(releases.map((release) => [String(release.sourceId), release.index])),
      restarts,
      skippedIds,
      ...extra,
    };
  } catch (error) {
    progress.done();
    throw error;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
