import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { readAhead, readColumns, readRowBatches, readRows } from '../loaders/read';

/** Where the loader's reads cut a file: 64 kB chunks, of the file or of its gunzipped text. */
const chunkBytes = 64 * 1024;

/**
 * A reference table of 3,000 rows whose line breaks mix `\n`, `\r\n` and lone `\r`, with compound
 * ids in several scripts (two-, three- and four-byte UTF-8) and lines of many lengths; the first
 * chunk ends between the `\r` and the `\n` of a line break, the second inside a four-byte character.
 */
function awkwardTable(): { text: string; rows: string[][] } {
  const breaks = ['\n', '\r\n', '\r'];
  const ids = ['CHEMBL112', 'Paracétamol', '対乙酰氨基酚', '𝛼-tocopherol', 'a/b%2F'];
  const rows: string[][] = [];
  let text = 'UCI\tSRC_ID\tSRC_COMPOUND_ID\tASSIGMENT\n';
  const add = (compoundId: string, lineBreak: string): void => {
    const row = [
      String(rows.length + 1),
      String((rows.length % 20) + 1),
      compoundId,
      String(rows.length % 7 === 0 ? 0 : 1),
    ];
    rows.push(row);
    text += row.join('\t') + lineBreak;
  };
  /** A row whose compound id (padded, then `tail`) ends `after` bytes before byte `at` of the file. */
  const landing = (at: number, tail: string, after: number, lineBreak: string): void => {
    const before = Buffer.byteLength(`${text}${rows.length + 1}\t${(rows.length % 20) + 1}\t${tail}`);
    add(`${'y'.repeat(at - after - before)}${tail}`, lineBreak);
  };
  for (let i = 0; i < 3_000; i += 1) {
    if (rows.length === 1_000) landing(chunkBytes - 1, '', 2, '\r\n'); // then a tab and the assignment: the '\r' is the chunk's last byte
    if (rows.length === 2_000) landing(2 * chunkBytes + 2, '𝛼', 0, '\n'); // 𝛼's four bytes across the chunks
    add(`${ids[i % ids.length]}-${'x'.repeat(i % 37)}`, breaks[i % 3]);
  }
  return { text, rows };
}

