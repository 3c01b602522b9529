// The tautomers a substructure query also matches. Stored molecules are drawn as chemists draw them
// (drawn.cjs), one tautomer each, but a query is a pattern: it cannot go through an InChI to be drawn
// the same way. So a SMILES or molfile query also matches the other tautomers of its groups, each an
// alternative written as a SMARTS (a SMARTS query is matched literally, and gets none):
//   - a hydrogen on N, O or S moves to an N, O or S that a double bond joins to the same carbon or
//     nitrogen (1,3: amide and iminol, lactam and lactim, 2-pyridone and 2-hydroxypyridine, amidines,
//     guanidines, ureas, thioamides, aminoazines and their imines, the NH of imidazoles), or along
//     X–C=C–C=Y when the bonds C=C–C lie in a ring (1,5: 4-pyridones, 4-quinolones, pyrazoles,
//     tetrazoles); the bonds of the path flip, aromatic ones staying aromatic, and RDKit reads the
//     result again (kekulizing and aromatizing it: a form it refuses does not exist);
//   - a charge-separated [S+]–[O−] (P, As, Se, Te, Cl, Br, I; also [P+]–[S−], [P+]–[N−]) is also S=O,
//     and an X=O also [X+]–[O−];
//   - a nitrogen's cation moves to a nitrogen of three bonds across [N+]=C–N, or along [N+]=C–C=C–N
//     in a ring (amidiniums, imidazoliums, 4-aminopyridiniums: sources put the charge on either).
// The atom that gains a hydrogen must hold one in the structure matched, and the atom that gives it
// no more neighbours than its remaining hydrogens allow: `C(=O)N` also matches C(–OH)=N, never an
// imidate C(–OC)=N, and a 2-pyridone's tautomer is a 2-hydroxypyridine, not an N-alkyl pyridinium.
// Otherwise an alternative matches as RDKit matches a molecule used as a query: element, a charge or
// isotope where the query has one, bonds by type, hydrogens not at all. Plain JavaScript, for the
// worker that matches queries (molecule-worker.cjs), and callable outside it.

/** How many alternatives a query gets at most, besides one for each group on its own. */
const maxAlternatives = 16;
/** A query of more atoms than this is matched literally (its alternatives would cost more than they find). */
const maxAtoms = 1000;

const [nitrogen, oxygen, sulfur] = [7, 8, 16];
const mobileHydrogenAtoms = new Set([nitrogen, oxygen, sulfur]);
/** The atoms between the donor and the acceptor of a moving hydrogen. */
const pathAtoms = new Set([6, nitrogen]);
/** Atoms drawn X=O or [X+]–[O−] alike: P, S, Cl, As, Se, Br, Te, I. */
const oxideAtoms = new Set([15, 16, 17, 33, 34, 35, 52, 53]);
/** The partners such an atom is also drawn with charges separated: [P+]–[O−], [P+]–[S−], [P+]–[N−]. */
const separatedAtoms = new Set([oxygen, sulfur, nitrogen]);
/** Elements RDKit reads in lower case, as aromatic atoms of a SMILES. */
const aromaticSymbols = new Set(['B', 'C', 'N', 'O', 'P', 'S', 'As', 'Se', 'Te']);

const symbols = (
  'H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr Rb Sr Y Zr ' +
  'Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir ' +
  'Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf Db Sg Bh Hs Mt Ds Rg Cn Nh Fl ' +
  'Mc Lv Ts Og'
).split(' ');

/**
 * The atoms and bonds of a molecule from RDKit's JSON: element `z`, charge `chg`, hydrogens `h`,
 * `isotope`, `aromatic`, and the number of rings of each atom (`rings`); bonds' `order` (1 to 3,
 * Kekulé) and `aromatic`. Undefined when it holds what an alternative cannot be written with (dummy
 * atoms, radicals, bonds of other types, more than one molecule).
 */
