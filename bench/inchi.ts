// Benchmark: parse + split into components + Standard InChIKey over the 28,657 real molecules
// of test/fixtures/chemistry/molecules.tsv.gz, on one core. Prints molecules/s per round and
// the median. Run with `npm run bench:inchi`.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { inchiKeyOf, parseStandardInchi } from '../src/chemistry';

const WARM_UP_ROUNDS = 3;
const MEASURED_ROUNDS = 9;

interface Row {
  inchi: string;
  inchiKey: string;
}

function readMolecules(): Row[] {
  const text = gunzipSync(readFileSync(join(__dirname, '..', 'test', 'fixtures', 'chemistry', 'molecules.tsv.gz'))).toString('utf8');
  return text.split('\n').slice(1).filter((line) => line !== '').map((line) => {
    const columns = line.split('\t');
    return { inchi: columns[3], inchiKey: columns[4] };
  });
}

/** One pass over all molecules; returns the number of keys that differ from the file's. */
function round(rows: Row[]): number {
  let mismatches = 0;
  for (let i = 0; i < rows.length; i++) {
    const parsed = parseStandardInchi(rows[i].inchi);
    // Touch the components so the split is part of what is measured, as the loaders use it.
    if (parsed.components.length === 0 || inchiKeyOf(parsed) !== rows[i].inchiKey) mismatches++;
  }
  return mismatches;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function main(): void {
  const rows = readMolecules();
  const components = rows.reduce((sum, row) => sum + parseStandardInchi(row.inchi).components.length, 0);
  process.stdout.write(`InChI core benchmark: parse + split + InChIKey, ${rows.length} molecules (${components} components), one core\n`);
  process.stdout.write(`node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores)\n`);
  for (let r = 0; r < WARM_UP_ROUNDS; r++) round(rows);
  const rates: number[] = [];
  for (let r = 0; r < MEASURED_ROUNDS; r++) {
    const start = process.hrtime.bigint();
    const mismatches = round(rows);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (mismatches !== 0) throw new Error(`${mismatches} computed InChIKeys differ from the published ones`);
    rates.push(rows.length / seconds);
    process.stdout.write(`round ${r + 1}: ${Math.round(rows.length / seconds).toLocaleString('en-US')} molecules/s\n`);
  }
  process.stdout.write(`median: ${Math.round(median(rates)).toLocaleString('en-US')} molecules/s (all keys equal the published ones)\n`);
}

main();
