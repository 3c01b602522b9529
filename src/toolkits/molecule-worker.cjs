// Worker thread: the molecule the InChI library builds from a Standard InChI, its fingerprints, and
// substructure matches against it. Indigo (WASM) reads the InChI and writes its molfile, whose charges
// are redrawn as the InChI library draws them; RDKit (WASM, which cannot read an InChI) reads that
// molfile and drops the explicit hydrogens but D and T, which gives the molecule RDKit's MolFromInchi
// gives. Plain JavaScript on purpose: a worker is started with `node`.
//
// Requests (`{id, request}` in, `{id, result}` out):
//   {op: 'fingerprints', inchis}  -> {molecules: [{morgan, pattern, molecule} | {error}]}: on-bits of the
//                                     Morgan (radius 2, 2048 bits) and pattern (2048 bits) fingerprints,
//                                     and the molecule as RDKit's binary form without coordinates (base64)
//   {op: 'query', type, text}     -> {pattern, heavyAtoms} | {unreadable}: a substructure query
//   {op: 'match', type, text, ucis, molecules, keep} -> {matches: [boolean]}: which molecules contain the
//                                     query; the worker keeps up to `keep` of them read (see `LowestUcis`)
const { parentPort } = require('node:worker_threads');
const initIndigo = require('indigo-ketcher/jsNoRender');
const initRDKitModule = require('@rdkit/rdkit');

const morganParameters = JSON.stringify({ radius: 2, nBits: 2048 });
const patternParameters = JSON.stringify({ nBits: 2048 });
// RDKit's defaults, as MolFromInchi uses them: hydrogen isotopes (D, T) stay in the molecule.
const removeHsParameters = JSON.stringify({});
// The stored molecule leaves out the conformer RDKit reads from the molfile (Indigo writes every atom at
// 0, 0, 0): a match never reads it, and without it the molecule is 2.5 times smaller and a third
// faster to read back.
const pickleOptions = JSON.stringify({ propertyFlags: { NoConformers: true } });