function graphOf(json) {
  if (json.molecules?.length !== 1) return undefined;
  const [molecule] = json.molecules;
  const atomDefaults = json.defaults?.atom ?? {};
  const bondDefaults = json.defaults?.bond ?? {};
  const representation = (molecule.extensions ?? []).find((e) => e.name === 'rdkitRepresentation') ?? {};
  const aromaticAtoms = new Set(representation.aromaticAtoms ?? []);
  const aromaticBonds = new Set(representation.aromaticBonds ?? []);
  const atoms = molecule.atoms.map((atom, i) => ({
    z: atom.z ?? atomDefaults.z ?? 6,
    chg: atom.chg ?? atomDefaults.chg ?? 0,
    h: atom.impHs ?? atomDefaults.impHs ?? 0,
    isotope: atom.isotope ?? atomDefaults.isotope ?? 0,
    radicals: atom.nRad ?? atomDefaults.nRad ?? 0,
    aromatic: aromaticAtoms.has(i),
    rings: 0,
  }));
  for (const ring of representation.atomRings ?? []) for (const a of ring) atoms[a].rings += 1;
  const bonds = (molecule.bonds ?? []).map((bond, i) => ({
    a: bond.atoms[0],
    b: bond.atoms[1],
    order: bond.bo ?? bondDefaults.bo ?? 1,
    aromatic: aromaticBonds.has(i),
  }));
  if (atoms.some((atom) => atom.z < 1 || atom.z > symbols.length || atom.radicals !== 0)) return undefined;
  if (bonds.some((bond) => ![1, 2, 3].includes(bond.order))) return undefined;
  return { atoms, bonds };
}

/** Each atom's bonds, as indices into `bonds`. */
function bondsOfAtoms(atomCount, bonds) {
  const of = Array.from({ length: atomCount }, () => []);
  bonds.forEach((bond, i) => {
    of[bond.a].push(i);
    of[bond.b].push(i);
  });
  return of;
}

/** Whether each bond lies in a ring: its atoms are joined without it. */
function ringBonds(atomCount, bonds) {
  const of = bondsOfAtoms(atomCount, bonds);
  return bonds.map((bond, i) => {
    const seen = new Set([bond.a]);
    const queue = [bond.a];
    while (queue.length > 0) {
      const a = queue.pop();
      for (const j of of[a]) {
        if (j === i) continue;
        const b = bonds[j].a === a ? bonds[j].b : bonds[j].a;
        if (b === bond.b) return true;
        if (!seen.has(b)) {
          seen.add(b);
          queue.push(b);
        }
      }
    }
    return false;
  });
}

/**
 * A line notation of a graph, depth first, with `atomText(a)` and `bondText(i)`: a SMILES or a
 * SMARTS. Also the atoms in the order written, which is the order RDKit numbers them when it reads it.
 */
