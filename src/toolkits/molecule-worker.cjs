// Worker thread: the molecule of a Standard InChI as a chemist draws it, its fingerprints, and
// substructure matches against it. Indigo (WASM) reads the InChI and writes its molfile, which
// drawn.cjs redraws as chemists draw it (mobile hydrogens, salts); RDKit (WASM, which cannot read an
// InChI) reads that molfile and drops the explicit hydrogens but D and T. Plain JavaScript on purpose:
// a worker is started with `node`.
//
// Requests (`{id, request}` in, `{id, result}` out):
//   {op: 'fingerprints', inchis}  -> {molecules: [{morgan, pattern, molecule} | {error}]}: on-bits of the
//                                     Morgan (radius 2, 2048 bits) and pattern (2048 bits) fingerprints,
//                                     and the molecule as RDKit's binary form without coordinates (base64)
//   {op: 'query', type, text}     -> {pattern, heavyAtoms} | {unreadable}: a substructure query
//   {op: 'match', type, text, ucis, molecules, keep} -> {matches: [boolean]}: which molecules contain the
//                                     query or one of its tautomers (query-tautomers.cjs); the worker
//                                     keeps up to `keep` of them read (see `LowestUcis`)
const { parentPort, workerData } = require('node:worker_threads');
const initIndigo = require('indigo-ketcher/jsNoRender');
const initRDKitModule = require('@rdkit/rdkit');
const { drawnMolfile, readInchi } = require('./drawn.cjs');

const morganParameters = JSON.stringify({ radius: 2, nBits: 2048 });
const patternParameters = JSON.stringify({ nBits: 2048 });
// RDKit's defaults, as MolFromInchi uses them: hydrogen isotopes (D, T) stay in the molecule.
const removeHsParameters = JSON.stringify({});
// The stored molecule leaves out the conformer RDKit reads from the molfile (Indigo writes every atom at
// 0, 0, 0): a match never reads it, and without it the molecule is 2.5 times smaller and a third
// faster to read back.
const pickleOptions = JSON.stringify({ propertyFlags: { NoConformers: true } });

/**
 * Emscripten's options to instantiate a module from `module`, a WebAssembly.Module compiled once by the
 * parent (molecules.ts) and shared by its workers, which then share its compiled code.
 */
const sharedModule = (module) =>
  module && {
    instantiateWasm(imports, receive) {
      globalThis.WebAssembly.instantiate(module, imports).then((instance) => receive(instance, module));
      return {};
    },
  };

const ready = Promise.all([
  initIndigo(sharedModule(workerData?.indigo)),
  initRDKitModule(sharedModule(workerData?.rdkit)),
]).then(([indigo, rdkit]) => {
  const options = new indigo.MapStringString();
  options.set('input-format', 'inchi');
  return { indigo, rdkit, options, log: rdkit.set_log_capture('rdApp.*') };
});
ready.then(() => parentPort.postMessage({ ready: true }));

/** The positions of the 1s of a fingerprint written as a string of 0s and 1s. */
function onBits(bits) {
  const on = [];
  for (let i = bits.indexOf('1'); i !== -1; i = bits.indexOf('1', i + 1)) on.push(i);
  return on;
}

function moleculeOf({ indigo, rdkit, options }, inchi) {
  let molfile;
  try {
    molfile = readInchi((text) => indigo.convert(text, 'molfile', options), inchi).result;
  } catch (error) {
    return { error: `the InChI library could not rebuild the structure: ${error.message ?? error}` };
  }
  const drawn = drawnMolfile(molfile, inchi);
  const mol = rdkit.get_mol(drawn.molfile);
  if (!mol || !mol.is_valid()) {
    if (mol) mol.delete();
    return { error: 'RDKit could not read the molecule Indigo rebuilt from the InChI' };
  }
  // Indigo writes most molecules' hydrogens implicit, and then RemoveHs, a tenth of a structure's
  // time, changes nothing (fingerprints and binary form alike, on 4,280 structures of 5,000).
  if (drawn.explicitHydrogens) mol.remove_hs_in_place(removeHsParameters);
  return { mol };
}

function fingerprints(toolkits, inchis) {
  return {
    molecules: inchis.map((inchi) => {
      const { mol, error } = moleculeOf(toolkits, inchi);
      if (error) return { error };
      try {
        return {
          morgan: onBits(mol.get_morgan_fp(morganParameters)),
          pattern: onBits(mol.get_pattern_fp(patternParameters)),
          molecule: Buffer.from(mol.get_as_uint8array(pickleOptions)).toString('base64'),
        };
      } finally {
        mol.delete();
      }
    }),
  };
}

// The query's side: what a substructure query matches, with the tautomers of its groups.
const { tautomerAlternatives } = require('./query-tautomers.cjs');

// A tautomer's SMILES (query-tautomers.cjs) is read with the atoms of the query, explicit hydrogens included.
const tautomerDetails = JSON.stringify({ removeHs: false });

/**
 * The query of a SMILES, SMARTS or molfile: the molecule read (`query`), the tautomers it also matches
 * (`alternatives`, query-tautomers.cjs; none for a SMARTS, which is matched literally) and the on-bits
 * of the pattern fingerprint that every molecule matching any of them holds (`pattern`). The last one
 * is kept, as a search asks for it again and again.
 */
