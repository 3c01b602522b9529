// The molecule of a structure, as a chemist draws it, derived from its Standard InChI alone: one
// implementation for fingerprints, substructure matches and depictions (molecule-worker.cjs,
// depict-worker.cjs), so loads, queries and pictures can never drift apart. On Indigo's V2000
// molfile of the InChI:
//   1. its charges are redrawn as the InChI library draws them (inchi-drawing.cjs), and a salt's
//      protons go to the stronger acid;
//   2. the hydrogens the InChI marks as mobile move to where chemists draw them (tautomer.cjs, then
//      the ring lactams, ring imines and azoles below), a cation's proton to its alkylamine, and
//      salts are drawn as chemists draw them.
// A change to what it gives raises `moleculeDerivation` (molecules.ts). Plain JavaScript, for workers.
const { commonTautomer } = require('./tautomer.cjs');
const { molfileGraph, inRing, alternatingPath } = require('./molfile-graph.cjs');
const { redrawAsTheInChILibrary } = require('./inchi-drawing.cjs');

/**
 * How strong an acid an oxygen or sulfur is the conjugate base of, or would be as its OH: a sulfonic
 * or sulfuric acid 3, a phosphonic or phosphoric acid 2, a carboxylic acid 1, anything else (a phenol,
 * an enol, an iminol) 0.
 */
function acidity({ element, bondsOf, across }, a) {
  if (bondsOf[a].length !== 1 || bondsOf[a][0].order !== 1) return 0;
  const centre = across(bondsOf[a][0], a);
  const oxo = bondsOf[centre].some((bond) => bond.order === 2 && element(across(bond, centre)) === 'O');
  return oxo ? Math.max(0, ['C', 'P', 'S'].indexOf(element(centre)) + 1) : 0;
}

/**
 * Puts the protons of a salt where chemists draw them, where the InChI library's normalisation moved
 * them: the stronger acid gives its proton to the weaker one's anion, a carboxylic or sulfonic acid
 * to a phenolate or an iminolate (a penicillin's sodium salt is drawn R-C(=O)[O-] with its amide,
 * not R-C(=O)O with N=C([O-])). True when it changed.
 */
function protonsToWeakerAcids(graph) {
  const { atoms, element, charge, charges, bondsOf, valence, across } = graph;
  const oxygens = [];
  for (let a = 1; a <= atoms; a += 1) if (['O', 'S'].includes(element(a))) oxygens.push(a);
  let changed = false;
  for (;;) {
    // an anion paired with a cation next to it (a nitro group, an N-oxide) keeps its charge
    const anions = oxygens.filter((a) => charge(a) === -1 && bondsOf[a].every((bond) => charge(across(bond, a)) <= 0));
    const acids = oxygens.filter((a) => element(a) === 'O' && charge(a) === 0 && valence[a] === 1);
    const weakest = anions.sort((p, q) => acidity(graph, p) - acidity(graph, q))[0];
    const strongest = acids.sort((p, q) => acidity(graph, q) - acidity(graph, p))[0];
    if (!weakest || !strongest || acidity(graph, strongest) <= acidity(graph, weakest)) return changed;
    charges.set(weakest, 0);
    charges.set(strongest, -1);
    changed = true;
  }
}

/**
 * Puts a cation's proton on an aliphatic amine where the InChI library put it on an aromatic or
 * imine nitrogen of the same molecule: chemists draw the ammonium of the most basic nitrogen (an
 * alkylamine's pKa is about 10; a quinazoline's, a pyridine's or an aminopyrimidine's ring
 * nitrogen's 3 to 7), but an acyclic amidinium or guanidinium (12 to 13) keeps it. The amine's
 * nitrogen has only single bonds to carbons that have only single bonds (not an amide, an aniline, a
 * hydrazine); the nearest one takes it. The Standard InChI keeps its /p layer either way. True when
 * it changed.
 */
