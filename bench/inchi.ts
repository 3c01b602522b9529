// Benchmark: parse + split into components + Standard InChIKey over the 28,657 real molecules of
// test/fixtures/chemistry/molecules.tsv.gz, on one core; the median of 9 rounds after 3 of warm-up.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { inchiKeyOf, parseStandardInchi } from '../src/chemistry';
import { fmt, out, repository, runBench, since } from './common';

/** One pass over all molecules; returns the number of keys that differ from the published ones. */
function round(rows: string[][]): number {
  let mismatches = 0;
  for (const [, , , inchi, inchiKey] of rows) {
    const parsed = parseStandardInchi(inchi);
    // Touch the components so the split is part of what is measured, as the loaders use it.
    if (parsed.components.length === 0 || inchiKeyOf(parsed) !== inchiKey) mismatches++;
  }
  return mismatches;
}

async function main(): Promise<void> {
  const file = join(repository, 'test', 'fixtures', 'chemistry', 'molecules.tsv.gz');
  const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n').slice(1).filter(Boolean);
  const rows = lines.map((line) => line.split('\t'));
  const components = rows.reduce((sum, row) => sum + parseStandardInchi(row[3]).components.length, 0);
  out(`bench:inchi: parse + split + InChIKey, ${fmt(rows.length)} molecules (${fmt(components)} components), one core`);
  out(`node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores)`);
  for (let r = 0; r < 3; r++) round(rows);
  const rates: number[] = [];
  for (let r = 0; r < 9; r++) {
    const start = process.hrtime.bigint();
    const mismatches = round(rows);
    if (mismatches !== 0) throw new Error(`${mismatches} computed InChIKeys differ from the published ones`);
    rates.push(rows.length / since(start));
    out(`round ${r + 1}: ${fmt(rates[r])} molecules/s`);
  }
  out(`median: ${fmt(rates.sort((a, b) => a - b)[4])} molecules/s (all keys equal the published ones)`);
}

runBench(module, 'bench:inchi', main);