let cached = { key: undefined, query: undefined, alternatives: [], pattern: [] };
function queryOf({ rdkit, log }, type, text) {
  const key = `${type}\n${text}`;
  if (cached.key === key) return cached;
  for (const mol of [cached.query, ...cached.alternatives]) mol?.delete();
  cached = { key: undefined, query: undefined, alternatives: [], pattern: [] };
  if (type === 'molfile' && !/^M {2}END\s*$/m.test(text))
    return { unreadable: 'a molfile ends with the line "M  END", and this text has none' };
  if (type !== 'molfile' && /[\r\n]/.test(text))
    return { unreadable: `a ${type.toUpperCase()} is a single line of text` };
  log.clear_buffer();
  const query = type === 'smarts' ? rdkit.get_qmol(text) : rdkit.get_mol(text);
  if (!query || !query.is_valid()) {
    if (query) query.delete();
    const reason = log
      .get_buffer()
      .split('\n')
      .map((line) => line.replace(/^\[[\d:]+\] ?/, '').trim())[0];
    return { unreadable: reason || 'the toolkit gives no reason' };
  }
  // A molecule matching an alternative holds the bits of that tautomer's pattern fingerprint: the
  // bits every alternative shares with the query screen for them all.
  let pattern = new Set(onBits(query.get_pattern_fp(patternParameters)));
  const alternatives = [];
  for (const { smiles, smarts } of type === 'smarts' ? [] : tautomerAlternatives(rdkit, query)) {
    const tautomer = rdkit.get_mol(smiles, tautomerDetails);
    const alternative = tautomer && rdkit.get_qmol(smarts);
    if (tautomer && alternative) {
      const bits = new Set(onBits(tautomer.get_pattern_fp(patternParameters)));
      pattern = new Set([...pattern].filter((bit) => bits.has(bit)));
      alternatives.push(alternative);
    } else alternative?.delete();
    tautomer?.delete();
  }
  cached = { key, query, alternatives, pattern: [...pattern] };
  return cached;
}

function describeQuery(toolkits, type, text) {
  const { query, pattern, unreadable } = queryOf(toolkits, type, text);
  if (unreadable) return { unreadable };
  const json = JSON.parse(query.get_json());
  const z = json.defaults?.atom?.z ?? 6;
  const heavyAtoms = json.molecules[0].atoms.filter((atom) => (atom.z ?? z) !== 1).length;
  return { heavyAtoms, pattern };
}

/**
 * Molecules already read from their binary form, by UCI, at most `keep` of them: those of the lowest
 * UCIs. Reading a molecule costs ten times what matching it does, and every substructure search reads
 * its candidates from the lowest UCI up, so those are the molecules searches check again and again.
 * An entry is used only when its binary form is the candidate's (a UCI whose molecule was computed
 * again is read again).
 */
class LowestUcis {
  constructor() {
    this.byUci = new Map();
    this.heap = []; // the UCIs held, a max-heap: the first is the one given up for a lower one
  }

  /** The molecule of `uci` in this binary form, read and kept when it is among the lowest `keep`. */
  molecule(rdkit, uci, pickle, keep) {
    const held = this.byUci.get(uci);
    if (held?.pickle === pickle) return { mol: held.mol, kept: true };
    const mol = rdkit.get_mol_from_uint8array(Buffer.from(pickle, 'base64'));
    if (!mol) return { mol: null, kept: false };
    if (held) {
      held.mol.delete();
      this.byUci.set(uci, { pickle, mol });
      return { mol, kept: true };
    }
    while (this.heap.length > Math.max(0, keep - 1) && this.heap[0] > uci) this.giveUpHighest();
    if (this.heap.length >= keep) return { mol, kept: false };
    this.byUci.set(uci, { pickle, mol });
    this.push(uci);
    return { mol, kept: true };
  }

  giveUpHighest() {
    const uci = this.heap[0];
    this.byUci.get(uci).mol.delete();
    this.byUci.delete(uci);
    const last = this.heap.pop();
    if (this.heap.length === 0) return;
    this.heap[0] = last;
    for (let i = 0; ;) {
      const [left, right] = [2 * i + 1, 2 * i + 2];
      let top = i;
      if (left < this.heap.length && this.heap[left] > this.heap[top]) top = left;
      if (right < this.heap.length && this.heap[right] > this.heap[top]) top = right;
      if (top === i) return;
      [this.heap[i], this.heap[top]] = [this.heap[top], this.heap[i]];
      i = top;
    }
  }

  push(uci) {
    this.heap.push(uci);
    for (let i = this.heap.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (this.heap[parent] >= this.heap[i]) return;
      [this.heap[i], this.heap[parent]] = [this.heap[parent], this.heap[i]];
      i = parent;
    }
  }
}
const kept = new LowestUcis();

function match(toolkits, { type, text, ucis, molecules, keep }) {
  const { query, alternatives, unreadable } = queryOf(toolkits, type, text);
  if (unreadable) return { unreadable };
  return {
    matches: molecules.map((molecule, i) => {
      if (!molecule) return false;
      const { mol, kept: isKept } = kept.molecule(toolkits.rdkit, ucis[i], molecule, keep);
      if (!mol) return false;
      try {
        return [query, ...alternatives].some((form) => mol.get_substruct_match(form) !== '{}');
      } finally {
        if (!isKept) mol.delete();
      }
    }),
  };
}

parentPort.on('message', ({ id, request }) => {
  ready.then((toolkits) => {
    let result;
    try {
      if (request.op === 'fingerprints') result = fingerprints(toolkits, request.inchis);
      else if (request.op === 'query') result = describeQuery(toolkits, request.type, request.text);
      else result = match(toolkits, request);
    } catch (error) {
      // An exception of a WASM module leaves it unusable: the parent replaces the worker.
      setImmediate(() => {
        throw error;
      });
      return;
    }
    parentPort.postMessage({ id, result });
  });
});