function protonsToAmines(graph) {
  const { atoms, element, charge, charges, bondsOf, valence, across } = graph;
  const saturated = (c) => element(c) === 'C' && charge(c) === 0 && valence[c] === bondsOf[c].length;
  const amine = (n) =>
    element(n) === 'N' &&
    charge(n) === 0 &&
    valence[n] === bondsOf[n].length &&
    bondsOf[n].length > 0 &&
    bondsOf[n].every((bond) => saturated(across(bond, n)));
  let changed = false;
  for (let n = 1; n <= atoms; n += 1) {
    const conjugatedCation = element(n) === 'N' && charge(n) === 1 && valence[n] < 4 && valence[n] > bondsOf[n].length;
    if (!conjugatedCation) continue;
    const double = bondsOf[n].find((bond) => bond.order === 2);
    const carbon = double && across(double, n);
    const amidinium =
      carbon &&
      !bondsOf[carbon].some((bond) => inRing(graph, bond)) &&
      bondsOf[carbon].some((bond) => bond !== double && element(across(bond, carbon)) === 'N');
    if (amidinium) continue;
    const seen = new Set([n]);
    let found;
    for (let level = [n]; level.length > 0 && !found;) {
      const next = [];
      for (const a of level)
        for (const bond of bondsOf[a]) {
          const b = across(bond, a);
          if (seen.has(b)) continue;
          seen.add(b);
          if (amine(b)) found ??= b;
          next.push(b);
        }
      level = next;
    }
    if (!found) continue;
    charges.set(n, 0);
    charges.set(found, 1);
    changed = true;
  }
  return changed;
}

const longestToImine = 8;

/** Whether atom `n` is a neutral nitrogen double-bonded to a carbon out of a ring (`C=N`, `C=NR`). */
function exocyclicImine(graph, n) {
  const { element, charge, bondsOf, across } = graph;
  return (
    element(n) === 'N' &&
    charge(n) === 0 &&
    bondsOf[n].length <= 2 &&
    bondsOf[n].some((bond) => bond.order === 2 && element(across(bond, n)) === 'C' && !inRing(graph, bond))
  );
}

/**
 * An amino group on an aza-aromatic ring that the InChI library rebuilds as an exocyclic imine over a
 * ring NH, however far along alternating bonds (up to 8), as the aromatic amine chemists draw:
 * 9-aminoacridine, not acridin-9(10H)-imine (tautomer.cjs moves the nearer ones). True when it changed.
 */
function ringImines(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder } = graph;
  // =NH or =N-C only: a hydrazone, an oxime or a sulfonyl imine stays as it is
  const amine = (a) => exocyclicImine(graph, a) && bondsOf[a].every((bond) => element(across(bond, a)) === 'C');
  let changed = false;
  for (let n = 1; n <= atoms; n += 1) {
    const ringNH =
      element(n) === 'N' &&
      charge(n) === 0 &&
      bondsOf[n].length === 2 &&
      valence[n] === 2 &&
      bondsOf[n].every((bond) => inRing(graph, bond));
    const found = ringNH && alternatingPath(graph, n, (a) => amine(a) && mobile(n, a), longestToImine);
    if (!found) continue;
    for (const bond of found.path) setOrder(bond, 3 - bond.order);
    changed = true;
  }
  return changed;
}

/**
 * Draws the cation of a ring nitrogen conjugated to an exocyclic imine as chemists do: the InChI
 * library writes dequalinium chloride as a neutral bis(quinolin-4-imine) with two HCl, and
 * dequalinium without its chlorides as a bis(quinolin-4-iminium); chemists draw the quinolinium with
 * its amine. A lone halide's proton goes to the imine, or an iminium's charge moves, to the ring
 * nitrogen, the bonds between them flipping (up to 8 bonds apart). True when it changed.
 */
function ringCations(graph) {
  const { atoms, element, charge, charges, bondsOf, across, setOrder } = graph;
  const halides = [];
  for (let a = 1; a <= atoms; a += 1)
    if (['Cl', 'Br', 'I'].includes(element(a)) && bondsOf[a].length === 0 && charge(a) === 0) halides.push(a);
  const iminium = (n) =>
    element(n) === 'N' &&
    charge(n) === 1 &&
    bondsOf[n].length <= 2 &&
    bondsOf[n].some((bond) => bond.order === 2 && element(across(bond, n)) === 'C' && !inRing(graph, bond));
  let changed = false;
  for (let n = 1; n <= atoms; n += 1) {
    const ringNitrogen =
      element(n) === 'N' &&
      charge(n) === 0 &&
      bondsOf[n].length === 3 &&
      bondsOf[n].every((bond) => bond.order === 1) &&
      bondsOf[n].some((bond) => inRing(graph, bond));
    if (!ringNitrogen) continue;
    const charged = alternatingPath(graph, n, iminium, longestToImine);
    const protonated =
      !charged && halides.length > 0 && alternatingPath(graph, n, (a) => exocyclicImine(graph, a), longestToImine);
    const found = charged || protonated;
    if (!found) continue;
    for (const bond of found.path) setOrder(bond, 3 - bond.order);
    charges.set(n, 1);
    charges.set(charged ? found.end : halides.pop(), charged ? 0 : -1);
    changed = true;
  }
  return changed;
}

