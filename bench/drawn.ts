/**
 * `npm run bench:similarity -- --drawn [--limit N] [--file F]`: is the stored molecule of a structure
 * (drawn.cjs, from its Standard InChI alone) the molecule its source drew? On the 28,657 real molecules
 * of test/fixtures/chemistry/molecules.tsv.gz (or F, of the same columns), each with the SMILES its
 * source drew, against RDKit in Python reading that SMILES (bench/similarity_reference.py `drawn`): the
 * Morgan fingerprints, the drawn SMILES as a substructure query finding its own structure, common groups
 * found, and why the rows that still differ do (the InChI's own rebuild: BENCHMARKS.md). No engine.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import initRDKitModule from '@rdkit/rdkit';
import { MoleculeToolkit, type StoredMolecule } from '../src/toolkits/molecules';
import { fmt, out, repository, since } from './common';

const python = join(process.env.CHEMXREF_PY ?? '/root/.cache/chemxref-py', 'bin', 'python');
const shared = join(repository, 'test', 'fixtures', 'chemistry', 'molecules.tsv.gz');
/** Groups as SMILES, matched as the API's `smiles` type does: the molecule, or a tautomer of its groups. */
const groups: [name: string, smiles: string][] = [
  ['amide', 'C(=O)N'],
  ['secondary anilide', 'O=C(C)Nc1ccccc1'],
  ['urea', 'NC(=O)N'],
  ['γ-lactam', 'O=C1CCCN1'],
  ['2-pyridone', 'O=c1cccc[nH]1'],
  ['carbamate', 'NC(=O)O'],
  ['imide', 'O=CNC=O'],
  ['sulfonamide', 'NS(=O)=O'],
];
type Tautomers = { tautomerAlternatives: (rdkit: unknown, query: unknown) => { smarts: string }[] };
const { tautomerAlternatives } = require('../src/toolkits/query-tautomers.cjs') as Tautomers; // eslint-disable-line @typescript-eslint/no-require-imports
/** Molecules a batch: a few hundred keep both workers busy without holding every answer at once. */
const batch = 400;

/** A line of the reference script's `drawn`, one a row (see `drawn_row` there). */
interface ReferenceRow {
  row: number;
  readable: boolean;
  metal?: boolean;
  sameInchi?: boolean;
  drawn?: string;
  groups?: Record<'drawn' | 'stored', string>;
  why?: string | null;
  storedSmiles?: string;
  asRebuilt?: boolean;
}

/** A fingerprint's on-bits from the reference's hex (bit 8i+j = (byte i >> j) & 1), as a string to compare. */
function onBitsOfHex(hex: string): string {
  const bits: number[] = [];
  Buffer.from(hex, 'hex').forEach((byte, i) => {
    for (let j = 0; j < 8; j += 1) if ((byte >> j) & 1) bits.push(8 * i + j);
  });
  return bits.join(',');
}

const percent = (part: number, whole: number): string => (whole ? `${fmt((100 * part) / whole, 2)} %` : '-');

/** Recall and precision of `found` against `expected`, over the rows counted. */
function recallPrecision(expected: boolean[], found: boolean[]): string {
  const both = expected.filter((e, i) => e && found[i]).length;
  return `${percent(both, expected.filter(Boolean).length)} / ${percent(both, found.filter(Boolean).length)}`;
}

/**
 * Prints the agreement of the stored molecules with the molecules as drawn, as markdown tables:
 * the rates against their goals, the rows left out and why, and the rows that still differ, by why.
 * `limit`: only the file's first rows.
 */