function lineOf(atomCount, bonds, atomText, bondText) {
  const of = bondsOfAtoms(atomCount, bonds);
  const across = (i, a) => (bonds[i].a === a ? bonds[i].b : bonds[i].a);
  const rank = new Array(atomCount).fill(-1);
  const order = [];
  const treeBond = new Array(atomCount).fill(-1);
  // First pass: the depth-first tree, to know which bonds close rings.
  for (let start = 0; start < atomCount; start += 1) {
    if (rank[start] !== -1) continue;
    const stack = [start];
    while (stack.length > 0) {
      const a = stack.pop();
      if (rank[a] !== -1) continue;
      rank[a] = order.length;
      order.push(a);
      for (let k = of[a].length - 1; k >= 0; k -= 1) {
        const b = across(of[a][k], a);
        if (rank[b] === -1) {
          treeBond[b] = of[a][k];
          stack.push(b);
        }
      }
    }
  }
  // A tree bond is the one that reached its atom first in the order above; the others close rings.
  const isTree = new Set(treeBond.filter((i) => i !== -1));
  const children = Array.from({ length: atomCount }, () => []);
  for (const a of order) if (treeBond[a] !== -1) children[across(treeBond[a], a)].push(a);
  const closures = Array.from({ length: atomCount }, () => []);
  bonds.forEach((bond, i) => {
    if (isTree.has(i)) return;
    const [first, second] = rank[bond.a] < rank[bond.b] ? [bond.a, bond.b] : [bond.b, bond.a];
    closures[first].push({ bond: i, opens: true });
    closures[second].push({ bond: i, opens: false });
  });
  for (const list of closures) list.sort((p, q) => Number(q.opens) - Number(p.opens));
  const labels = new Map();
  const free = [];
  let nextLabel = 1;
  const label = (n) => (n < 10 ? String(n) : `%${n}`);
  const parts = [];
  const write = (a) => {
    parts.push(atomText(a));
    for (const { bond, opens } of closures[a]) {
      if (opens) {
        const n = free.length > 0 ? free.shift() : nextLabel++;
        labels.set(bond, n);
        parts.push(bondText(bond), label(n));
      } else {
        const n = labels.get(bond);
        parts.push(label(n));
        free.push(n);
        free.sort((p, q) => p - q);
      }
    }
    children[a].forEach((child, k) => {
      const branch = k < children[a].length - 1;
      if (branch) parts.push('(');
      parts.push(bondText(treeBond[child]));
      write(child);
      if (branch) parts.push(')');
    });
  };
  order.forEach((a) => {
    if (treeBond[a] !== -1) return;
    if (parts.length > 0) parts.push('.');
    write(a);
  });
  return { text: parts.join(''), order };
}

const chargeText = (chg) => (chg === 0 ? '' : `${chg > 0 ? '+' : '-'}${Math.abs(chg)}`);

/** A state as a SMILES RDKit reads back: every atom bracketed, with its hydrogens. */
function smilesOf(state) {
  return lineOf(
    state.atoms.length,
    state.bonds,
    (a) => {
      const atom = state.atoms[a];
      const symbol = symbols[atom.z - 1];
      const written = atom.aromatic && aromaticSymbols.has(symbol) ? symbol.toLowerCase() : symbol;
      const hydrogens = atom.h === 0 ? '' : atom.h === 1 ? 'H' : `H${atom.h}`;
      return `[${atom.isotope || ''}${written}${hydrogens}${chargeText(atom.chg)}]`;
    },
    (i) => (state.bonds[i].aromatic ? ':' : ['-', '=', '#'][state.bonds[i].order - 1]),
  );
}

/**
 * An alternative as a SMARTS that matches as RDKit matches a molecule used as a query (element; charge,
 * isotope where set; at least as many rings per atom; bonds by type), besides: an atom that gained
 * `gained[a]` hydrogens holds at least that many, and an atom that gave one has `connections[a]`
 * neighbours and hydrogens in all, as in the tautomer (no more substituents than its hydrogens allow:
 * the N of a 2-hydroxypyridine, not of an N-alkyl pyridone).
 */
function smartsOf(graph, gained, connections) {
  return lineOf(
    graph.atoms.length,
    graph.bonds,
    (a) => {
      const atom = graph.atoms[a];
      const primitives = [`${atom.isotope || ''}#${atom.z}`];
      if (atom.chg !== 0) primitives.push(chargeText(atom.chg));
      for (let n = 0; n < atom.rings; n += 1) primitives.push(`!R${n}`);
      for (let n = 0; n < gained[a]; n += 1) primitives.push(`!H${n}`);
      if (connections[a] !== undefined) primitives.push(`X${connections[a]}`);
      return `[${primitives.join(';')}]`;
    },
    (i) => (graph.bonds[i].aromatic ? ':' : ['-', '=', '#'][graph.bonds[i].order - 1]),
  ).text;
}