/**
 * A sulfoxide, C-S(=O)-C, charge-separated, [S+]-[O-], as ChEMBL and most of the shared set's sources
 * draw it (63 of 87), not the InChI library's S=O; sulfites and sulfinamides keep S=O. True when it
 * changed.
 */
function sulfoxides(graph) {
  const { atoms, element, charge, charges, bondsOf, across, setOrder } = graph;
  let changed = false;
  for (let a = 1; a <= atoms; a += 1) {
    if (element(a) !== 'S' || charge(a) !== 0 || bondsOf[a].length !== 3) continue;
    const doubles = bondsOf[a].filter((bond) => bond.order === 2);
    const oxygen = doubles.length === 1 && across(doubles[0], a);
    if (!oxygen || element(oxygen) !== 'O' || bondsOf[oxygen].length !== 1 || charge(oxygen) !== 0) continue;
    if (!bondsOf[a].every((bond) => bond === doubles[0] || element(across(bond, a)) === 'C')) continue;
    setOrder(doubles[0], 1);
    charges.set(a, 1);
    charges.set(oxygen, -1);
    changed = true;
  }
  return changed;
}

/**
 * An iminolate, [O-]-C=N, as chemists draw it: the amide's anion, O=C-[N-] (sodium sulfacetamide).
 * True when it changed.
 */
function amideAnions(graph) {
  const { atoms, element, charge, charges, bondsOf, across, setOrder } = graph;
  let changed = false;
  for (let o = 1; o <= atoms; o += 1) {
    if (element(o) !== 'O' || charge(o) !== -1 || bondsOf[o].length !== 1 || bondsOf[o][0].order !== 1) continue;
    const carbon = across(bondsOf[o][0], o);
    if (element(carbon) !== 'C') continue;
    const imine = bondsOf[carbon].find(
      (bond) => bond.order === 2 && element(across(bond, carbon)) === 'N' && charge(across(bond, carbon)) === 0,
    );
    if (!imine) continue;
    setOrder(bondsOf[o][0], 2);
    setOrder(imine, 1);
    charges.set(o, 0);
    charges.set(across(imine, carbon), -1);
    changed = true;
  }
  return changed;
}

/**
 * Moves the hydrogen of an azole (imidazole, pyrazole, triazole, tetrazole, fused or not) to the ring
 * nitrogen chemists draw it on most, where the InChI library's choice differs: next to a ring fusion
 * (1H-indazole, 1H-benzotriazole), then next to the most CH carbons (4-aryl-1H-imidazole,
 * 3-aryl-1H-pyrazole), then next to the most nitrogens. The bonds between the two nitrogens flip
 * along alternating bonds. An NH the InChI puts on the six-membered ring of a fused azole goes to the
 * azole first. On the 1,291 azoles of the shared test set drawn with one NH, chemists
 * chose that nitrogen 64 % of the time, the InChI library's 48 %. True when it changed.
 */