export async function drawnAgreement(limit = Infinity, file = shared): Promise<void> {
  const started = process.hrtime.bigint();
  const lines = gunzipSync(readFileSync(file))
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .slice(1, limit + 1);
  const rows = lines.map((line) => ({ smiles: line.split('\t')[2], inchi: line.split('\t')[3] }));
  const toolkit = MoleculeToolkit.perCore();
  const folder = mkdtempSync(join(tmpdir(), 'chemxref-drawn-'));
  try {
    out(`\n## The stored molecule against the molecule as drawn: ${fmt(rows.length)} molecules (${file})`);
    // chemxref: each InChI's stored molecule and its Morgan fingerprint.
    const stored: ({ molecule: string; morgan: string } | undefined)[] = [];
    for (let i = 0; i < rows.length; i += batch) {
      const answers = await toolkit.fingerprints(rows.slice(i, i + batch).map((row) => row.inchi));
      for (const a of answers)
        stored.push('error' in a ? undefined : { molecule: a.molecule, morgan: a.morgan.join(',') });
    }
    const storedSeconds = since(started);

    // The reference: RDKit in Python reads the drawn SMILES (and decodes the stored molecules).
    const storedFile = join(folder, 'stored.txt');
    writeFileSync(storedFile, stored.map((s) => `${s?.molecule ?? ''}\n`).join(''));
    const pythonStarted = process.hrtime.bigint();
    const args = ['drawn', '--in', file, '--stored', storedFile, '--workers', String(toolkit.size)];
    if (Number.isFinite(limit)) args.push('--limit', String(limit));
    // on the drawn molecules too: the query's tautomers (query-tautomers.cjs) as SMARTS after a '|'
    const rdkit = await initRDKitModule();
    const withTautomers = (smiles: string) =>
      [smiles, ...tautomerAlternatives(rdkit, rdkit.get_mol(smiles)).map((t) => t.smarts)].join('|');
    for (const [name, smiles] of groups) args.push('--group', name, withTautomers(smiles));
    const script = join(__dirname, 'similarity_reference.py');
    const { stdout } = await promisify(execFile)(python, [script, ...args], { maxBuffer: 2 ** 30 });
    const reference = stdout
      .split('\n')
      .filter((line) => line.startsWith('{"row"'))
      .map((line) => JSON.parse(line) as ReferenceRow);
    const pythonSeconds = since(pythonStarted);

    // chemxref's substructure matches, with its tautomer tolerance: each drawn SMILES against its own
    // stored molecule, then each group against every stored molecule. A row's UCI is its number. A
    // SMILES the toolkit cannot read finds nothing.
    const counted = reference.filter((r) => r.readable && !r.metal && r.sameInchi).map((r) => r.row - 1);
    const matchStarted = process.hrtime.bigint();
    const selfFound = new Map<number, boolean>();
    for (let i = 0; i < counted.length; i += batch) {
      const found = counted.slice(i, i + batch).map(async (r) => {
        const molecule = stored[r]?.molecule;
        const hit = molecule
          ? await toolkit.match('smiles', rows[r].smiles, [{ uci: r, molecule }]).catch(() => [false])
          : [false];
        selfFound.set(r, hit[0]);
      });
      await Promise.all(found);
    }
    const candidates: StoredMolecule[] = counted.flatMap((r) => {
      const molecule = stored[r]?.molecule;
      return molecule ? [{ uci: r, molecule }] : [];
    });
    const groupFound = groups.map(() => new Set<number>());
    for (const [g, [, smiles]] of groups.entries())
      for (let i = 0; i < candidates.length; i += batch) {
        const some = candidates.slice(i, i + batch);
        (await toolkit.match('smiles', smiles, some)).forEach((hit, k) => hit && groupFound[g].add(some[k].uci));
      }
    const matchSeconds = since(matchStarted);

    // The rates, over the counted rows.
    const byRow = new Map(reference.map((line) => [line.row - 1, line as Required<ReferenceRow>]));
    const ref = (r: number): Required<ReferenceRow> => byRow.get(r)!;
    const storedMorganEqual = counted.filter((r) => stored[r]?.morgan === onBitsOfHex(ref(r).drawn));
    const n = counted.length;
    out(`\n| over ${fmt(n)} molecules | chemxref: stored molecule | goal |`);
    out('|---|---|---|');
    const same = counted.filter((r) => ref(r).why === null).length;
    out(`| the molecule as drawn (same canonical SMILES, stereo aside) | ${percent(same, n)} | |`);
    out(
      `| Morgan fingerprint (r2, 2048) equal to the drawn SMILES's | ${percent(storedMorganEqual.length, n)} | ≥ 97 % |`,
    );
    const selfFinds = [...selfFound.values()].filter(Boolean).length;
    out(`| self-find: the drawn SMILES as a query finds its structure | ${percent(selfFinds, n)} | ≥ 99 % |`);
    for (const [g, [name, smiles]] of groups.entries()) {
      const expected = counted.map((r) => ref(r).groups.drawn[g] === '1');
      const ours = counted.map((r) => groupFound[g].has(r));
      out(
        `| ${name} \`${smiles}\` (${fmt(expected.filter(Boolean).length)} drawn): recall / precision | ` +
          `${recallPrecision(expected, ours)} | ≥ 99 % |`,
      );
    }

    // The rows left out, and why: the first reason that applies, in this order.
    const unreadable = reference.filter((r) => !r.readable).length;
    const metal = reference.filter((r) => r.readable && r.metal).length;
    const otherInchi = reference.filter((r) => r.readable && !r.metal && !r.sameInchi).length;
    out(
      `\nleft out: ${fmt(reference.length - n)} of ${fmt(reference.length)} rows: ${fmt(unreadable)} whose SMILES ` +
        `RDKit cannot read, ${fmt(metal)} with a metal, ${fmt(otherInchi)} whose drawn SMILES has another ` +
        `Standard InChI than the file's (RDKit's MolToInchi)`,
    );
    out(
      `time: ${fmt(since(started), 1)} s on ${toolkit.size} workers (stored molecules ${fmt(storedSeconds, 1)} s, ` +
        `the reference ${fmt(pythonSeconds, 1)} s, matches ${fmt(matchSeconds, 1)} s)`,
    );

    // The rows that still differ, by why their stored molecule is not the molecule as drawn.
    type Tally = Record<'rows' | 'fingerprint' | 'rebuilt' | 'self' | 'missed' | 'extra', number> & {
      example?: string;
    };
    const tallies = new Map<string, Tally>();
    const equalMorgan = new Set(storedMorganEqual);
    for (const r of counted) {
      const { groups: has, why, storedSmiles } = ref(r);
      const bits = groups.map((_, g) => [has.drawn[g] === '1', groupFound[g].has(r)]);
      const [missed, extra] = [bits.some(([e, o]) => e && !o), bits.some(([e, o]) => !e && o)];
      if (equalMorgan.has(r) && selfFound.get(r) && !missed && !extra) continue;
      const key = why ?? 'the same molecule';
      const t = tallies.get(key) ?? { rows: 0, fingerprint: 0, rebuilt: 0, self: 0, missed: 0, extra: 0 };
      tallies.set(key, t);
      t.rows += 1;
      t.fingerprint += Number(!equalMorgan.has(r));
      t.rebuilt += Number(!equalMorgan.has(r) && ref(r).asRebuilt);
      t.self += Number(!selfFound.get(r));
      t.missed += Number(missed);
      t.extra += Number(extra);
      const example = `\`${rows[r].smiles}\` → \`${storedSmiles ?? '(none)'}\``;
      if (!t.example || example.length < t.example.length) t.example = example;
    }
    out(
      '\n| why the stored molecule differs from the drawn | rows | Morgan differs | of them drawn as MolFromInchi rebuilds it | not self-found | group missed | group extra | shortest example, drawn → stored |',
    );
    out('|---|---|---|---|---|---|---|---|');
    for (const [why, t] of [...tallies].sort(([, p], [, q]) => q.rows - p.rows)) {
      const counts = [t.rows, t.fingerprint, t.rebuilt, t.self, t.missed, t.extra].map((x) => fmt(x));
      out(`| ${why} | ${counts.join(' | ')} | ${t.example} |`);
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
    await toolkit.close();
  }
}