describe('reading table files', () => {
  const folder = mkdtempSync(join(tmpdir(), 'chemxref-read-'));
  const { text, rows } = awkwardTable();
  const plain = join(folder, 'reference.tsv');
  const gzipped = join(folder, 'reference.tsv.gz');
  writeFileSync(plain, text);
  writeFileSync(gzipped, gzipSync(Buffer.from(text)));
  const bytes = Buffer.from(text);
  expect(bytes.subarray(chunkBytes - 1, chunkBytes + 1).toString()).to.equal('\r\n');
  expect(bytes.subarray(2 * chunkBytes - 2, 2 * chunkBytes + 2).toString()).to.equal('𝛼');

  for (const file of [plain, gzipped]) {
    const name = file.endsWith('.gz') ? 'gzip' : 'plain';
    it(
      `reads every row of a ${name} TSV whose lines end in \\n, \\r\\n or ` +
        `\\r, line numbers and multi-byte ids intact`,
      async () => {
        const read: string[][] = [];
        for await (const batch of readRowBatches(file, 'tsv', 1_000)) {
          for (const row of batch)
            read.push([
              String(row.line),
              row.fields.uci,
              row.fields.src_id,
              row.fields.src_compound_id,
              row.fields.assigment,
            ]);
        }
        // Row i is on line i + 2, after the header: a '\r\n' cut in two would have added a line.
        expect(read).to.deep.equal(rows.map((row, i) => [String(i + 2), ...row]));
      },
    );
  }

  it('cuts rows into batches of the size asked, the last one shorter', async () => {
    const sizes: number[] = [];
    for await (const batch of readRowBatches(gzipped, 'tsv', 1_024)) sizes.push(batch.length);
    expect(sizes).to.deep.equal([1_024, 1_024, 954]);
  });

  it('ends a batch early once its rows reach the characters asked, so long rows make smaller batches', async () => {
    const batches: { rows: number; chars: number; last: number }[] = [];
    for await (const batch of readRowBatches(gzipped, 'tsv', 1_024, undefined, 20_000)) {
      batches.push({
        rows: batch.length,
        chars: batch.reduce((sum, row) => sum + row.raw.length, 0),
        last: batch.at(-1)!.raw.length,
      });
    }
    expect(batches.reduce((sum, batch) => sum + batch.rows, 0)).to.equal(3_002);
    expect(batches.length).to.be.above(3);
    for (const batch of batches.slice(0, -1)) {
      expect(batch.rows).to.be.below(1_024);
      // Cut at the first row that reaches the limit: without it, the batch was under it.
      expect(batch.chars).to.be.at.least(20_000);
      expect(batch.chars - batch.last).to.be.below(20_000);
    }
  });

  it('numbers rows by their line in the file, blank lines counted, and reads a last line without a break', async () => {
    const file = join(folder, 'blank-lines.tsv');
    writeFileSync(
      file,
      'UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\r\n1\tInChI=1S/H2O/h1H2\tXLYOFNOQVPJJNP-UHFFFAOYSA-N\r\n\r\n\n2\tInChI=1S/ClH/h1H\tVEXZGXHMUGYJMC-UHFFFAOYSA-N',
    );
    const read: { line: number; raw: string }[] = [];
    for await (const row of readRows(file, 'tsv')) read.push({ line: row.line, raw: row.raw });
    expect(read).to.deep.equal([
      { line: 2, raw: '1\tInChI=1S/H2O/h1H2\tXLYOFNOQVPJJNP-UHFFFAOYSA-N' },
      { line: 5, raw: '2\tInChI=1S/ClH/h1H\tVEXZGXHMUGYJMC-UHFFFAOYSA-N' },
    ]);
    expect(await readColumns(file, 'tsv')).to.deep.equal(['uci', 'standardinchi', 'standardinchikey']);
  });

  it('reads a line far longer than a chunk (a 20 MB SMILES) whole', async () => {
    const file = join(folder, 'long-line.tsv.gz');
    const molfile = 'C'.repeat(20 * 1024 * 1024);
    writeFileSync(file, gzipSync(Buffer.from(`UCI\tSMILES\n1\t${molfile}\r\n2\tO`)));
    const read: string[] = [];
    for await (const row of readRows(file, 'tsv')) read.push(row.fields.smiles);
    expect(read).to.deep.equal([molfile, 'O']);
  });

  it('hands out batches read ahead in order, and closes the source when the reader stops early', async () => {
    let closed: boolean | undefined;
    async function* source(): AsyncGenerator<number[]> {
      try {
        for (let i = 0; i < 10; i += 1) yield [3 * i, 3 * i + 1, 3 * i + 2];
      } finally {
        closed = true;
      }
    }
    const all: number[] = [];
    for await (const batch of readAhead(source(), 2)) all.push(...batch);
    expect(all).to.deep.equal([...Array(30).keys()]);
    expect(closed).to.equal(true);

    closed = false;
    const some: number[] = [];
    for await (const batch of readAhead(source(), 2)) {
      some.push(...batch);
      if (some.includes(7)) break;
    }
    expect(some).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(closed).to.equal(true);
  });

  it('passes on the error of a failing source', async () => {
    async function* failing(): AsyncGenerator<number[]> {
      yield [1, 2];
      throw new Error('the table broke off');
    }
    const seen: number[] = [];
    let failure: Error | undefined;
    try {
      for await (const batch of readAhead(failing(), 2)) seen.push(...batch);
    } catch (error) {
      failure = error as Error;
    }
    expect(seen).to.deep.equal([1, 2]);
    expect(failure?.message).to.equal('the table broke off');
  });
});