function azoleHydrogens(graph, mobile) {
  const { atoms, element, charge, bondsOf, across, valence, setOrder } = graph;
  const hydrogens = (a) => (element(a) === 'C' && charge(a) === 0 ? 4 - valence[a] : 0);
  const fusion = (a) =>
    element(a) === 'C' && bondsOf[a].length === 3 && bondsOf[a].every((bond) => inRing(graph, bond));
  const ringNH = (n) => element(n) === 'N' && charge(n) === 0 && bondsOf[n].length === 2 && valence[n] === 2;
  const ringN = (n) => element(n) === 'N' && charge(n) === 0 && bondsOf[n].length === 2 && valence[n] === 3;
  const score = (n, ring) => {
    const neighbours = bondsOf[n].map((bond) => across(bond, n)).filter((a) => ring.includes(a));
    const count = (test) => neighbours.filter(test).length;
    return [count(fusion), count((a) => hydrogens(a) > 0), count((a) => element(a) === 'N')];
  };
  const better = (p, q) => {
    for (let k = 0; k < p.length; k += 1) if (p[k] !== q[k]) return p[k] > q[k];
    return false;
  };
  /** Atom `a` has a double bond to a carbon or nitrogen (not a lactam's C=O, not an sp3 carbon). */
  const quinoid = (a) =>
    bondsOf[a].some((bond) => bond.order === 2 && ['C', 'N'].includes(element(across(bond, a)))) &&
    !bondsOf[a].some((bond) => bond.order === 2 && ['O', 'S'].includes(element(across(bond, a))));
  /** The five-membered ring through `n`, as its atoms from `n` round, or undefined. */
  const fiveRing = (n) => {
    const [a, b] = bondsOf[n].map((bond) => across(bond, n));
    for (const ab of bondsOf[a]) {
      const x = across(ab, a);
      if (x === n || x === b) continue;
      for (const xy of bondsOf[x]) {
        const y = across(xy, x);
        if ([n, a, b].includes(y)) continue;
        if (bondsOf[y].some((yb) => across(yb, y) === b)) return [n, a, x, y, b];
      }
    }
    return undefined;
  };
  let changed = false;
  for (let n = 1; n <= atoms; n += 1) {
    if (!ringNH(n)) continue;
    const ring = fiveRing(n);
    // an NH on the six-membered ring of a fused azole (a quinoid 7H-pyrrolo[2,3-d]pyrimidine) goes to
    // the five-membered ring, which makes both rings aromatic
    const azole =
      !ring &&
      bondsOf[n].every((bond) => inRing(graph, bond) && quinoid(across(bond, n))) &&
      alternatingPath(graph, n, (a) => ringN(a) && mobile(n, a) && fiveRing(a) !== undefined, 6);
    if (azole) {
      for (const bond of azole.path) setOrder(bond, 3 - bond.order);
      changed = true;
      continue;
    }
    if (!ring || !ring.slice(1).every((a) => bondsOf[a].some((bond) => bond.order === 2))) continue;
    let best = n;
    for (const m of ring) if (ringN(m) && mobile(n, m) && better(score(m, ring), score(best, ring))) best = m;
    const found = best !== n && alternatingPath(graph, n, (a) => a === best, 6);
    if (!found) continue;
    for (const bond of found.path) setOrder(bond, 3 - bond.order);
    changed = true;
  }
  return changed;
}

/**
 * An OH or SH on a ring carbon that shares its hydrogen with a ring nitrogen (by the InChI) as the
 * lactam or thione chemists draw, whichever Kekulé structure Indigo wrote: tautomer.cjs moves
 * X–C=N and X–C=C–C=N, which the ring's double bonds may not hold where Indigo put them the other
 * way round (amrinone came out as a 2-hydroxypyridine, its C–OH between two C=C). The bonds from the
 * oxygen to the nitrogen flip along alternating bonds (up to 8). True when it changed.
 */
function ringLactams(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder } = graph;
  let changed = false;
  for (let o = 1; o <= atoms; o += 1) {
    if (!['O', 'S'].includes(element(o)) || charge(o) !== 0 || bondsOf[o].length !== 1 || valence[o] !== 1) continue;
    const [bond] = bondsOf[o];
    const carbon = across(bond, o);
    if (element(carbon) !== 'C' || charge(carbon) !== 0) continue;
    if (!bondsOf[carbon].some((b) => b !== bond && inRing(graph, b))) continue;
    const ringNitrogen = (n) =>
      element(n) === 'N' &&
      charge(n) === 0 &&
      bondsOf[n].length === 2 &&
      mobile(o, n) &&
      bondsOf[n].every((b) => inRing(graph, b));
    const found = alternatingPath(graph, o, ringNitrogen, 8, (a) => ['C', 'N'].includes(element(a)) && charge(a) === 0);
    if (!found) continue;
    for (const b of found.path) setOrder(b, 3 - b.order);
    changed = true;
  }
  return changed;
}

/**
 * A 1,2,4-triazole-3-thione with its hydrogen on a ring nitrogen next to the C=S drawn as the thiol,
 * as sources draw it (49 of 55 times on the shared set and a sample of the 500k set; every other
 * mercapto-azine and -azole is drawn as its thione, which is the tautomer that exists). True when
 * it changed.
 */