/**
 * The moves of mobile hydrogens and charges in a state: `{bonds, donor, acceptor}` for a hydrogen
 * (the path's bonds in order, from the donor), `{bonds, cation, acceptor}` for a nitrogen's charge,
 * `{oxide, bond}` for an X=O or [X+]–[O−] to redraw.
 */
function movesOf(state, inRing, of) {
  const { atoms, bonds } = state;
  const across = (i, a) => (bonds[i].a === a ? bonds[i].b : bonds[i].a);
  // A bond that can act as single (`1`) or double (`2`) along a path: its order, or either when aromatic.
  const acts = (i, order) => bonds[i].aromatic || bonds[i].order === order;
  const plain = (a) => atoms[a].chg === 0 && atoms[a].isotope === 0;
  // Two atoms of one element ending a 1,3 path, bonded to nothing else (the oxygens of a carboxylic
  // acid, the nitrogens of C(=N)N): the hydrogen moved between them gives the query itself again.
  const alike = (x, y) => atoms[x].z === atoms[y].z && of[x].length === 1 && of[y].length === 1;
  /**
   * The alternating paths of 2 bonds or 4 from atom `x`, the first acting as `first` (1 or 2), through
   * plain carbons and nitrogens, a 4-bond path's middle bonds in a ring (4-pyridones, azoles):
   * `{path, end}` each, `path` the bonds in order.
   */
  const pathsFrom = (x, first) => {
    const found = [];
    const extend = (path, at, visited) => {
      const want = path.length % 2 === 0 ? first : 3 - first;
      for (const i of of[at]) {
        const next = across(i, at);
        if (visited.has(next) || !acts(i, want)) continue;
        if (path.length === 1 || path.length === 3) found.push({ path: [...path, i], end: next });
        if (path.length >= 3 || !pathAtoms.has(atoms[next].z) || !plain(next)) continue;
        if ((path.length === 1 || path.length === 2) && !inRing[i]) continue;
        extend([...path, i], next, new Set([...visited, next]));
      }
    };
    for (const i of of[x]) {
      const m = across(i, x);
      if (acts(i, first) && pathAtoms.has(atoms[m].z) && plain(m)) extend([i], m, new Set([x, m]));
    }
    return found;
  };
  const moves = [];
  // A hydrogen moves 1,3 (single, double) or 1,5 (single, double, single, double).
  atoms.forEach((donor, x) => {
    if (!mobileHydrogenAtoms.has(donor.z) || donor.h === 0 || donor.chg !== 0) return;
    for (const { path, end } of pathsFrom(x, 1))
      if (mobileHydrogenAtoms.has(atoms[end].z) && plain(end) && (path.length === 4 || !alike(x, end)))
        moves.push({ bonds: path, donor: x, acceptor: end });
  });
  // A cation's charge moves from a nitrogen across N=C–N (an amidinium, an imidazolium, a fused
  // azolium) or along N=C–C=C–N in a ring (a 4-aminopyridinium) to a nitrogen of three bonds: the
  // same cation, drawn with its charge on the other nitrogen.
  const lonePair = (a) =>
    atoms[a].z === nitrogen && plain(a) && of[a].length + atoms[a].h === 3 && of[a].every((i) => acts(i, 1));
  atoms.forEach((cation, x) => {
    if (cation.z !== nitrogen || cation.chg !== 1 || cation.isotope !== 0) return;
    for (const { path, end } of pathsFrom(x, 2))
      if (atoms[across(path[0], x)].z === 6 && lonePair(end)) moves.push({ bonds: path, cation: x, acceptor: end });
  });
  bonds.forEach((bond, i) => {
    if (bond.aromatic) return;
    for (const [x, y] of [
      [bond.a, bond.b],
      [bond.b, bond.a],
    ]) {
      if (!oxideAtoms.has(atoms[x].z)) continue;
      if (bond.order === 1 && separatedAtoms.has(atoms[y].z) && atoms[y].chg === -1 && atoms[x].chg >= 1)
        moves.push({ oxide: x, bond: i });
      if (bond.order === 2 && atoms[y].z === oxygen && of[y].length === 1 && atoms[y].chg === 0 && atoms[x].chg >= 0)
        moves.push({ oxide: x, bond: i });
    }
  });
  return moves;
}