const ready = Promise.all([initIndigo(), initRDKitModule()]).then(([indigo, rdkit]) => {
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

/** A V2000 molfile's atoms, bonds and charges, to redraw bonds and charges in place; undefined for V3000. */
function molfileGraph(molfile) {
  const lines = molfile.split('\n');
  if (!/V2000/.test(lines[3] ?? '')) return undefined;
  // the counts line is fixed-width: "120130" is 120 atoms and 130 bonds
  const [atoms, bonds] = [Number(lines[3].slice(0, 3)), Number(lines[3].slice(3, 6))];
  const charges = new Map();
  for (const line of lines)
    if (line.startsWith('M  CHG'))
      for (let k = 0, f = line.slice(9).trim().split(/\s+/); k + 1 < f.length; k += 2)
        charges.set(Number(f[k]), Number(f[k + 1]));
  const valence = new Array(atoms + 1).fill(0);
  const bondsOf = Array.from({ length: atoms + 1 }, () => []);
  for (let b = 0; b < bonds; b += 1) {
    const at = 4 + atoms + b;
    const [x, y, order] = [Number(lines[at].slice(0, 3)), Number(lines[at].slice(3, 6)), Number(lines[at].slice(6, 9))];
    const bond = { at, x, y, order };
    valence[x] += order;
    valence[y] += order;
    bondsOf[x].push(bond);
    bondsOf[y].push(bond);
  }
  const element = (a) => lines[3 + a].slice(31, 34).trim();
  return {
    atoms,
    charges,
    valence,
    bondsOf,
    element,
    hasHydrogens() {
      for (let a = 1; a <= atoms; a += 1) if (element(a) === 'H') return true;
      return false;
    },
    /** Gives atom `a` no hydrogens: the atom block's valence field, 15 meaning none beyond its bonds. */
    withoutHydrogens(a) {
      lines[3 + a] = `${lines[3 + a].slice(0, 48)} 15${lines[3 + a].slice(51)}`;
    },
    charge: (a) => charges.get(a) ?? 0,
    across: (bond, a) => (bond.x === a ? bond.y : bond.x),
    setOrder(bond, order) {
      lines[bond.at] = `${lines[bond.at].slice(0, 6)}${String(order).padStart(3)}${lines[bond.at].slice(9)}`;
      valence[bond.x] += order - bond.order;
      valence[bond.y] += order - bond.order;
      bond.order = order;
    },
    molfile() {
      const kept = lines.filter((line) => !line.startsWith('M  CHG') && line.trim() !== 'M  END');
      const entries = [...charges].filter(([, value]) => value !== 0);
      for (let k = 0; k < entries.length; k += 8) {
        const part = entries.slice(k, k + 8);
        kept.push(
          `M  CHG${String(part.length).padStart(3)}${part.map(([a, c]) => `${String(a).padStart(4)}${String(c).padStart(4)}`).join('')}`,
        );
      }
      return `${kept.join('\n')}\nM  END\n`;
    },
  };
}

/**
 * Separates the charges of neutral pentavalent nitrogens, as the InChI library's own reconstruction
 * draws them: Indigo writes a pyridinium ylide as C=N(=C), which RDKit refuses. One double bond of
 * each such N (to O first, then N, then C) becomes single, with N+ and the other atom −. A carbanion's
 * charge moves along the shortest alternating path (single, double, single, ...) to an oxygen, else to
 * a nitrogen, as the InChI library puts it (C−–C=C–C=O → C=C–C=C–O−); of the N's double bonds to C,
 * the one whose charge ends on O is broken first, then on N, then the shortest. Returns the atoms it
 * made negative.
 */
const [longestToOxygen, longestToNitrogen] = [6, 2];
function separateCharges(graph) {
  const { atoms, charges, valence, bondsOf, element, charge, across, setOrder } = graph;
  const rank = (a) => ['O', 'N', 'C'].indexOf(element(a));
  /**
   * Where a negative charge on `start` moves: the shortest alternating path to O (of up to 6 bonds),
   * else to N (of 2), never through `n`. The InChI library leaves it on the carbon past those lengths:
   * on the 500k set, longer paths gave 5 fingerprints unlike RDKit's for 4 more like them.
   */
  const destination = (start, n) => {
    let toNitrogen;
    const reached = new Set([start, n]);
    for (let level = [{ atom: start, path: [] }]; level.length > 0 && level[0].path.length < longestToOxygen;) {
      const next = [];
      for (const { atom, path } of level)
        for (const single of bondsOf[atom]) {
          const middle = across(single, atom);
          if (single.order !== 1 || reached.has(middle) || charge(middle) !== 0) continue;
          for (const double of bondsOf[middle]) {
            const end = across(double, middle);
            if (double.order !== 2 || reached.has(end) || charge(end) !== 0) continue;
            reached.add(end);
            const found = { end, path: [...path, single, double] };
            if (element(end) === 'O') return found;
            if (element(end) === 'N' && found.path.length <= longestToNitrogen) toNitrogen ??= found;
            next.push({ atom: end, path: found.path });
          }
        }
      level = next;
    }
    return toNitrogen ?? { end: start, path: [] };
  };
  const negatives = new Set();
  for (let n = 1; n <= atoms; n += 1) {
    if (element(n) !== 'N' || charge(n) !== 0 || valence[n] < 5) continue;
    const choice = bondsOf[n]
      .filter((bond) => bond.order === 2)
      .map((bond) => ({ bond, other: across(bond, n) }))
      .filter(({ other }) => rank(other) >= 0 && charge(other) === 0)
      .map((option) => ({
        ...option,
        ...(element(option.other) === 'C' ? destination(option.other, n) : { end: option.other, path: [] }),
      }))
      .sort((p, q) => rank(p.other) - rank(q.other) || rank(p.end) - rank(q.end) || p.path.length - q.path.length)[0];
    if (!choice) continue;
    setOrder(choice.bond, 1);
    charges.set(n, 1);
    for (const bond of choice.path) setOrder(bond, 3 - bond.order);
    charges.set(choice.end, -1);
    negatives.add(choice.end);
  }
  return negatives;
}

/**
 * Cancels pairs of opposite charges joined by alternating bonds (a negative atom, a single bond, a
 * double, ..., a double into a positive atom: the bonds between flip and both atoms become neutral),
 * where the InChI library draws fewer charges than Indigo:
 * - a negative charge `separateCharges` placed, with any positive atom (a 3-hydroxypyridinium:
 *   Indigo's [OH+]=C and the [CH-] of its ylide);
 * - two N-oxides (O−–N+=C–C=N+–O−, as in a quinoxaline 1,4-dioxide), which keep one pair
 *   (O=N+–C=C–N–O−): the higher-numbered oxygen goes first. N-oxides bonded to each other
 *   (O−–N+=N+–O−) keep both.
 * Other charges Indigo writes stay, as the InChI library keeps them (`C(=[OH+])[N-]`). Paths of up to
 * 6 bonds: on the 500k set, 4 or 10 left 20 or 5 more fingerprints unlike RDKit's. True when it changed.
 */
const longestBetweenCharges = 6;
function cancelCharges(graph, separated) {
  const { atoms, charges, bondsOf, element, charge, across, setOrder } = graph;
  const nOxideOxygen = (o) =>
    element(o) === 'O' &&
    charge(o) === -1 &&
    bondsOf[o].length === 1 &&
    element(across(bondsOf[o][0], o)) === 'N' &&
    charge(across(bondsOf[o][0], o)) === 1;
  const nOxideNitrogen = (n) =>
    element(n) === 'N' && charge(n) === 1 && bondsOf[n].some((bond) => nOxideOxygen(across(bond, n)));
  /** The shortest alternating path, single bond first, from `start` into an atom where it `ends`. */
  const partner = (start, ends) => {
    const reached = new Set([start]);
    for (let level = [{ atom: start, path: [] }]; level.length > 0 && level[0].path.length < longestBetweenCharges;) {
      const next = [];
      for (const { atom, path } of level)
        for (const bond of bondsOf[atom]) {
          const end = across(bond, atom);
          if (bond.order !== (path.length % 2 === 0 ? 1 : 2) || reached.has(end)) continue;
          reached.add(end);
          const found = { end, path: [...path, bond] };
          if (bond.order === 2 && ends(end, found.path)) return found;
          if (charge(end) >= 0) next.push({ atom: end, path: found.path });
        }
      level = next;
    }
    return undefined;
  };
  let changed = false;
  for (let negative = atoms; negative >= 1; negative -= 1) {
    const ends = separated.has(negative)
      ? (a) => charge(a) === 1
      : nOxideOxygen(negative) && ((a, path) => path.length >= 4 && nOxideNitrogen(a));
    const found = ends && charge(negative) === -1 && partner(negative, ends);
    if (!found) continue;
    for (const bond of found.path) setOrder(bond, 3 - bond.order);
    charges.set(negative, 0);
    charges.set(found.end, 0);
    changed = true;
  }
  return changed;
}

/**
 * Gives no hydrogens to the lone atoms that the InChI's formula writes without any (`Mg` in
 * `C18H20N2O3S.Mg`): the InChI library draws them so (a radical), but Indigo writes a bare atom, to
 * which RDKit gives its default valence in hydrogens (`[MgH2]`). An element that the formula also
 * writes as a hydride (`BH3`) is left alone. True when it changed.
 */
function unhydrogenateLoneAtoms(graph, inchi) {
  const components = (inchi.split('/')[1] ?? '').split('.').map((part) => part.replace(/^\d+/, ''));
  const bare = new Set(components.filter((part) => /^[A-Z][a-z]?$/.test(part)));
  for (const part of components) bare.delete(/^(?:H\d*([A-Z][a-z]?)|([A-Z][a-z]?)H\d*)$/.exec(part)?.slice(1).join(''));
  let changed = false;
  for (let a = 1; a <= graph.atoms; a += 1) {
    if (graph.bondsOf[a].length > 0 || !bare.has(graph.element(a))) continue;
    graph.withoutHydrogens(a);
    changed = true;
  }
  return changed;
}

/**
 * Redraws Indigo's molfile of an InChI, as its `graph`, as the InChI library draws it (see above). True
 * when it changed. A change to what it gives raises `moleculeDerivation` (molecules.ts).
 */
function redrawAsTheInChILibrary(graph, inchi) {
  const separated = separateCharges(graph);
  const cancelled = cancelCharges(graph, separated);
  const unhydrogenated = unhydrogenateLoneAtoms(graph, inchi);
  return cancelled || unhydrogenated || separated.size > 0;
}

function moleculeOf({ indigo, rdkit, options }, inchi) {
  let molfile;
  try {
    molfile = indigo.convert(inchi, 'molfile', options);
  } catch (error) {
    return { error: `the InChI library could not rebuild the structure: ${error.message ?? error}` };
  }
  const graph = molfileGraph(molfile);
  const mol = rdkit.get_mol(graph && redrawAsTheInChILibrary(graph, inchi) ? graph.molfile() : molfile);
  if (!mol || !mol.is_valid()) {
    if (mol) mol.delete();
    return { error: 'RDKit could not read the molecule Indigo rebuilt from the InChI' };
  }
  // Indigo writes most molecules' hydrogens implicit, and then RemoveHs, a tenth of a structure's
  // time, changes nothing (fingerprints and binary form alike, on 4,280 structures of 5,000).
  if (!graph || graph.hasHydrogens()) mol.remove_hs_in_place(removeHsParameters);
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

/** The query molecule of a SMILES, SMARTS or molfile; the last one is kept, as a search asks for it again and again. */
let cached = { key: undefined, query: undefined };
function queryOf({ rdkit, log }, type, text) {
  const key = `${type}\n${text}`;
  if (cached.key === key) return cached;
  if (cached.query) cached.query.delete();
  cached = { key: undefined, query: undefined };
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
  cached = { key, query };
  return cached;
}

function describeQuery(toolkits, type, text) {
  const { query, unreadable } = queryOf(toolkits, type, text);
  if (unreadable) return { unreadable };
  const json = JSON.parse(query.get_json());
  const z = json.defaults?.atom?.z ?? 6;
  const heavyAtoms = json.molecules[0].atoms.filter((atom) => (atom.z ?? z) !== 1).length;
  return { heavyAtoms, pattern: onBits(query.get_pattern_fp(patternParameters)) };
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
  const { query, unreadable } = queryOf(toolkits, type, text);
  if (unreadable) return { unreadable };
  return {
    matches: molecules.map((molecule, i) => {
      if (!molecule) return false;
      const { mol, kept: isKept } = kept.molecule(toolkits.rdkit, ucis[i], molecule, keep);
      if (!mol) return false;
      try {
        return mol.get_substruct_match(query) !== '{}';
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
