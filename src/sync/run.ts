/**
 * What `npm run sync` does with a folder: brings UniChem's three published tables into it, each
 * checked before any is moved into place, and remembers in `<folder>/.sync.json` what it fetched
 * (so that the next run asks only for what changed) and where the folder was last loaded.
 */
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckFailed, checkTable, parseChecksums, tableFiles, type Checks, type PublishedChecksum } from './checks';
import { discardPart, fetchFile, fetchSmallText, movePartInto, NetworkFailed, type Validators } from './download';

/** The state file of a synced folder. */
export const stateFile = '.sync.json';

export interface SyncState {
  /** The folder the files in place came from; another base URL fetches them again. */
  baseUrl: string;
  /** The validators of each file in place, as the server gave them when it was downloaded. */
  files: Record<string, Validators & { syncedAt: string }>;
  /** The engine and index prefix the files in place were last loaded into by `sync --load`. */
  loadedInto?: { esUrl: string; indexPrefix: string; at: string };
}

export interface FileReport {
  file: string;
  /** `refused`: a check failed; `failed`: the server or the network did. */
  action: 'downloaded' | 'resumed' | 'unchanged' | 'refused' | 'failed';
  /** Bytes received by this run. */
  bytes: number;
  /** The whole file's bytes, as the server gives it. */
  size?: number;
  checks?: Checks | string;
  error?: string;
}

export interface SyncResult {
  files: FileReport[];
  /** How many files were downloaded or resumed and moved into place. */
  changed: number;
  /** The checksum files the server publishes in the folder (none: an empty list). */
  checksums: string[];
  /** Why the run failed, one message a file; empty when every file is in place and checked. */
  failures: string[];
  state: SyncState;
}

/** Folder-wide checksum listings looked for, as `md5sum` / `sha256sum` write them. */
const checksumListings = ['md5sums.txt', 'MD5SUMS', 'checksums.txt'];

/**
 * The checksums published beside the tables: a folder-wide listing, or `<file>.md5` beside a file.
 * UniChem's table_dumps folder publishes none today; a listing added later is used without a change.
 */
export async function publishedChecksums(
  baseUrl: string,
): Promise<{ byFile: Map<string, PublishedChecksum>; from: string[] }> {
  const byFile = new Map<string, PublishedChecksum>();
  const from: string[] = [];
  for (const listing of checksumListings) {
    const text = await fetchSmallText(baseUrl, listing);
    const found = text === undefined ? new Map() : parseChecksums(text, listing);
    if (found.size === 0) continue;
    from.push(listing);
    for (const [file, checksum] of found) if (!byFile.has(file)) byFile.set(file, checksum);
  }
  for (const file of tableFiles) {
    if (byFile.has(file)) continue;
    const text = await fetchSmallText(baseUrl, `${file}.md5`);
    const hex = /^([0-9a-f]{32})(\s|$)/i.exec(text?.trim() ?? '')?.[1];
    if (!hex) continue;
    from.push(`${file}.md5`);
    byFile.set(file, { algorithm: 'md5', hex: hex.toLowerCase(), from: `${file}.md5` });
  }
  return { byFile, from };
}

async function readState(folder: string, baseUrl: string): Promise<SyncState> {
  const text = await readFile(join(folder, stateFile), 'utf8').catch(() => undefined);
  const state = text === undefined ? undefined : (JSON.parse(text) as SyncState);
  return state?.baseUrl === baseUrl ? state : { baseUrl, files: {} };
}

