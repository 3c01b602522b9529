/**
 * Fingerprints and substructure matches of the molecules of Standard InChIs as chemists draw them
 * (drawn.cjs, molecule-worker.cjs), in isolated workers: one for the API, one a core for `load -- fingerprints`.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import type { SubstructureQueryType } from '../domain/lookup';
import { IsolatedWorker, WorkerCrashed, WorkerDidNotStart } from './worker';

/** A structure's derived data: the on-bits of its fingerprints and its molecule in RDKit's binary form (base64). */
export interface MoleculeData {
  morgan: number[];
  pattern: number[];
  molecule: string;
}

/**
 * How drawn.cjs derives a molecule from its InChI: raised whenever a change there can change a
 * fingerprint or a stored molecule, so that `load -- fingerprints` makes the older ones again.
 * Fingerprint documents written before it existed count as 1; 2 is the InChI library's own
 * molecule, 3 the molecule as drawn (mobile hydrogens and salts as chemists draw them), 4 the same
 * with the hydrogens that 3 left where Indigo's Kekulé structure put them moved too (1H-indazoles,
 * lactams), 1,2,4-triazole-3-thiols drawn with their SH and a cation's proton on its alkylamine,
 * 5 the same with the hydrogens of fused azoles, amidines and partly aromatic rings moved where
 * chemists draw them, quinolin-2-ones and a few other lactams drawn as their -ols and a quaternary
 * salt's anion given back its proton, 6 the same with 3-acyl-quinolin-4-ols,
 * 2-amino-6-alkylpyrimidin-4-ols, azolo-fused pyrimidin-4-ols and -thiols (allopurinol,
 * 6-mercaptopurine) and 4-amino-quinazoline-2-thiols drawn as such, and phenanthridinones as lactams,
 * 7 the same with pyrimidin-4(1H)-ones drawn as 4(3H)-ones, N-substituted amidoximes and
 * nitroguanidines with their oxime and nitroimine, the amides of cations that the InChI writes with
 * added protons, quinoxaline 1,4-dioxides with both N-oxides, ring cations charged on their nitrogen
 * (DMAP salts, pyridiniums the rebuild charged on an ether oxygen, fused azoliums on their
 * substituted nitrogen), cyclic amidines' hydrohalides as the imine and HX, pyridinium aldoximes,
 * sydnones, quaternary salts' amides and diazo compounds as drawn, 8 the same with 3-acyl and bare
 * quinolin-2(1H)-ones kept as lactams, unsubstituted amidoximes as H2N–C(=N–OH)R, quinoid enols
 * and imines of the rebuild made aromatic again, sulfoximines charged on their oxide, macrocyclic
 * bis(4-aminoquinolinium) salts, phenacylpyridinium amides and the iminols of quaternary salts as
 * amides, 9 the same with a molecule for the structures whose rebuild has an impossible valence
 * (tetrazolide salts such as losartan potassium, sulfonates, sulfonamide anions, N-oxides of
 * hydroxylamines, trialkylhydrazinium ions, selenium and tellurium dihalides), which had none, 10 the
 * same with O-acyl and O-alkyl amidoximes as H2N–C(=N–OR)R' and the pyridinium aldoximes whose ring
 * nitrogen the rebuild protonated (asoxime) drawn as pyridiniums.
 */
export const moleculeDerivation = 10;

type Request =
  | { op: 'fingerprints'; inchis: string[] }
  | { op: 'query'; type: SubstructureQueryType; text: string }
  | { op: 'match'; type: SubstructureQueryType; text: string; ucis: number[]; molecules: string[]; keep: number };

/** A stored structure a substructure search checks: its UCI and its molecule in RDKit's binary form (base64). */
export interface StoredMolecule {
  uci: number;
  molecule: string;
}

/** A compiled WebAssembly.Module (its type is the DOM library's, which this project leaves out). */
type WasmModule = object;
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: { Module: new (bytes: Buffer) => WasmModule } };

/** The WebAssembly module in `folder` whose file name matches `name`, compiled (lazily, function by function). */
function moduleIn(folder: string, name: RegExp): WasmModule {
  const file = readdirSync(folder).find((entry) => name.test(entry));
  if (!file) throw new Error(`no WebAssembly module ${name} in ${folder}`);
  return new wasm.Module(readFileSync(join(folder, file)));
}

let compiled: { indigo: WasmModule; rdkit: WasmModule } | undefined;

/**
 * Indigo's and RDKit's WebAssembly modules, compiled once a process and given to every molecule worker:
 * workers given the same module share its compiled code, which each would otherwise compile on its
 * own (a two workers' backfill of the demo: 379-388 MB peak RSS, against 417-463 MB).
 */
