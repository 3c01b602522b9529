/**
 * The checks a downloaded table passes before `npm run sync` moves it into place: its size is the
 * server's, its gzip stream reads to the end, its header row names the columns the loader needs,
 * and its checksum is the one published beside it, where one is.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';

/** The three tables of a UniChem dump, in the order the loader reads them. */
export const tableFiles = ['source.tsv.gz', 'structure.tsv.gz', 'reference.tsv.gz'] as const;
export type TableFile = (typeof tableFiles)[number];

/** The columns the loader needs in each table (lower case; a list is one of them). */
const neededColumns: Record<TableFile, (string | string[])[]> = {
  'source.tsv.gz': ['src_id', 'name'],
  'structure.tsv.gz': ['uci', 'standardinchi', 'standardinchikey'],
  // UniChem's header really is misspelt; the loader reads either.
  'reference.tsv.gz': ['uci', 'src_id', 'src_compound_id', ['assigment', 'assignment']],
};

/** A checksum the server publishes for one file. */
export interface PublishedChecksum {
  algorithm: 'md5' | 'sha256';
  hex: string;
  /** The file of the folder that gave it: `md5sums.txt`, `reference.tsv.gz.md5`. */
  from: string;
}

/** What each check of a table found, in the words of the report. */
export interface Checks {
  size: string;
  gzip: string;
  header: string;
  checksum: string;
}

/** A table that failed a check: it is refused, deleted and downloaded again by the next run. */
export class CheckFailed extends Error {
  override name = 'CheckFailed';
  constructor(
    readonly file: string,
    readonly check: keyof Checks,
    message: string,
  ) {
    super(`${file} failed the ${check} check: ${message}`);
  }
}

/**
 * The checksums a listing holds, by file name: `md5sum`/`sha256sum` lines (`<hex>  <name>`, `*` for
 * binary mode) and BSD `MD5 (<name>) = <hex>` lines. Anything else (an HTML page served for a
 * missing file) is ignored.
 */
export function parseChecksums(text: string, from: string): Map<string, PublishedChecksum> {
  const found = new Map<string, PublishedChecksum>();
  for (const line of text.split(/\r?\n/)) {
    const gnu = /^([0-9a-f]{32}|[0-9a-f]{64})\s+\*?(\S.*?)\s*$/i.exec(line.trim());
    const bsd = /^(MD5|SHA256)\s*\((.+)\)\s*=\s*([0-9a-f]{32}|[0-9a-f]{64})\s*$/i.exec(line.trim());
    const [hex, name] = gnu ? [gnu[1], gnu[2]] : bsd ? [bsd[3], bsd[2]] : [];
    if (!hex || !name) continue;
    const base = name.replace(/^.*\//, '');
    found.set(base, { algorithm: hex.length === 32 ? 'md5' : 'sha256', hex: hex.toLowerCase(), from });
  }
  return found;
}

/**
 * Checks the downloaded `path` of table `file`: its size against `expectedSize` (the server's, if it
 * gave one), then in one read its gzip stream to the end, its header row and its checksum (if
 * `checksum` is published). Resolves with what each check found; throws `CheckFailed` naming the
 * first check that failed.
 */
export async function checkTable(
  path: string,
  file: TableFile,
  expectedSize: number | undefined,
  checksum: PublishedChecksum | undefined,
): Promise<Checks> {
  const { size } = await stat(path);
  if (expectedSize !== undefined && size !== expectedSize) {
    throw new CheckFailed(file, 'size', `${size} bytes downloaded, the server's file has ${expectedSize}`);
  }
  const hash = checksum ? createHash(checksum.algorithm) : undefined;
  const header = new HeaderRow();
  try {
    await pipeline(createReadStream(path), hashing(hash), createGunzip(), header);
  } catch (error) {
    if ((error as Error & { code?: string }).code?.startsWith('Z_') || /gzip|zlib|end of file/i.test(String(error)))
      throw new CheckFailed(file, 'gzip', `its gzip stream does not read to the end (${(error as Error).message})`);
    throw error;
  }
  const columns = header.columns();
  const missing = neededColumns[file].filter((needed) =>
    Array.isArray(needed) ? !needed.some((c) => columns.includes(c)) : !columns.includes(needed),
  );
  if (missing.length > 0) {
    const names = missing.map((m) => (Array.isArray(m) ? m.join(' or ') : m).toUpperCase()).join(', ');
    throw new CheckFailed(
      file,
      'header',
      `its header row lacks ${names} (found: ${columns.join(', ').toUpperCase() || 'no header'})`,
    );
  }
  let checksumResult = 'none published';
  if (checksum && hash) {
    const actual = hash.digest('hex');
    if (actual !== checksum.hex) {
      throw new CheckFailed(
        file,
        'checksum',
        `its ${checksum.algorithm} is ${actual}, ${checksum.from} publishes ${checksum.hex}`,
      );
    }
    checksumResult = `${checksum.algorithm} passed (${checksum.from})`;
  }
  return {
    size: expectedSize === undefined ? `${size} bytes (the server gave no size)` : `passed (${size} bytes)`,
    gzip: 'passed',
    header: 'passed',
    checksum: checksumResult,
  };
}

/** Passes the bytes through, feeding them to `hash` on the way. */
function hashing(hash: Hash | undefined): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash?.update(chunk);
      done(null, chunk);
    },
  });
}

/** Keeps the first line of the text it is given (at most 64 KiB of it) and drops the rest. */
class HeaderRow extends Writable {
  private head = '';
  private complete = false;

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    if (!this.complete) {
      this.head += chunk.toString('utf8');
      const end = this.head.indexOf('\n');
      if (end >= 0 || this.head.length > 65_536) {
        this.head = end >= 0 ? this.head.slice(0, end) : this.head;
        this.complete = true;
      }
    }
    done();
  }

  columns(): string[] {
    return this.head
      .replace(/^\uFEFF/, '')
      .replace(/\r$/, '')
      .split('\t')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean);
  }
}