function triazoleThiols(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder } = graph;
  const neighbours = (a) => bondsOf[a].map((bond) => across(bond, a));
  /** The other four atoms of a five-membered ring through `c`, or undefined. */
  const fiveRing = (c) => {
    for (const a of neighbours(c))
      for (const b of neighbours(c))
        for (const x of a < b ? neighbours(a) : [])
          for (const y of neighbours(x))
            if (![c, a, b].includes(x) && ![c, a, b, x].includes(y) && neighbours(y).includes(b)) return [a, x, y, b];
    return undefined;
  };
  let changed = false;
  for (let s = 1; s <= atoms; s += 1) {
    if (element(s) !== 'S' || charge(s) !== 0 || bondsOf[s].length !== 1 || bondsOf[s][0].order !== 2) continue;
    const carbon = across(bondsOf[s][0], s);
    const ring = element(carbon) === 'C' && fiveRing(carbon);
    if (!ring || ring.filter((a) => element(a) === 'N').length !== 3) continue;
    const ringNH = (n) => element(n) === 'N' && charge(n) === 0 && bondsOf[n].length === 2 && valence[n] === 2;
    const donor = [ring[0], ring[3]].find((n) => ringNH(n) && mobile(n, s));
    if (!donor) continue;
    setOrder(bondsOf[s][0], 1);
    setOrder(
      bondsOf[donor].find((bond) => across(bond, donor) === carbon),
      2,
    );
    changed = true;
  }
  return changed;
}

/**
 * Which atoms share a mobile hydrogen, by the InChI's mobile groups (`(H,9,10)` in its /h layer), as
 * a test `mobile(a, b)` on atom numbers: Indigo numbers a molfile's atoms as the InChI does, component
 * after component. Every pair passes when the layers cannot be read.
 */
function mobileGroups(inchi) {
  const layers = inchi.split('/');
  const components = (layers[1] ?? '').split('.').flatMap((part) => {
    const [, times, formula] = /^(\d*)(.*)$/.exec(part);
    const heavy = [...formula.matchAll(/([A-Z][a-z]?)(\d*)/g)]
      .filter(([, element]) => element !== 'H')
      .reduce((sum, [, , count]) => sum + Number(count || 1), 0);
    return Array(Number(times || 1)).fill(heavy);
  });
  const hydrogens = layers.find((layer) => layer.startsWith('h'));
  const segments = (hydrogens?.slice(1) ?? '').split(';').flatMap((segment) => {
    const [, times, rest] = /^(?:(\d+)\*)?(.*)$/.exec(segment);
    return Array(Number(times || 1)).fill(rest);
  });
  if (hydrogens && segments.length !== components.length) return () => true;
  const group = new Map();
  let offset = 0;
  components.forEach((heavy, c) => {
    for (const [k, [, atoms]] of [...(segments[c] ?? '').matchAll(/\(H\d*-?,([\d,]+)\)/g)].entries())
      for (const atom of atoms.split(',')) group.set(offset + Number(atom), `${c}.${k}`);
    offset += heavy;
  });
  return (a, b) => group.has(a) && group.get(a) === group.get(b);
}

/**
 * The molfile of a structure as drawn, from Indigo's molfile of its Standard InChI `inchi` (laid
 * out or not); and whether it holds hydrogen atoms, which RDKit then removes.
 */
function drawnMolfile(molfile, inchi) {
  const graph = molfileGraph(molfile);
  if (!graph) return { molfile, explicitHydrogens: true };
  const redrawn = redrawAsTheInChILibrary(graph, inchi) | protonsToWeakerAcids(graph) ? graph.molfile() : molfile;
  const mobile = mobileGroups(inchi);
  const tautomer = commonTautomer(redrawn, mobile) ?? redrawn;
  const salts = molfileGraph(tautomer);
  const drawn =
    protonsToAmines(salts) |
    ringLactams(salts, mobile) |
    triazoleThiols(salts, mobile) |
    ringImines(salts, mobile) |
    ringCations(salts) |
    amideAnions(salts) |
    azoleHydrogens(salts, mobile) |
    sulfoxides(salts)
      ? salts.molfile()
      : tautomer;
  return { molfile: drawn, explicitHydrogens: graph.hasHydrogens() };
}

module.exports = { drawnMolfile };