function wasmModules(): { indigo: WasmModule; rdkit: WasmModule } {
  compiled ??= {
    indigo: moduleIn(dirname(require.resolve('indigo-ketcher/jsNoRender')), /^indigo-ketcher-norender-.*\.wasm$/),
    rdkit: moduleIn(dirname(require.resolve('@rdkit/rdkit')), /^RDKit_minimal\.wasm$/),
  };
  return compiled;
}

/** The time a new worker gets to load Indigo's and RDKit's WASM modules. */
const startupMs = 60_000;

export class MoleculeToolkit {
  private readonly workers: IsolatedWorker<Request, unknown>[];
  private next = 0;

  /**
   * `workers`: how many worker threads (one a core for a backfill); `timeoutMs` bounds one request;
   * `keptMolecules`: how many molecules, of the lowest UCIs, the workers keep read between searches.
   */
  constructor(
    workers = 1,
    timeoutMs = 60_000,
    private readonly keptMolecules = 0,
  ) {
    const script = join(__dirname, 'molecule-worker.cjs');
    this.workers = Array.from(
      { length: workers },
      () => new IsolatedWorker<Request, unknown>(script, timeoutMs, startupMs, wasmModules),
    );
  }

  static perCore(): MoleculeToolkit {
    return new MoleculeToolkit(availableParallelism());
  }

  get size(): number {
    return this.workers.length;
  }

  private run<T>(request: Request): Promise<T> {
    const worker = this.workers[this.next];
    this.next = (this.next + 1) % this.workers.length;
    return worker.run(request) as Promise<T>;
  }

  /** `items` in one slice a worker, all at once, and their answers in the items' order. */
  private async spread<T, R>(items: T[], answer: (slice: T[]) => Promise<R[]>): Promise<R[]> {
    const slices = Array.from({ length: this.size }, (_, i) =>
      items.slice(Math.floor((i * items.length) / this.size), Math.floor(((i + 1) * items.length) / this.size)),
    ).filter((slice) => slice.length > 0);
    return (await Promise.all(slices.map(answer))).flat();
  }

  /** The fingerprints and molecule of each InChI, or why it has none, computed on every worker. */
  fingerprints(inchis: string[]): Promise<(MoleculeData | { error: string })[]> {
    return this.spread(inchis, (slice) => this.fingerprintsOnOneWorker(slice));
  }

  /**
   * A batch of InChIs on one worker. A batch that crashes its worker is done again one InChI at a time,
   * so that only the InChI that crashes it is refused.
   */
  private async fingerprintsOnOneWorker(inchis: string[]): Promise<(MoleculeData | { error: string })[]> {
    try {
      return (await this.run<{ molecules: (MoleculeData | { error: string })[] }>({ op: 'fingerprints', inchis }))
        .molecules;
    } catch (error) {
      if (!(error instanceof WorkerCrashed) || error instanceof WorkerDidNotStart) throw error;
      if (inchis.length === 1) return [{ error: `the structure toolkit failed on it (${error.message})` }];
      const one = await Promise.all(inchis.map((inchi) => this.fingerprintsOnOneWorker([inchi])));
      return one.flat();
    }
  }

  /** A substructure query's pattern fingerprint and its heavy atoms, or why it cannot be read. */
  describeQuery(
    type: SubstructureQueryType,
    text: string,
  ): Promise<{ pattern: number[]; heavyAtoms: number } | { unreadable: string }> {
    return this.run({ op: 'query', type, text });
  }

  /**
   * Which of `molecules` contain the query as a substructure, on every worker. A structure goes to the
   * same worker at every search (by its UCI), so that the molecules each keeps read are its own.
   */
  async match(type: SubstructureQueryType, text: string, molecules: StoredMolecule[]): Promise<boolean[]> {
    const shares = Array.from({ length: this.size }, () => [] as number[]);
    molecules.forEach((molecule, i) => shares[molecule.uci % this.size].push(i));
    const matches = new Array<boolean>(molecules.length);
    const keep = Math.floor(this.keptMolecules / this.size);
    await Promise.all(
      shares.map(async (share, w) => {
        if (share.length === 0) return;
        const result = (await this.workers[w].run({
          op: 'match',
          type,
          text,
          ucis: share.map((i) => molecules[i].uci),
          molecules: share.map((i) => molecules[i].molecule),
          keep,
        })) as { matches: boolean[] } | { unreadable: string };
        if ('unreadable' in result) throw new Error(`the query could not be read: ${result.unreadable}`);
        share.forEach((i, k) => (matches[i] = result.matches[k]));
      }),
    );
    return matches;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
  }
}