/** Writes the state under a temporary name first: a killed run leaves the previous state whole. */
async function writeState(folder: string, state: SyncState): Promise<void> {
  const path = join(folder, stateFile);
  await writeFile(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  await rename(`${path}.tmp`, path);
}

export interface SyncOptions {
  baseUrl: string;
  folder: string;
  /** Writes a progress line on stderr. */
  say: (line: string) => void;
  /** Whether a long download says how it is going every few seconds. */
  progress: boolean;
}

/**
 * Brings the three tables of the dump at `baseUrl` into `folder`. Each new or resumed file is
 * downloaded as `<file>.part` and checked (size, gzip, header, published checksum); only when every
 * file passed are they renamed into place, so the folder never holds a half file, nor a new table
 * beside an old one whose update failed. A file that fails a check is deleted (the next run
 * downloads it again); one whose transfer broke off is kept (the next run resumes it) and ends the
 * run. Never throws for a check or the network: the result lists the failures.
 */
export async function syncDump(options: SyncOptions): Promise<SyncResult> {
  const { baseUrl, folder, say } = options;
  await mkdir(folder, { recursive: true });
  const state = await readState(folder, baseUrl);
  const files: FileReport[] = [];
  const failures: string[] = [];
  let checksums: Awaited<ReturnType<typeof publishedChecksums>>;
  try {
    checksums = await publishedChecksums(baseUrl);
  } catch (error) {
    if (!(error instanceof NetworkFailed)) throw error;
    return { files, changed: 0, checksums: [], failures: [error.message], state };
  }
  say(
    checksums.from.length > 0
      ? `checksums published: ${checksums.from.join(', ')}`
      : `no checksum published under ${baseUrl}: the files are checked by size, gzip stream and header only`,
  );
  const checked: { file: string; part: string; validators: Validators }[] = [];
  for (const file of tableFiles) {
    const known = state.files[file];
    const inPlace = await stat(join(folder, file)).then(
      (s) => (known && s.size === known.size ? known : undefined),
      () => undefined,
    );
    let fetched;
    try {
      fetched = await fetchFile(baseUrl, folder, file, { inPlace, say, progress: options.progress });
    } catch (error) {
      if (!(error instanceof NetworkFailed)) throw error;
      files.push({ file, action: 'failed', bytes: 0, error: error.message });
      failures.push(error.message);
      break;
    }
    const { action, bytes, validators, part } = fetched;
    if (action === 'unchanged') {
      files.push({ file, action, bytes, size: known?.size, checks: 'unchanged since the last sync: not read again' });
      continue;
    }
    const checksum = checksums.byFile.get(file);
    say(
      `${file}: checking its size, its gzip stream to the end, its header${checksum ? ` and its ${checksum.algorithm}` : ''}`,
    );
    try {
      const checks = await checkTable(part!, file, validators.size, checksum);
      say(
        `${file}: ${action}, ${bytes} bytes received; size, gzip and header checks passed, checksum ${checks.checksum}`,
      );
      files.push({ file, action, bytes, size: validators.size, checks });
      checked.push({ file, part: part!, validators });
    } catch (error) {
      if (!(error instanceof CheckFailed)) throw error;
      await discardPart(part!);
      say(`${file}: refused, ${error.message}; deleted, the next run downloads it again`);
      files.push({ file, action: 'refused', bytes, size: validators.size, error: error.message });
      failures.push(error.message);
    }
  }
  if (failures.length > 0) return { files, changed: 0, checksums: checksums.from, failures, state };
  const syncedAt = new Date().toISOString();
  for (const { file, part, validators } of checked) {
    await movePartInto(part, join(folder, file));
    state.files[file] = { ...validators, syncedAt };
  }
  if (checked.length > 0) {
    // New files in place have not been loaded anywhere yet.
    delete state.loadedInto;
    await writeState(folder, state);
  }
  return { files, changed: checked.length, checksums: checksums.from, failures, state };
}

/** Whether the files in place were loaded into this engine and prefix since they last changed. */
export function loadedInto(state: SyncState, esUrl: string, indexPrefix: string): boolean {
  return state.loadedInto?.esUrl === esUrl && state.loadedInto.indexPrefix === indexPrefix;
}

/** Records that the files in place were loaded into this engine and prefix. */
export async function recordLoad(folder: string, state: SyncState, esUrl: string, indexPrefix: string): Promise<void> {
  await writeState(folder, { ...state, loadedInto: { esUrl, indexPrefix, at: new Date().toISOString() } });
}