/**
 * The state after a move: a hydrogen moved and the path's bonds flipped (aromatic ones stay aromatic),
 * or an oxide redrawn.
 */
function apply(state, move) {
  const atoms = state.atoms.map((atom) => ({ ...atom }));
  const bonds = state.bonds.map((bond) => ({ ...bond }));
  if (move.oxide !== undefined) {
    const bond = bonds[move.bond];
    const o = bond.a === move.oxide ? bond.b : bond.a;
    const separate = bond.order === 2;
    bond.order = separate ? 1 : 2;
    atoms[move.oxide].chg += separate ? 1 : -1;
    atoms[o].chg += separate ? -1 : 1;
  } else if (move.cation !== undefined) {
    for (const i of move.bonds) if (!bonds[i].aromatic) bonds[i].order = 3 - bonds[i].order;
    atoms[move.cation].chg -= 1;
    atoms[move.acceptor].chg += 1;
  } else {
    for (const i of move.bonds) if (!bonds[i].aromatic) bonds[i].order = 3 - bonds[i].order;
    atoms[move.donor].h -= 1;
    atoms[move.acceptor].h += 1;
  }
  return { atoms, bonds };
}

// A state is read with its hydrogens as written, and without the stereochemistry a match ignores
// (which takes most of the time RDKit spends reading it).
const stateDetails = JSON.stringify({ removeHs: false, assignStereo: false, assignCIPLabels: false });

/** What tells two states apart: each atom's hydrogens and charge, each bond's order. */
const keyOf = (state) =>
  `${state.atoms.map((atom) => `${atom.h}${atom.chg}`).join(' ')}|${state.bonds.map((bond) => (bond.aromatic ? 'a' : bond.order)).join('')}`;

/**
 * A state as RDKit reads it back (kekulized and aromatized again) and its SMARTS; undefined when RDKit
 * refuses it (there is no such tautomer).
 */
function realize(rdkit, state, literal) {
  const { text, order } = smilesOf(state);
  const mol = rdkit.get_mol(text, stateDetails);
  if (!mol) return undefined;
  try {
    if (!mol.is_valid() || mol.get_num_atoms() !== state.atoms.length) return undefined;
    const graph = graphOf(JSON.parse(mol.get_json()));
    if (!graph) return undefined;
    // RDKit numbers the atoms in the order written: back to the query's numbering for the next moves.
    const position = new Array(order.length);
    order.forEach((a, i) => (position[a] = i));
    const index = new Map(graph.bonds.map((bond, j) => [`${order[bond.a]} ${order[bond.b]}`, j]));
    const bonds = state.bonds.map((bond) => {
      const j = index.get(`${bond.a} ${bond.b}`) ?? index.get(`${bond.b} ${bond.a}`);
      return { ...graph.bonds[j], a: bond.a, b: bond.b };
    });
    const realized = { atoms: position.map((i) => graph.atoms[i]), bonds };
    const gained = order.map((a) => Math.max(0, realized.atoms[a].h - literal.atoms[a].h));
    const degree = new Array(graph.atoms.length).fill(0);
    for (const bond of graph.bonds) [degree[bond.a], degree[bond.b]] = [degree[bond.a] + 1, degree[bond.b] + 1];
    const connections = order.map((a, i) =>
      realized.atoms[a].h < literal.atoms[a].h ? degree[i] + graph.atoms[i].h : undefined,
    );
    return { state: realized, smiles: text, smarts: smartsOf(graph, gained, connections) };
  } finally {
    mol.delete();
  }
}

