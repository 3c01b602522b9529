/**
 * UniChem's whole-source mapping files: `wholeSourceMapping/src_id{N}/src{N}src{M}.txt.gz`, one per
 * ordered pair of sources, rows (id in N, id in M) for every two ids currently assigned to one
 * structure, sorted by the first column then the second (UTF-8 byte order), without repeats.
 *
 * How, in constant memory for every pair at once: the snapshot is walked structure by structure
 * (UCI order); each structure's pairs are tagged with their file and fed to an external sort; the
 * sorted stream then arrives file by file, each file's rows already in order, so one gzip stream
 * is open at a time.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { TextWriter } from './files';
import type { Progress } from './progress';
import { structureGroups, type Snapshot } from './snapshot';
import { ExternalSorter } from './sort';

/** One mapping file: from source N to source M. */
export interface SourcePair {
  from: number;
  to: number;
}

/** The path of a pair's file, relative to the export folder. */
export function mappingFilePath(pair: SourcePair): string {
  return join('wholeSourceMapping', `src_id${pair.from}`, `src${pair.from}src${pair.to}.txt.gz`);
}

/** UniChem's header line of a pair's file. */
export function mappingHeader(pair: SourcePair): string {
  return `From src:'${pair.from}'\tTo src:'${pair.to}'\n`;
}

/** Every ordered pair of two different sources, optionally only from `from` and/or to `to`, by N then M. */
export function sourcePairs(sourceIds: number[], filter: { from?: number; to?: number } = {}): SourcePair[] {
  const sorted = [...new Set(sourceIds)].sort((a, b) => a - b);
  const pairs: SourcePair[] = [];
  for (const from of sorted) {
    if (filter.from !== undefined && from !== filter.from) continue;
    for (const to of sorted) {
      if (to === from || (filter.to !== undefined && to !== filter.to)) continue;
      pairs.push({ from, to });
    }
  }
  return pairs;
}

/**
 * Builds sort keys as flat strings. `a + b` makes a V8 cons string (two pointers to its parts, and
 * a third string once a comparison flattens it): three objects per key instead of one, which is
 * most of the sort buffer's memory. Copying the bytes through a scratch buffer gives one flat
 * string of exactly the key's length.
 */
class FlatKeys {
  private scratch = Buffer.allocUnsafe(4_096);

  join(prefix: string, suffix: string): string {
    const length = prefix.length + suffix.length;
    if (length > this.scratch.length) this.scratch = Buffer.allocUnsafe(length * 2);
    this.scratch.write(prefix, 0, 'latin1');
    this.scratch.write(suffix, prefix.length, 'latin1');
    return this.scratch.toString('latin1', 0, length);
  }
}

export interface MappingFile {
  pair: SourcePair;
  path: string;
  rows: number;
}

/**
 * Writes the mapping file of every pair of `pairs` under `folder`, from the current assignments of
 * `snapshot`. `workFolder` holds the sort's run files. Returns each file with its row count.
 */
export async function writeMappingFiles(
  snapshot: Snapshot,
  pairs: SourcePair[],
  folder: string,
  workFolder: string,
  progress: Progress,
): Promise<MappingFile[]> {
  const width = String(pairs.length).length;
  const codes = new Map<number, Map<number, string>>();
  pairs.forEach((pair, i) => {
    if (!codes.has(pair.from)) codes.set(pair.from, new Map());
    codes.get(pair.from)!.set(pair.to, String(i).padStart(width, '0'));
  });
  const sourceIds = [...new Set(pairs.flatMap((pair) => [pair.from, pair.to]))].sort((a, b) => a - b);
  const sorter = new ExternalSorter({ folder: workFolder });
  const keys = new FlatKeys();
  try {
    progress.begin('pair ids by structure');
    for await (const group of structureGroups(snapshot, sourceIds)) {
      const members = group.members
        .map((member) => ({ sourceId: member.sourceId, ids: member.ids.filter((_, i) => member.assignments[i] === 1) }))
        .filter((member) => member.ids.length > 0);
      if (members.length < 2) {
        progress.tick(1);
        continue;
      }
      for (const from of members) {
        const targets = codes.get(from.sourceId);
        if (!targets) continue;
        for (const to of members) {
          const code = targets.get(to.sourceId);
          if (code === undefined) continue;
          for (const fromId of from.ids) {
            const prefix = `${code}${fromId}\u0000`;
            for (const toId of to.ids) {
              const wait = sorter.add(keys.join(prefix, toId));
              if (wait) await wait;
            }
          }
        }
      }
      progress.tick(1);
    }

    const files: MappingFile[] = [];
    let next = 0;
    let writer: TextWriter | undefined;
    let current: MappingFile | undefined;
    const openFile = async (index: number): Promise<void> => {
      const pair = pairs[index];
      const path = mappingFilePath(pair);
      await mkdir(join(folder, 'wholeSourceMapping', `src_id${pair.from}`), { recursive: true });
      writer = new TextWriter(join(folder, path), { gzip: true });
      current = { pair, path, rows: 0 };
      files.push(current);
      const wait = writer.write(mappingHeader(pair));
      if (wait) await wait;
    };
    const closeFile = async (): Promise<void> => {
      if (writer) await writer.end();
      writer = undefined;
    };
    /** Opens the file of pair `index`, writing header-only files for the pairs without rows before it. */
    const moveTo = async (index: number): Promise<void> => {
      await closeFile();
      while (next < index) {
        await openFile(next);
        await closeFile();
        next += 1;
      }
      await openFile(index);
      next = index + 1;
    };

    progress.begin('write mapping files', sorter.lines);
    let previous = '';
    let currentCode = '';
    try {
      for await (const lines of sorter.sorted()) {
        let text = '';
        for (const line of lines) {
          if (line === previous) continue; // the same two ids sharing several structures: one row
          previous = line;
          const code = line.slice(0, width);
          if (code !== currentCode) {
            if (text) {
              const wait = writer!.write(text);
              if (wait) await wait;
              text = '';
            }
            await moveTo(Number(code));
            currentCode = code;
          }
          const separator = line.indexOf('\u0000', width);
          text += `${line.slice(width, separator)}\t${line.slice(separator + 1)}\n`;
          current!.rows += 1;
        }
        if (text) {
          const wait = writer!.write(text);
          if (wait) await wait;
        }
        progress.tick(lines.length);
      }
      await closeFile();
      while (next < pairs.length) {
        await openFile(next);
        await closeFile();
        next += 1;
      }
    } catch (error) {
      writer?.destroy();
      throw error;
    }
    return files;
  } finally {
    await sorter.dispose();
  }
}