/**
 * The alternatives a query molecule (RDKit's, read from a SMILES or molfile) also matches, as
 * `{smiles, smarts}`: a SMILES of the tautomer (for its pattern fingerprint) and the SMARTS that
 * matches it with the hydrogens it gained. Each group moved on its own, then two at a time, three at
 * a time and so on, up to `limit` alternatives (beyond it, only each group on its own), and every
 * group at once as chemists draw it (`asDrawn`).
 */
function tautomerAlternatives(rdkit, query, limit = maxAlternatives) {
  const literal = graphOf(JSON.parse(query.get_json()));
  if (!literal || literal.atoms.length > maxAtoms) return [];
  const inRing = ringBonds(literal.atoms.length, literal.bonds);
  const of = bondsOfAtoms(literal.atoms.length, literal.bonds);
  const seen = new Set([keyOf(literal)]);
  const alternatives = [];
  let frontier = [literal];
  for (let level = 1; frontier.length > 0 && (level === 1 || alternatives.length < limit); level += 1) {
    const next = [];
    for (const state of frontier)
      for (const move of movesOf(state, inRing, of)) {
        if (level > 1 && alternatives.length >= limit) break;
        const moved = apply(state, move);
        const key = keyOf(moved);
        if (seen.has(key)) continue;
        seen.add(key);
        const found = realize(rdkit, moved, literal);
        if (!found) continue;
        // RDKit may perceive the moved state otherwise (a ring no longer aromatic): as the same state, once.
        const perceived = keyOf(found.state);
        if (perceived !== key && seen.has(perceived)) continue;
        seen.add(perceived);
        alternatives.push({ smiles: found.smiles, smarts: found.smarts });
        next.push(found.state);
      }
    frontier = next;
  }
  const drawn = asDrawn(rdkit, literal, inRing, of);
  if (drawn && !seen.has(keyOf(drawn.state))) alternatives.push({ smiles: drawn.smiles, smarts: drawn.smarts });
  return alternatives;
}

/**
 * The query with every group at once in the form chemists draw, as stored molecules are drawn: C=O
 * and C=S over an OH or SH (every iminol of a peptide drawn so, say), an amino group over a ring
 * imine, X=O over [X+]–[O−] but a sulfoxide's [S+]–[O−]; undefined when nothing moves.
 */
function asDrawn(rdkit, literal, inRing, of) {
  /** A sulfoxide, C–S(=O)–C: drawn [S+]–[O−], as stored; other oxides are drawn X=O. */
  const sulfoxide = (state, x, oxide) =>
    state.atoms[x].z === sulfur &&
    of[x].length === 3 &&
    of[x].every(
      (i) => i === oxide || state.atoms[state.bonds[i].a === x ? state.bonds[i].b : state.bonds[i].a].z === 6,
    );
  const towardsDrawn = (state, move) =>
    move.cation !== undefined
      ? false
      : move.oxide !== undefined
        ? state.bonds[move.bond].order === (sulfoxide(state, move.oxide, move.bond) ? 2 : 1)
        : (state.atoms[move.acceptor].z === nitrogen &&
            (state.atoms[move.donor].z === oxygen || state.atoms[move.donor].z === sulfur)) ||
          (state.atoms[move.donor].z === nitrogen &&
            state.atoms[move.acceptor].z === nitrogen &&
            inRing[move.bonds[0]] &&
            !inRing[move.bonds[move.bonds.length - 1]]);
  let found;
  const refused = new Set();
  // Each move takes away an OH, SH, exocyclic imine or charge, so the moves end; the bound is for safety.
  for (let step = 0, state = literal; step < literal.atoms.length; step += 1) {
    let next;
    for (const move of movesOf(state, inRing, of)) {
      if (!towardsDrawn(state, move)) continue;
      const candidate = apply(state, move);
      if (refused.has(keyOf(candidate))) continue;
      next = realize(rdkit, candidate, literal);
      if (next) break;
      refused.add(keyOf(candidate));
    }
    if (!next) break;
    found = next;
    state = next.state;
  }
  return found;
}

module.exports = { tautomerAlternatives };
