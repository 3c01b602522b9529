// The molecule of a structure, as a chemist draws it, derived from its Standard InChI alone: one
// implementation for fingerprints, substructure matches and depictions (molecule-worker.cjs,
// depict-worker.cjs), so loads, queries and pictures can never drift apart. On Indigo's V2000
// molfile of the InChI:
//   1. its charges are redrawn as the InChI library draws them (inchi-drawing.cjs), a salt's
//      protons go to the stronger acid, a quaternary salt's anion gets its proton back (also from a
//      protonated nitrogen of the same structure), a pyridinium aldoxime is the oxime, and a diazo
//      compound C=[N+]=[N-];
//   2. the hydrogens the InChI marks as mobile move to where chemists draw them (tautomer.cjs, then
//      the ring lactams, pyrimidin-4(3H)-ones, quinolin-2- and 4-ols, pyrimidinols, fused
//      pyrimidine thiols, ring imines, azoles, aromatic rings and amidines below), a cation's proton
//      to its alkylamine, and salts are drawn as chemists draw them;
//   3. cations go to the ring nitrogen chemists put them on (a pyridinium, not an oxonium or a
//      quinoid iminium), N-oxides and mesoionic rings get their charges as drawn.
// A change to what it gives raises `moleculeDerivation` (molecules.ts). Plain JavaScript, for workers.
const { commonTautomer } = require('./tautomer.cjs');
const { molfileGraph, inRing, inSmallRing, ringBondCount, alternatingPath } = require('./molfile-graph.cjs');
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
 * The double bond to a neutral nitrogen of the carbon that oxygen `o` holds by its one single bond:
 * the C=N of an iminol, HO–C=N, or an iminolate, [O-]–C=N; undefined for any other oxygen.
 */
function iminolImine(graph, o) {
  const { element, charge, bondsOf, across } = graph;
  if (bondsOf[o].length !== 1 || bondsOf[o][0].order !== 1) return undefined;
  const carbon = across(bondsOf[o][0], o);
  if (element(carbon) !== 'C') return undefined;
  return bondsOf[carbon].find(
    (bond) => bond.order === 2 && element(across(bond, carbon)) === 'N' && charge(across(bond, carbon)) === 0,
  );
}

/** Whether `bond` is the double bond of atom `a` to an oxygen bonded to nothing else (`a`=O). */
function terminalOxo({ element, bondsOf, across }, bond, a) {
  return bond.order === 2 && element(across(bond, a)) === 'O' && bondsOf[across(bond, a)].length === 1;
}

/**
 * Gives an anion the InChI library drew in a cation's structure back its proton, from a hydrogen
 * halide of the same structure or a protonated oxygen or nitrogen, as chemists draw the salt: a
 * quaternary ammonium's amide stays neutral with the halide as the anion ([Cl-].C[n+]…NC(=O)…, not
 * Cl.C[n+]…[N-]C(=O)…; [N-]–C=[OH+] is the neutral amide). An anion next to a cation (a nitro group,
 * an N-oxide) keeps its charge; nitrogens take a proton first, then oxygens and sulfurs from the
 * weakest acid on, an iminolate's as the amide (O=C–NH, not the iminol HO–C=N: a quaternary
 * ammonium's amide or carbamate with its halide, 12 more of the 500k holdout as drawn). True when it
 * changed.
 */
function protonsToAnions(graph) {
  const { atoms, element, charge, charges, bondsOf, valence, neighbours } = graph;
  /** The oxonium of an amide drawn [N-]–C=[OH+], for the anion `n`. */
  const oxonium = (n) =>
    element(n) === 'N' &&
    neighbours(n)
      .filter((c) => element(c) === 'C')
      .flatMap(neighbours)
      .find((o) => element(o) === 'O' && charge(o) === 1 && valence[o] === 2);
  const charged = [...charges.keys()].filter((a) => charge(a) !== 0);
  if (charged.some((a) => Math.abs(charge(a)) > 1)) return false;
  const anions = charged.filter(
    (a) =>
      charge(a) === -1 &&
      ['N', 'O', 'S'].includes(element(a)) &&
      !neighbours(a).some((b) => charge(b) !== 0 || ['N', 'O'].includes(element(b))),
  );
  if (anions.length === 0) return false;
  // only with quaternary cations: the InChI reads another protonated cation's proton as mobile
  const oxoniums = anions.map(oxonium).filter(Boolean);
  const protonated = (a) => charge(a) === 1 && ((element(a) === 'N' && valence[a] < 4) || element(a) === 'O');
  if (charged.some((a) => protonated(a) && !oxoniums.includes(a))) return false;
  const halides = [];
  for (let a = 1; a <= atoms; a += 1) if (graph.loneHalide(a)) halides.push(a);
  let changed = false;
  for (const n of anions) {
    const o = oxonium(n);
    if (!o) continue;
    charges.set(n, 0);
    charges.set(o, 0);
    changed = true;
  }
  const rank = (a) => (element(a) === 'N' ? -1 : acidity(graph, a));
  for (const a of anions.filter((x) => charge(x) === -1).sort((p, q) => rank(p) - rank(q))) {
    if (halides.length === 0) break;
    charges.set(a, 0);
    charges.set(halides.pop(), -1);
    changed = true;
    // an iminolate's proton goes to its nitrogen: the amide, O=C–NH
    const imine = element(a) === 'O' && iminolImine(graph, a);
    if (imine) graph.flip([bondsOf[a][0], imine]);
  }
  return changed;
}

/**
 * Whether the structure holds a cation without a hydrogen and without an anion beside it: a quaternary
 * ammonium or phosphonium, a pyridinium (not a nitro group's or an N-oxide's nitrogen). The InChI of
 * such a salt may have no mobile group where the neutral structure has one.
 */
function hydrogenFreeCation(graph) {
  const { atoms, element, charge, valence, neighbours } = graph;
  for (let a = 1; a <= atoms; a += 1)
    if (
      charge(a) === 1 &&
      ['N', 'P'].includes(element(a)) &&
      valence[a] === 4 &&
      neighbours(a).every((b) => charge(b) === 0)
    )
      return true;
  return false;
}

/**
 * A nitrogen anion (an amide's, a sulfonamide's, an azole's) in a structure that also holds a
 * protonated nitrogen (an ammonium, a pyridinium, a protonated amide) or carbonyl (C=[OH+], a
 * phenacylpyridinium's ketone) and a quaternary ammonium or iminium, where the InChI library took
 * the anion's hydrogen as its cation's proton and put it back on the other nitrogen: both are drawn
 * neutral, the hydrogen on the anion's nitrogen (quaternary ammonium amides and azoles: 6 more of
 * both sets as drawn). True when it changed.
 */
function protonsToNitrogenAnions(graph) {
  const { atoms, element, charge, charges, bondsOf, valence, neighbours } = graph;
  const alone = (a) => neighbours(a).every((b) => charge(b) === 0);
  const anions = [];
  const cations = [];
  for (let a = 1; a <= atoms; a += 1) {
    // a protonated ketone or amide, C=[OH+]
    if (element(a) === 'O' && charge(a) === 1 && bondsOf[a].length === 1 && valence[a] === 2 && alone(a))
      cations.push(a);
    if (element(a) !== 'N' || !alone(a)) continue;
    if (charge(a) === -1 && valence[a] === bondsOf[a].length) anions.push(a);
    else if (charge(a) === 1 && valence[a] < 4) cations.push(a);
  }
  // only beside a cation without a hydrogen, as protonsToAnions: the InChI would read the proton of
  // a structure of protonated cations alone as mobile
  if (!hydrogenFreeCation(graph)) return false;
  let changed = false;
  while (anions.length > 0 && cations.length > 0) {
    charges.set(anions.pop(), 0);
    charges.set(cations.pop(), 0);
    changed = true;
  }
  return changed;
}

/**
 * The valences the rebuild can leave impossible, which no toolkit reads (the structure would have no
 * molecule, so no fingerprint and no match), redrawn as chemists draw them, each keeping the
 * structure's Standard InChI:
 * - an anion of too many bonds gives its charge and a bond to a neighbour: a tetrazolide's
 *   `=[N-]=` (the sartans' potassium salts) as `[N-]`, on a nitrogen without a carbon where it can;
 *   a sulfur of seven bonds `[S-]` as a sulfonamide's `[N-]S(=O)=O`, a carbanion's `[C-]S(=O)=O`
 *   or a sulfonate's `S(=O)(=O)[O-]`;
 * - a neutral nitrogen of four bonds with an `N=O` and the one hydrogen the InChI gives it (a
 *   nitroxide radical has none) as the N-oxide `[NH+][O-]`; a neutral nitrogen of five bonds doubly
 *   bonded to a cation (a 1,1,1-trialkylhydrazinium's `[NH+]=N(C)(C)C`) as `N–[N+](C)(C)C`;
 * - a halogen bonded to a selenium or tellurium by a double or triple bond, by a single one.
 * A rebuild with a charged carbon or a proton (Indigo's `[H+]` beside a salt's anion) is left as
 * it is. True when it changed.
 */
function impossibleValences(graph, inchi) {
  const { atoms, element, charge, charges, bondsOf, valence, across, setOrder } = graph;
  const halogen = (a) => ['Cl', 'Br', 'I'].includes(element(a));
  const carbons = (a) => graph.neighbours(a).filter((n) => element(n) === 'C').length;
  /** The double bond of `a` whose other atom takes `a`'s charge, by `rank` (lowest first), if any. */
  const doubleTo = (a, rank) =>
    bondsOf[a].filter((bond) => bond.order === 2 && rank(bond) !== undefined).sort((x, y) => rank(x) - rank(y))[0];
  // a rebuild with a charged carbon or a lone proton is beyond mending (another Standard InChI would come of it)
  for (let a = 1; a <= atoms; a += 1) if (['C', 'H'].includes(element(a)) && charge(a) !== 0) return false;
  let hydrogens;
  let changed = false;
  for (let a = 1; a <= atoms; a += 1) {
    const [e, q, v] = [element(a), charge(a), valence[a]];
    let bond;
    if (e === 'N' && q === -1 && v === 4)
      bond = doubleTo(a, (b) => (element(across(b, a)) === 'N' ? carbons(across(b, a)) : undefined));
    else if (e === 'S' && q === -1 && v === 7)
      bond = doubleTo(a, (b) => ({ N: 0, C: 1 })[element(across(b, a))] ?? (terminalOxo(graph, b, a) ? 2 : undefined));
    else if (e === 'N' && q === 0 && v > 3) {
      // an N-oxide's nitrogen has as many hydrogens as the InChI gives it
      hydrogens ??= fixedHydrogens(inchi);
      const oxide = (hydrogens.get(a) ?? 0) === 5 - v;
      bond =
        (v === 5 && doubleTo(a, (b) => (charge(across(b, a)) === 1 ? 0 : undefined))) ||
        (oxide ? doubleTo(a, (b) => (terminalOxo(graph, b, a) ? 0 : undefined)) : undefined);
    } else if (
      halogen(a) &&
      q === 0 &&
      bondsOf[a].length === 1 &&
      v > 1 &&
      ['Se', 'Te'].includes(element(graph.neighbours(a)[0]))
    ) {
      setOrder(bondsOf[a][0], 1);
      changed = true;
      continue;
    }
    if (!bond) continue;
    // the double bond is made single and `a` gives an electron pair across it (an anion its charge, a
    // nitrogen its lone pair): each atom keeps its hydrogens
    const other = across(bond, a);
    setOrder(bond, 1);
    charges.set(other, charge(other) - 1);
    charges.set(a, q + 1);
    graph.withUsualValence(a); // Indigo gives the tetrazolide's nitrogen a valence of 4
    changed = true;
  }
  return changed;
}

/**
 * A diazo compound as drawn, C=[N+]=[N-], where Indigo writes an α-diazo ketone, ester or sulfone
 * as its diazonium enolate, [O-]–C=C–[N+]#N (the diazoacetoacetates, 2 more of the 500k
 * holdout as drawn). True when it changed.
 */
function diazoCompounds(graph) {
  const { atoms, element, charge, charges, bondsOf, across, setOrder } = graph;
  let changed = false;
  for (let n = 1; n <= atoms; n += 1) {
    if (element(n) !== 'N' || charge(n) !== 1 || bondsOf[n].length !== 2) continue;
    const triple = bondsOf[n].find((bond) => bond.order === 3);
    const single = bondsOf[n].find((bond) => bond.order === 1);
    const end = triple && across(triple, n);
    const carbon = single && across(single, n);
    if (!end || element(end) !== 'N' || bondsOf[end].length !== 1 || element(carbon) !== 'C') continue;
    const alkene = bondsOf[carbon].find((bond) => bond.order === 2 && element(across(bond, carbon)) === 'C');
    const enol = alkene && across(alkene, carbon);
    const oxygen = (bond) => element(across(bond, enol)) === 'O' && charge(across(bond, enol)) === -1;
    const enolate = enol && bondsOf[enol].find((bond) => bond.order === 1 && oxygen(bond));
    if (!enolate) continue;
    setOrder(enolate, 2);
    setOrder(alkene, 1);
    setOrder(single, 2);
    setOrder(triple, 2);
    charges.set(across(enolate, enol), 0);
    charges.set(end, -1);
    changed = true;
  }
  return changed;
}

/**
 * A pyridinium aldoxime (pralidoxime, obidoxime) as drawn, where the InChI library's rebuild gives
 * the oxime's proton elsewhere (a hydrohalide, an ammonium, the nitroso nitrogen) and draws a neutral
 * nitrosomethylene-dihydropyridine, O=N–C=C(ring)…N: the bonds from the ring nitrogen to the nitroso
 * oxygen flip (up to 8 bonds apart), the ring nitrogen becomes the cation, and the oxygen takes the
 * proton (an OH). Where the rebuild protonated the ring nitrogen itself (asoxime, whose amide it drew
 * as an anion), that nitrogen's own proton goes to the oxygen. True when it changed.
 */
function pyridiniumOximes(graph) {
  const { atoms, element, charge, charges, bondsOf, valence, across } = graph;
  const nitroso = (o) =>
    element(o) === 'O' &&
    charge(o) === 0 &&
    bondsOf[o].length === 1 &&
    bondsOf[o][0].order === 2 &&
    element(across(bondsOf[o][0], o)) === 'N' &&
    bondsOf[across(bondsOf[o][0], o)].length === 2;
  /** A nitrogen cation with a hydrogen: an ammonium, an iminium, a protonated nitroso group. */
  const protonated = (a) => element(a) === 'N' && charge(a) === 1 && valence[a] < 4;
  let changed = false;
  for (let o = 1; o <= atoms; o += 1) {
    if (!nitroso(o)) continue;
    let donor;
    for (let a = 1; a <= atoms && donor === undefined; a += 1) {
      if (graph.loneHalide(a) || protonated(a)) donor = a;
    }
    for (let n = 1; n <= atoms; n += 1) {
      // a ring nitrogen of three single bonds that the rebuild charged holds a proton, which it gives
      // (asoxime's, whose amide the rebuild drew as an anion)
      const ownProton = charge(n) === 1;
      if (!tertiaryRingNitrogen(graph, n) || !(ownProton || (charge(n) === 0 && donor !== undefined))) continue;
      const found = alternatingPath(graph, n, (a) => a === o, longestToImine);
      // into the ring nitrogen's own ring (a pyridinium), not from an N-aryl piperidine
      if (!found || !inRing(graph, found.path[0])) continue;
      graph.flip(found.path);
      if (!ownProton) {
        charges.set(n, 1);
        charges.set(donor, element(donor) === 'N' ? 0 : -1);
      }
      changed = true;
      break;
    }
  }
  return changed;
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

/**
 * Whether atom `n` is a neutral nitrogen double-bonded to a carbon out of a ring (`C=N`, `C=NR`); a
 * macrocycle's counts as none (a cyclophane of two 4-aminoquinoliniums).
 */
function exocyclicImine(graph, n) {
  const { element, charge, bondsOf, across } = graph;
  return (
    element(n) === 'N' &&
    charge(n) === 0 &&
    bondsOf[n].length <= 2 &&
    bondsOf[n].some((bond) => bond.order === 2 && element(across(bond, n)) === 'C' && !inSmallRing(graph, bond))
  );
}

/**
 * An amino group on an aza-aromatic ring that the InChI library rebuilds as an exocyclic imine over a
 * ring NH, however far along alternating bonds (up to 8), as the aromatic amine chemists draw:
 * 9-aminoacridine, not acridin-9(10H)-imine (tautomer.cjs moves the nearer ones). True when it changed.
 */
function ringImines(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across } = graph;
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
    graph.flip(found.path);
    changed = true;
  }
  return changed;
}

/** The rings of five and six atoms of `graph`, each as its atoms in order round. */
function smallRings({ atoms, bondsOf, across }) {
  const rings = [];
  const walk = (path) => {
    const last = path[path.length - 1];
    for (const bond of bondsOf[last]) {
      const next = across(bond, last);
      if (next === path[0] && path.length >= 5 && path[1] < last) rings.push([...path]);
      const onward = next > path[0] && bondsOf[next].length > 1 && path.length < 6;
      if (onward && !path.includes(next)) walk([...path, next]);
    }
  };
  for (let a = 1; a <= atoms; a += 1) if (bondsOf[a].length > 1) walk([a]);
  return rings;
}

/**
 * Which of `rings` (of five or six atoms) are aromatic as drawn: each of a ring's atoms has a double
 * bond within it or to an atom of another aromatic ring (naphthalene's Kekulé structures, not a
 * quinoid one), but one nitrogen, oxygen or sulfur with single bonds only in a ring of five.
 */
function aromaticRings(graph, rings) {
  const { element, bondsOf, across } = graph;
  const aromatic = rings.map(() => false);
  const inAromatic = new Set();
  for (let found = true; found;) {
    found = false;
    rings.forEach((ring, k) => {
      if (aromatic[k]) return;
      const within = (a) => ring.includes(a) || inAromatic.has(a);
      const conjugated = (a) => bondsOf[a].some((bond) => bond.order === 2 && within(across(bond, a)));
      const others = ring.filter((a) => !conjugated(a));
      const yes =
        ring.length === 6
          ? others.length === 0
          : others.length === 1 &&
            ['N', 'O', 'S'].includes(element(others[0])) &&
            bondsOf[others[0]].every((bond) => bond.order === 1);
      if (!yes) return;
      aromatic[k] = true;
      for (const a of ring) inAromatic.add(a);
      found = true;
    });
  }
  return aromatic;
}

/**
 * Whether flipping the bonds of `path` makes more rings aromatic and none fewer: `aromaticNow()`
 * tells which rings are aromatic as drawn, `before` which were before the flip.
 */
function moreAromatic(graph, path, aromaticNow, before) {
  graph.flip(path);
  const after = aromaticNow();
  graph.flip(path);
  return after.every((yes, k) => yes || !before[k]) && after.some((yes, k) => yes && !before[k]);
}

/** Whether atom `n` is a nitrogen of three single bonds, one of them in a ring (a pyridine's N-alkyl). */
function tertiaryRingNitrogen(graph, n) {
  const { element, bondsOf } = graph;
  return (
    element(n) === 'N' &&
    bondsOf[n].length === 3 &&
    bondsOf[n].every((bond) => bond.order === 1) &&
    bondsOf[n].some((bond) => inRing(graph, bond))
  );
}

/**
 * Moves a hydrogen from a nitrogen or a hydroxyl to a nitrogen, or from an enol to an oxo group, that
 * shares it (by the InChI) where that makes more rings aromatic, as chemists draw them: a
 * 4,7-dihydro-[1,2,4]triazolo[1,5-a]pyrimidine with its NH on the six-membered ring and the triazole
 * aromatic, not the InChI library's 1H-triazol-imine; a 4-ureidobenzoate beside a quaternary
 * ammonium as such, not a quinoid cyclohexadienylidene enol and imine; a 4-acylphenol, not a quinone
 * methide enol (also without a mobile group, in a salt of a cation without hydrogen: 4-hydroxyphenacyl
 * azoliums). No ring aromatic before stops being so. The bonds between the two atoms flip along
 * alternating bonds (up to 8). True when it changed.
 */
function aromaticHydrogens(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across } = graph;
  let rings; // found when first needed: most structures have no such hydrogen
  const aromaticNow = () => aromaticRings(graph, (rings ??= smallRings(graph)));
  const hydrogenated = (n) =>
    charge(n) === 0 &&
    ((element(n) === 'N' && valence[n] < 3) || (element(n) === 'O' && valence[n] === 1 && bondsOf[n].length === 1));
  const imine = (n) => element(n) === 'N' && charge(n) === 0 && valence[n] === 3 && bondsOf[n].length === 2;
  const oxo = (o) => element(o) === 'O' && charge(o) === 0 && bondsOf[o].length === 1 && valence[o] === 2;
  // an enol's hydroxyl, on a carbon out of a ring or double-bonded out of it (a quinone methide's)
  const enol = (o) =>
    element(o) === 'O' &&
    !inRing(graph, bondsOf[o][0]) &&
    bondsOf[across(bondsOf[o][0], o)].every((bond) => bond.order === 2 || !inRing(graph, bond));
  // a salt of a cation without hydrogen: its InChI may have no mobile group for an enol's hydrogen
  let cation; // found when first needed
  let changed = false;
  for (let n = 1; n <= atoms; n += 1) {
    if (!hydrogenated(n)) continue;
    let before;
    const found = alternatingPath(
      graph,
      n,
      (a, path) => {
        if (!(imine(a) || (oxo(a) && enol(n)))) return false;
        if (!mobile(n, a) && !(oxo(a) && (cation ??= hydrogenFreeCation(graph)))) return false;
        before ??= aromaticNow();
        return moreAromatic(graph, path, aromaticNow, before);
      },
      longestToImine,
    );
    if (!found) continue;
    graph.flip(found.path);
    changed = true;
  }
  return changed;
}

/**
 * Moves the hydrogen of an amidine, N=C–NH, to the nitrogen chemists draw it on, where the two share
 * it (by the InChI): the double bond goes to a nitrogen that bears a sulfonyl (an N-sulfonyl amidine,
 * diazoxide's 2H-1,2,4-benzothiadiazine 1,1-dioxide; not a sulfonylguanidine, drawn
 * S(=O)(=O)NC(=N)N), to a nitrogen that bears a nitro group (a nitroguanidine, the
 * neonicotinoids' N-nitroimine, also out of an imidazoline's ring: imidacloprid,
 * [O-][N+](=O)N=C1NCCN1R; 10 more of the 500k holdout as drawn, none of the shared set either way),
 * to the OH's nitrogen of an amidoxime (H2N–C(=N–OH)R and RNH–C(=N–OH)R', the amide oxime that
 * exists and that sources draw: N-substituted, 22 more of the 500k holdout as drawn, none of the
 * shared set either way; unsubstituted, 24 of 28 on the holdout, 17 of 20 on a second 500k sample,
 * 1 of 4 on the shared set; O-acyl and O-alkyl ones, the amidoxime's esters and ethers that exist,
 * H2N–C(=N–OR)R', drawn so 18 times of 32 on the holdout, 12 of 19 on the second sample, 7 of 16 on
 * the shared set), and off a
 * nitrogen on an aromatic ring (an N-aryl amidine, Ar–NH–C(=NH)R). A ring's double bond stays in
 * its ring: a sulfonamide on an azine is no sulfonyl imine. True when it changed.
 */
function amidineHydrogens(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder } = graph;
  const sulfonyl = (s) =>
    element(s) === 'S' &&
    bondsOf[s].filter((bond) => bond.order === 2 && element(across(bond, s)) === 'O').length === 2;
  let aromaticAtoms; // found when first needed: most structures have no amidine
  const inAromatic = (a) => {
    if (!aromaticAtoms) {
      const rings = smallRings(graph);
      const aromatic = aromaticRings(graph, rings);
      aromaticAtoms = new Set(rings.filter((_, k) => aromatic[k]).flat());
    }
    return aromaticAtoms.has(a);
  };
  const substituents = (n, carbon) => bondsOf[n].map((bond) => across(bond, n)).filter((a) => a !== carbon);
  const hydroxyl = (o) => element(o) === 'O' && bondsOf[o].length === 1;
  // the oxygen on nitrogen `n` of an oxime: an OH, or an ether's or ester's O–C
  const oximeOxygen = (o, n) =>
    hydroxyl(o) ||
    (element(o) === 'O' && bondsOf[o].length === 2 && substituents(o, n).every((a) => element(a) === 'C'));
  const nitro = (a) =>
    element(a) === 'N' &&
    charge(a) === 1 &&
    bondsOf[a].some((bond) => bond.order === 2 && element(across(bond, a)) === 'O');
  /**
   * How much nitrogen `n` of the amidine on `carbon` draws the double bond (3 to 0), `partner`
   * its other nitrogen; `cyclic`: its C=N is in a ring, where only a sulfonyl counts (a
   * quinazolin-4(3H)-one keeps its NH).
   */
  const preference = (n, carbon, guanidine, cyclic, partner) => {
    if (substituents(n, carbon).some(nitro)) return 3;
    if (!guanidine && substituents(n, carbon).some(sulfonyl)) return 2;
    // an amidoxime, H2N–C(=N–OH)R or RNH–C(=N–OH)R'
    const oxime =
      substituents(n, carbon).some((o) => oximeOxygen(o, n)) &&
      substituents(partner, carbon).every((a) => element(a) === 'C');
    if (!guanidine && !cyclic && oxime) return 2;
    return !cyclic && substituents(n, carbon).some(inAromatic) ? 0 : 1;
  };
  let changed = false;
  for (let n = 1; n <= atoms; n += 1) {
    if (element(n) !== 'N' || charge(n) !== 0 || valence[n] >= 3) continue;
    for (const single of bondsOf[n]) {
      const carbon = across(single, n);
      if (single.order !== 1 || element(carbon) !== 'C') continue;
      const double = bondsOf[carbon].find((bond) => bond.order === 2 && element(across(bond, carbon)) === 'N');
      const other = double && across(double, carbon);
      if (!other || charge(other) !== 0 || !mobile(n, other) || inAromatic(carbon)) continue;
      const cyclic = inRing(graph, double);
      if (cyclic && !inRing(graph, single) && !substituents(n, carbon).some(nitro)) continue;
      const guanidine = bondsOf[carbon].filter((bond) => element(across(bond, carbon)) === 'N').length > 2;
      const [mine, theirs] = [n, other].map((a, k) => preference(a, carbon, guanidine, cyclic, k ? n : other));
      if (mine <= theirs) continue;
      setOrder(single, 2);
      setOrder(double, 1);
      changed = true;
      break;
    }
  }
  return changed;
}

/** Whether atom `o` is the OH of a carboxylic acid alone in a component of at most 12 atoms, no nitrogen. */
function loneAcid(graph, o) {
  const { element, charge, bondsOf, across, neighbours } = graph;
  if (element(o) !== 'O' || charge(o) !== 0 || bondsOf[o].length !== 1 || bondsOf[o][0].order !== 1) return false;
  const c = across(bondsOf[o][0], o);
  if (element(c) !== 'C' || !bondsOf[c].some((bond) => bond.order === 2 && element(across(bond, c)) === 'O'))
    return false;
  const component = new Set([o]);
  for (const queue = [o]; queue.length > 0 && component.size <= 12;)
    for (const a of neighbours(queue.pop()))
      if (!component.has(a)) {
        component.add(a);
        queue.push(a);
      }
  return component.size <= 12 && [...component].every((a) => element(a) !== 'N');
}

/**
 * Draws the cation of a ring nitrogen conjugated to an exocyclic imine as chemists do: the InChI
 * library writes dequalinium chloride as a neutral bis(quinolin-4-imine) with two HCl, and
 * dequalinium without its chlorides as a bis(quinolin-4-iminium); chemists draw the quinolinium with
 * its amine, and a 4-(dialkylamino)pyridinium (a DMAP salt) as the pyridinium, not the InChI
 * library's C=[N+](C)C (10 more of both sets as drawn); a pyridinium, a β-carbolinium or a
 * thiadiazolium that the rebuild charged on an ether's oxygen, C=[O+]C, is drawn so too (21 more).
 * A lone halide's or small acid's proton goes to the imine (cyclophanes of two 4-aminoquinoliniums
 * with their trifluoroacetates: 4 more of the holdout, 5 of the second sample), or an iminium's or
 * oxonium's charge moves, to the ring nitrogen, the bonds between them flipping (up to 8 bonds
 * apart). A cyclic amidine's or isothiourea's hydrohalide (its imine on the ring nitrogen's carbon:
 * a 2-iminothiazoline or 2-iminobenzimidazoline hydrobromide) and a hydrazone's or oxime's are drawn
 * as the neutral imine and HX, and stay so (15 more of the 500k holdout as drawn, 4 more of the
 * shared set). True when it changed.
 */
function ringCations(graph) {
  const { atoms, element, charge, charges, bondsOf, across, neighbours } = graph;
  // the protons a salt's imine may take: a lone hydrogen halide's, a small carboxylic acid's on its
  // own (trifluoroacetic acid; no nitrogen, at most 12 atoms)
  const halides = [];
  for (let a = 1; a <= atoms; a += 1) if (graph.loneHalide(a) || loneAcid(graph, a)) halides.push(a);
  // a cation the InChI library put on an atom chemists seldom draw charged, double-bonded: an iminium
  // (=[N+]R2, ring [NH+]=), an oxonium (=[O+]R), a halonium (=[Br+]), a thiopyrylium sulfur
  const iminium = (n) =>
    charge(n) === 1 &&
    (element(n) === 'N'
      ? bondsOf[n].some((bond) => bond.order === 2 && element(across(bond, n)) === 'C') &&
        bondsOf[n].every((bond) => element(across(bond, n)) !== 'O') &&
        (bondsOf[n].length <= 2 || bondsOf[n].some((bond) => bond.order === 2 && !inRing(graph, bond)))
      : ['O', 'S', 'Cl', 'Br', 'I'].includes(element(n)) &&
        bondsOf[n].some((bond) => bond.order === 2 && ['C', 'N'].includes(element(across(bond, n)))));
  // an imine a hydrohalide protonates: =NH or =N–C, not a hydrazone, oxime or sulfenamide
  const basicImine = (a) =>
    exocyclicImine(graph, a) && bondsOf[a].every((bond) => ['C', 'H'].includes(element(across(bond, a))));
  const carbonyl = (o) =>
    element(o) === 'O' &&
    charge(o) === 0 &&
    bondsOf[o].length === 1 &&
    bondsOf[o][0].order === 2 &&
    element(across(bondsOf[o][0], o)) === 'C';
  let changed = false;
  for (let n = 1; n <= atoms; n += 1) {
    if (!tertiaryRingNitrogen(graph, n) || charge(n) > 1) continue;
    if (charge(n) === 1) {
      // a protonated ring nitrogen conjugated to an oxo group: the proton goes to the oxygen
      const found = alternatingPath(graph, n, carbonyl, 12);
      if (!found) continue;
      graph.flip(found.path);
      changed = true;
      continue;
    }
    // a fused azolium's charge on the ring fusion's nitrogen goes to its substituted nitrogen
    // (an aromatic azolium: the nitrogen's ring neighbours all double-bonded)
    const substituted =
      bondsOf[n].some((bond) => !inRing(graph, bond)) &&
      bondsOf[n].every((bond) => !inRing(graph, bond) || bondsOf[across(bond, n)].some((b) => b.order === 2));
    const fusion = (a) =>
      substituted &&
      element(a) === 'N' &&
      neighbours(a).some((c) => neighbours(n).includes(c)) &&
      charge(a) === 1 &&
      bondsOf[a].length === 3 &&
      bondsOf[a].every((bond) => inRing(graph, bond));
    const charged = alternatingPath(graph, n, (a) => iminium(a) || fusion(a), 12);
    const protonated =
      !charged &&
      halides.length > 0 &&
      alternatingPath(graph, n, (a, path) => basicImine(a) && path.length > 2, longestToImine);
    const found = charged || protonated;
    if (!found) continue;
    graph.flip(found.path);
    charges.set(n, 1);
    charges.set(charged ? found.end : halides.pop(), charged ? 0 : -1);
    changed = true;
  }
  return changed;
}

/**
 * Moves a cation from one ring nitrogen to another (both of three bonds) where that makes more rings
 * aromatic, none fewer, as chemists draw them: a pyridinium and a fused triazole, not the InChI
 * library's quinoid dihydropyridine and triazolium; the bonds between them flip (up to 12). True when
 * it changed.
 */
function aromaticCations(graph) {
  const { atoms, element, charge, charges, bondsOf, neighbours } = graph;
  let rings; // found when first needed: most structures have no such cation
  const aromaticNow = () => aromaticRings(graph, (rings ??= smallRings(graph)));
  const ringCation = (a) =>
    element(a) === 'N' &&
    charge(a) === 1 &&
    bondsOf[a].length === 3 &&
    bondsOf[a].some((bond) => bond.order === 2 && inRing(graph, bond));
  let changed = false;
  for (let n = 1; n <= atoms; n += 1) {
    if (!tertiaryRingNitrogen(graph, n) || charge(n) !== 0) continue;
    let before;
    const found = alternatingPath(
      graph,
      n,
      (a, path) => {
        // not across an amidinium, N–C=N+, whose two forms are aromatic alike (an imidazolium's)
        if (!ringCation(a) || neighbours(a).some((c) => neighbours(n).includes(c))) return false;
        before ??= aromaticNow();
        return moreAromatic(graph, path, aromaticNow, before);
      },
      12,
    );
    if (!found) continue;
    graph.flip(found.path);
    charges.set(n, 1);
    charges.set(found.end, 0);
    changed = true;
  }
  return changed;
}

/**
 * A mesoionic ring's anion on its exocyclic oxygen or nitrogen, as chemists draw sydnones
 * (`[n+]1noc([O-])c1`) and sydnone imines (molsidomine, `[N-]c1c[n+](no1)…`), where the InChI
 * library put it on the ring nitrogen next to the ring's cation; the bonds between them flip. To a
 * nitrogen only where the InChI marks no mobile hydrogen: there an anion on an acylated nitrogen
 * joins them, and the molecule would have another InChI. True when it changed.
 */
function mesoionicAnions(graph, inchi) {
  const { atoms, element, charge, charges, bondsOf, across, neighbours } = graph;
  const ends = /\(H/.test(inchi) ? ['O'] : ['O', 'N'];
  const exocyclic = (a, path) => ends.includes(element(a)) && charge(a) === 0 && !inRing(graph, path[path.length - 1]);
  let changed = false;
  for (let n = 1; n <= atoms; n += 1) {
    const anion =
      element(n) === 'N' &&
      charge(n) === -1 &&
      bondsOf[n].length === 2 &&
      bondsOf[n].every((bond) => inRing(graph, bond)) &&
      neighbours(n).some((a) => charge(a) === 1 && bondsOf[n].some((bond) => across(bond, n) === a));
    if (!anion) continue;
    const found = alternatingPath(graph, n, exocyclic, 4);
    if (!found) continue;
    graph.flip(found.path);
    charges.set(n, 0);
    charges.set(found.end, -1);
    changed = true;
  }
  return changed;
}

/**
 * A sulfoxide, C-S(=O)-C, charge-separated, [S+]-[O-], as ChEMBL and most of the shared set's sources
 * draw it (63 of 87), not the InChI library's S=O; sulfites and sulfinamides keep S=O. A sulfoximine
 * the InChI library charged on its nitrogen, [S+]([N-])=O, which no source draws, is drawn with the
 * oxide, [S+](=N)[O-] (7 more of both 500k samples and 1 of the shared set). True when it changed.
 */
function sulfoxides(graph) {
  const { atoms, element, charge, charges, bondsOf, across, setOrder } = graph;
  let changed = false;
  for (let a = 1; a <= atoms; a += 1) {
    if (element(a) === 'S' && charge(a) === 1) {
      const imide = bondsOf[a].find(
        (bond) => bond.order === 1 && element(across(bond, a)) === 'N' && charge(across(bond, a)) === -1,
      );
      const oxide = bondsOf[a].find((bond) => terminalOxo(graph, bond, a));
      if (!imide || !oxide) continue;
      graph.flip([imide, oxide]);
      charges.set(across(imide, a), 0);
      charges.set(across(oxide, a), -1);
      changed = true;
      continue;
    }
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
  const { atoms, element, charge, charges, bondsOf, across } = graph;
  let changed = false;
  for (let o = 1; o <= atoms; o += 1) {
    const imine = element(o) === 'O' && charge(o) === -1 && iminolImine(graph, o);
    if (!imine) continue;
    const carbon = across(bondsOf[o][0], o);
    graph.flip([bondsOf[o][0], imine]);
    charges.set(o, 0);
    charges.set(across(imine, carbon), -1);
    changed = true;
  }
  return changed;
}

/**
 * An iminol, HO–C=N out of a ring, as the amide, O=C–NH, in a structure with a cation that holds no
 * hydrogen (a quaternary ammonium or phosphonium, a pyridinium): the InChI of such a salt often has
 * no mobile group for the amide's hydrogen, which the rebuild and the salt's redrawing leave on the
 * oxygen (a pyridinium's acylhydrazone or anilide, a phosphonium's amide with its trifluoroacetate).
 * True when it changed.
 */
function cationIminols(graph) {
  const { atoms, element, charge, bondsOf, across } = graph;
  if (!hydrogenFreeCation(graph)) return false;
  let changed = false;
  for (let o = 1; o <= atoms; o += 1) {
    const imine = element(o) === 'O' && charge(o) === 0 && iminolImine(graph, o);
    if (!imine || charge(across(bondsOf[o][0], o)) !== 0 || inRing(graph, imine)) continue;
    graph.flip([bondsOf[o][0], imine]);
    changed = true;
  }
  return changed;
}

/**
 * Moves the hydrogen of an azole (imidazole, pyrazole, triazole, tetrazole, fused or not) to the ring
 * nitrogen chemists draw it on most, where the InChI library's choice differs, by these in turn:
 *   - next to a ring fusion (1H-indazole, 1H-benzotriazole);
 *   - next to the most CH carbons (4-aryl-1H-imidazole, 3-aryl-1H-pyrazole);
 *   - next to one nitrogen and one carbon (1H-tetrazole: 18 of 33 times on the shared set, 39 of 55
 *     on the 500k sample; 1H-1,2,4-triazole);
 *   - on a fused azole, next to the fusion carbon whose neighbour on the other ring is an aza
 *     nitrogen (9H-purine, 3H-imidazo[4,5-b]pyridine), then is a CH (4-substituted 1H-benzimidazole:
 *     88 of 99 and 15 of 24 times), then the fusion carbon across from a substituent (5-substituted
 *     1H-benzimidazole: 156 of 297 and 100 of 152 times);
 *   - on a triazole, next to the carbon with an aryl, amino or alkoxy group, then a sulfur, rather
 *     than an alkyl (3-alkylthio-5-aryl-1H-1,2,4-triazoles: 20 of 31 times over both sets).
 * The bonds between the two nitrogens flip along alternating bonds. An NH the InChI puts on the
 * six-membered ring of a fused azole goes to the azole first. True when it changed.
 */
function azoleHydrogens(graph, mobile) {
  const { atoms, element, charge, bondsOf, across, valence } = graph;
  const hydrogens = (a) => (element(a) === 'C' && charge(a) === 0 ? 4 - valence[a] : 0);
  const fusion = (a) =>
    element(a) === 'C' && bondsOf[a].length === 3 && bondsOf[a].every((bond) => inRing(graph, bond));
  const ringNH = (n) => element(n) === 'N' && charge(n) === 0 && bondsOf[n].length === 2 && valence[n] === 2;
  const ringN = (n) => element(n) === 'N' && charge(n) === 0 && bondsOf[n].length === 2 && valence[n] === 3;
  const pyridineN = (n) => element(n) === 'N' && charge(n) === 0 && bondsOf[n].length === 2;
  /** An aromatic carbon with a substituent: a ring double bond and a single bond out of the rings. */
  const substituted = (c) =>
    element(c) === 'C' &&
    bondsOf[c].length === 3 &&
    bondsOf[c].some((bond) => bond.order === 2 && inRing(graph, bond)) &&
    bondsOf[c].some((bond) => bond.order === 1 && !inRing(graph, bond));
  /** What a carbon of an azole's `ring` bears: an aryl, a nitrogen or an oxygen 2, a sulfur 1, else 0. */
  const substituent = (c, ring) => {
    const [a, more] = bondsOf[c].map((bond) => across(bond, c)).filter((b) => !ring.includes(b));
    if (element(c) !== 'C' || a === undefined || more !== undefined) return 0;
    const aryl = element(a) === 'C' && bondsOf[a].some((bond) => bond.order === 2 && inRing(graph, bond));
    if (aryl || ['N', 'O'].includes(element(a))) return 2;
    return element(a) === 'S' ? 1 : 0;
  };
  const score = (n, ring) => {
    const neighbours = bondsOf[n].map((bond) => across(bond, n)).filter((a) => ring.includes(a));
    const count = (test) => neighbours.filter(test).length;
    // beyond a ring fusion next to `n`: the fused ring's atom next to the fusion (peri) and the one
    // across that ring from it (para)
    const onward = (a, not) =>
      bondsOf[a]
        .map((bond) => across(bond, a))
        .filter((b) => !ring.includes(b) && !not.includes(b) && bondsOf[b].length > 1);
    const peri = neighbours.filter(fusion).flatMap((f) => onward(f, []).map((p) => [f, p]));
    const triazole = ring.filter((a) => element(a) === 'N').length === 3;
    const para = peri.flatMap(([f, p]) =>
      onward(p, [f]).flatMap((x) => onward(x, [p, f]).filter((q) => !bondsOf[q].some((bond) => across(bond, q) === f))),
    );
    return [
      count(fusion),
      count((a) => hydrogens(a) > 0),
      count((a) => element(a) === 'N') === 1 ? 1 : 0,
      peri.filter(([, p]) => pyridineN(p)).length,
      peri.filter(([, p]) => hydrogens(p) > 0).length,
      para.filter(substituted).length,
      triazole ? neighbours.reduce((sum, c) => sum + substituent(c, ring), 0) : 0,
    ];
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
      graph.flip(azole.path);
      changed = true;
      continue;
    }
    if (!ring || !ring.slice(1).every((a) => bondsOf[a].some((bond) => bond.order === 2))) continue;
    let best = n;
    for (const m of ring) if (ringN(m) && mobile(n, m) && better(score(m, ring), score(best, ring))) best = m;
    const found = best !== n && alternatingPath(graph, n, (a) => a === best, 6);
    if (!found) continue;
    graph.flip(found.path);
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
  const { atoms, element, charge, bondsOf, valence, across } = graph;
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
    graph.flip(found.path);
    changed = true;
  }
  return changed;
}

/**
 * A pyrimidin-4(1H)-one (fused or not: a 2-aryl-quinazolinone, a thieno[2,3-d]pyrimidinone, a
 * 1,2,4-triazin-5-one) as the 4(3H)-one chemists draw, its NH next to the carbonyl (the cyclic
 * amide, the tautomer that exists), where the InChI library's rebuild put the hydrogen on N1, across
 * the ring's amidine: O=C4–N3=C2–N1H → O=C4–N3H–C2=N1, N1 and N3 sharing the hydrogen (39 more of
 * the 500k holdout as drawn, 3 more of the shared set). The rules for pyrimidin-4-ols below then see the 3H form. True
 * when it changed.
 */
function pyrimidinoneHydrogens(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder, neighbours } = graph;
  const ringN = (n, v) => element(n) === 'N' && charge(n) === 0 && bondsOf[n].length === 2 && valence[n] === v;
  const sp2 = (a) => ['C', 'N'].includes(element(a)) && bondsOf[a].some((bond) => bond.order === 2);
  let changed = false;
  for (let o = 1; o <= atoms; o += 1) {
    if (element(o) !== 'O' || charge(o) !== 0 || bondsOf[o].length !== 1 || bondsOf[o][0].order !== 2) continue;
    const c4 = across(bondsOf[o][0], o);
    if (element(c4) !== 'C') continue;
    for (const n3 of neighbours(c4)) {
      if (!ringN(n3, 3) || !bondsOf[c4].some((bond) => across(bond, c4) === n3 && bond.order === 1)) continue;
      const double = bondsOf[n3].find((bond) => bond.order === 2);
      const c2 = across(double, n3);
      if (element(c2) !== 'C') continue;
      const single = bondsOf[c2].find((bond) => {
        const n1 = across(bond, c2);
        // N1, C6, C5 close the six-membered ring with C4, C5 and C6 with a double bond each: not a
        // dihydro ring, nor an imidazo[5,1-f]triazinone's bridgehead nitrogen
        return (
          bond.order === 1 &&
          ringN(n1, 2) &&
          mobile(n1, n3) &&
          neighbours(n1).some(
            (c6) => c6 !== c2 && sp2(c6) && neighbours(c6).some((c5) => sp2(c5) && neighbours(c5).includes(c4)),
          )
        );
      });
      if (!single) continue;
      setOrder(double, 1);
      setOrder(single, 2);
      changed = true;
      break;
    }
  }
  return changed;
}

/**
 * A quinolin-2(1H)-one or quinoxalin-2(1H)-one, or another such lactam fused to a ring at the carbon
 * next to its nitrogen (a 5,6,7,8-tetrahydroquinolin-2(1H)-one), as the 2-ol most sources draw
 * (quinolin-2-ols 42 of 52 times on the shared set, 61 of 110 on the 500k holdout; quinoxalin-2-ols 3
 * of 3 and 19 of 27), where the InChI lets the hydrogen move between the oxygen and the ring
 * nitrogen; every other 2-pyridone keeps the lactam tautomer.cjs draws. Two quinolin-2(1H)-ones keep
 * it too: one with a carbonyl group at C3 (an ester, amide or ketone, hydrogen-bonded to the NH;
 * benzo-fused, 13 of 17, 14 of 17 and 1 of 3 times as the lactam on the 500k holdout, a second
 * 500k sample and the shared set), and the bare carbostyril, with nothing at C3 and C4 (5 of 6, 2
 * of 4, 4 of 6: brexpiprazole, indacaterol). True when it changed.
 */
function quinolinols(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder, neighbours } = graph;
  const carbon = (a) => element(a) === 'C' && charge(a) === 0;
  const fusion = (a) => carbon(a) && bondsOf[a].length === 3 && bondsOf[a].every((bond) => inRing(graph, bond));
  let changed = false;
  for (let o = 1; o <= atoms; o += 1) {
    if (element(o) !== 'O' || charge(o) !== 0 || bondsOf[o].length !== 1 || bondsOf[o][0].order !== 2) continue;
    const c2 = across(bondsOf[o][0], o);
    if (!carbon(c2) || bondsOf[c2].length !== 3) continue;
    const single = bondsOf[c2].find((bond) => {
      const n = across(bond, c2);
      return element(n) === 'N' && charge(n) === 0 && bondsOf[n].length === 2 && valence[n] === 2 && mobile(o, n);
    });
    const n1 = single && across(single, c2);
    const c3 = n1 && neighbours(c2).find((a) => a !== o && a !== n1);
    const c8a = n1 && neighbours(n1).find((a) => a !== c2);
    const c3c4 =
      c3 &&
      carbon(c3) &&
      bondsOf[c3].find((bond) => bond.order === 2 && ['C', 'N'].includes(element(across(bond, c3))));
    const c4 = c3c4 && across(c3c4, c3);
    // the fusion's carbons have their double bond: the ring is aromatic as the 2-ol
    const sp2 = (a) => fusion(a) && bondsOf[a].some((bond) => bond.order === 2);
    if (!c4 || !sp2(c8a) || !neighbours(c8a).some((a) => sp2(a) && neighbours(a).includes(c4))) continue;
    // a lactam fused on both sides (phenanthridin-6(5H)-one) keeps its NH
    if (fusion(c3)) continue;
    const atC3 = neighbours(c3).filter((a) => a !== c2 && a !== c4);
    const carbonyl = (a) =>
      carbon(a) && bondsOf[a].some((bond) => bond.order === 2 && ['O', 'N', 'S'].includes(element(across(bond, a))));
    if (carbon(c4) && (atC3.some(carbonyl) || (atC3.length === 0 && neighbours(c4).length === 2))) continue;
    setOrder(bondsOf[o][0], 1);
    setOrder(single, 2);
    changed = true;
  }
  return changed;
}

/**
 * A quinolin-4(1H)-one with a carbonyl group at C3 (an ester, acid or amide) and none at C2 (a
 * 1,8-naphthyridine too) as the quinolin-4-ol sources draw, the hydroxyl hydrogen-bonded to the
 * carbonyl (the Gould-Jacobs products, ethyl 4-hydroxyquinoline-3-carboxylate), where the InChI
 * lets the hydrogen move between the oxygen and N1; a 2-aryl-4-quinolone, a thieno- or
 * pyrrolopyridinone and every other 4-quinolone keep the lactam tautomer.cjs draws. True when it
 * changed.
 */
function acylQuinolinols(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder, neighbours, bondBetween } = graph;
  const carbon = (a) => element(a) === 'C' && charge(a) === 0;
  const fusion = (a) =>
    carbon(a) && bondsOf[a].length === 3 && bondsOf[a].every((bond) => inRing(graph, bond) && bond.order !== 3);
  const sp2 = (a) => fusion(a) && bondsOf[a].some((bond) => bond.order === 2);
  const carbonyl = (a) =>
    carbon(a) &&
    bondsOf[a].some((bond) => bond.order === 2 && element(across(bond, a)) === 'O' && !inRing(graph, bond));
  let changed = false;
  for (let o = 1; o <= atoms; o += 1) {
    if (element(o) !== 'O' || charge(o) !== 0 || bondsOf[o].length !== 1 || bondsOf[o][0].order !== 2) continue;
    const c4 = across(bondsOf[o][0], o);
    if (!carbon(c4) || bondsOf[c4].length !== 3) continue;
    for (const c3 of neighbours(c4)) {
      const c4a = neighbours(c4).find((a) => a !== o && a !== c3);
      const double = bondsOf[c3].find((bond) => bond.order === 2 && inRing(graph, bond));
      const c2 = double && across(double, c3);
      // C2 unsubstituted: a 2-aryl-4-quinolone is drawn as the lactam
      const n1 = c2 && bondsOf[c2].length === 2 && neighbours(c2).find((a) => a !== c3 && element(a) === 'N');
      if (!carbon(c3) || !neighbours(c3).some((a) => a !== c4 && a !== c2 && carbonyl(a))) continue;
      if (!n1 || charge(n1) !== 0 || bondsOf[n1].length !== 2 || valence[n1] !== 2 || !mobile(o, n1)) continue;
      const c8a = neighbours(n1).find((a) => a !== c2);
      if (!sp2(c4a) || !sp2(c8a) || !neighbours(c4a).includes(c8a)) continue;
      // on a six-membered ring (a quinoline, a naphthyridine), not a thieno- or pyrrolopyridine
      const x = neighbours(c4a).find((a) => a !== c4 && a !== c8a);
      const y = neighbours(c8a).find((a) => a !== n1 && a !== c4a);
      if (neighbours(x).some((a) => neighbours(y).includes(a))) continue;
      setOrder(bondsOf[o][0], 1);
      setOrder(bondBetween(c4, c3), 2);
      setOrder(double, 1);
      setOrder(bondBetween(c2, n1), 2);
      changed = true;
      break;
    }
  }
  return changed;
}

/**
 * A 2-alkylthio-pyrimidin-4(3H)-one (fused or not) as the pyrimidin-4-ol sources draw (25 of 28 times
 * on the shared set, 45 of 62 on the 500k holdout), where the InChI lets the hydrogen move between the
 * oxygen and N3; every other pyrimidinone keeps the lactam tautomer.cjs draws. True when it changed.
 */
function thioPyrimidinols(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder } = graph;
  const alkylthio = (s) =>
    element(s) === 'S' &&
    bondsOf[s].length === 2 &&
    bondsOf[s].every((bond) => bond.order === 1) &&
    bondsOf[s].some((bond) => {
      const c = across(bond, s);
      return element(c) === 'C' && valence[c] === bondsOf[c].length && !inRing(graph, bond);
    });
  let changed = false;
  for (let o = 1; o <= atoms; o += 1) {
    if (element(o) !== 'O' || charge(o) !== 0 || bondsOf[o].length !== 1 || bondsOf[o][0].order !== 2) continue;
    const c4 = across(bondsOf[o][0], o);
    if (element(c4) !== 'C') continue;
    const single = bondsOf[c4].find((bond) => {
      const n3 = across(bond, c4);
      if (element(n3) !== 'N' || charge(n3) !== 0 || bondsOf[n3].length !== 2 || valence[n3] !== 2) return false;
      if (!mobile(o, n3)) return false;
      const c2 = bondsOf[n3].map((b) => across(b, n3)).find((a) => a !== c4);
      return (
        element(c2) === 'C' &&
        bondsOf[c2].some((b) => b.order === 2 && element(across(b, c2)) === 'N' && inRing(graph, b)) &&
        bondsOf[c2].some((b) => alkylthio(across(b, c2)))
      );
    });
    if (!single) continue;
    setOrder(bondsOf[o][0], 1);
    setOrder(single, 2);
    changed = true;
  }
  return changed;
}

/**
 * A 2-amino-6-alkylpyrimidin-4(3H)-one, not fused, as the 2-amino-6-alkylpyrimidin-4-ol sources
 * draw and name (the guanidine and acetoacetate condensation product, 2-amino-4-hydroxy-6-methyl-
 * pyrimidine), where the InChI lets the hydrogen move between the oxygen and N3. True when it
 * changed.
 */
function aminoPyrimidinols(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder, neighbours } = graph;
  const ring = (a) => ringBondCount(graph, a);
  const alkyl = (a) => element(a) === 'C' && valence[a] === bondsOf[a].length;
  const amino = (n) => element(n) === 'N' && charge(n) === 0 && bondsOf[n].every((bond) => !inRing(graph, bond));
  let changed = false;
  for (let o = 1; o <= atoms; o += 1) {
    if (element(o) !== 'O' || charge(o) !== 0 || bondsOf[o].length !== 1 || bondsOf[o][0].order !== 2) continue;
    const c4 = across(bondsOf[o][0], o);
    if (element(c4) !== 'C' || ring(c4) !== 2) continue;
    const c5 = neighbours(c4).find((a) => a !== o && element(a) === 'C');
    const c6 = c5 && ring(c5) === 2 && neighbours(c5).find((a) => a !== c4 && element(a) === 'C' && ring(a) === 2);
    const n1 = c6 && neighbours(c6).find((a) => element(a) === 'N' && ring(a) === 2);
    if (!n1 || !neighbours(c6).some((a) => a !== c5 && a !== n1 && alkyl(a))) continue;
    const single = bondsOf[c4].find((bond) => {
      const n3 = across(bond, c4);
      if (element(n3) !== 'N' || charge(n3) !== 0 || bondsOf[n3].length !== 2 || valence[n3] !== 2) return false;
      const c2 = neighbours(n3).find((a) => a !== c4);
      return (
        mobile(o, n3) &&
        neighbours(c2).includes(n1) &&
        bondsOf[c2].some((b) => b.order === 2 && across(b, c2) === n1) &&
        bondsOf[c2].some((b) => b.order === 1 && amino(across(b, c2)))
      );
    });
    if (!single) continue;
    setOrder(bondsOf[o][0], 1);
    setOrder(single, 2);
    changed = true;
  }
  return changed;
}

/**
 * A pyrimidine-4(3H)-thione fused to an aromatic five-membered ring (6-mercaptopurine,
 * pyrazolo[3,4-d]pyrimidine-4-thiols) as the thiol sources draw and name (purine-6-thiol), and a
 * pyrimidin-4(3H)-one fused to a pyrazole or triazole (allopurinol, 8-azahypoxanthines) as the
 * -ol (4-hydroxypyrazolo[3,4-d]pyrimidine), where the InChI lets the hydrogen move between the
 * sulfur or oxygen and N3; one with an aryl at C2 (sildenafil) and purin-6-ones (hypoxanthine,
 * guanine) keep the lactam. True when it changed.
 */
function azolopyrimidinols(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder, neighbours } = graph;
  const ring = (a) => ringBondCount(graph, a);
  const aryl = (a) =>
    element(a) === 'C' && ring(a) > 0 && bondsOf[a].some((bond) => bond.order === 2 && inRing(graph, bond));
  /** The fused five-membered ring's atoms after C4a (x, z, y), or undefined. */
  const fiveRing = (c4, c4a) => {
    for (const x of neighbours(c4a))
      for (const c8a of neighbours(c4a))
        for (const y of x !== c4 && c8a !== c4 && c8a !== x && ring(c8a) === 3 ? neighbours(c8a) : [])
          for (const z of y !== c4a ? neighbours(y) : []) if (z !== c8a && neighbours(x).includes(z)) return [x, z, y];
    return undefined;
  };
  let changed = false;
  for (let s = 1; s <= atoms; s += 1) {
    if (!['S', 'O'].includes(element(s)) || charge(s) !== 0 || bondsOf[s].length !== 1 || bondsOf[s][0].order !== 2)
      continue;
    const c4 = across(bondsOf[s][0], s);
    if (element(c4) !== 'C' || ring(c4) !== 2) continue;
    const c4a = neighbours(c4).find((a) => a !== s && element(a) === 'C' && ring(a) === 3);
    if (!c4a || !bondsOf[c4a].some((bond) => bond.order === 2)) continue;
    const five = fiveRing(c4, c4a);
    if (!five) continue;
    const [x, z, y] = five.map(element);
    if (element(s) === 'O' && !(z === 'N' && (x === 'N' || y === 'N'))) continue;
    const single = bondsOf[c4].find((bond) => {
      const n3 = across(bond, c4);
      if (element(n3) !== 'N' || charge(n3) !== 0 || bondsOf[n3].length !== 2 || valence[n3] !== 2) return false;
      const c2 = neighbours(n3).find((a) => a !== c4);
      // sildenafil and its 5-aryl-pyrazolopyrimidinones are drawn as lactams
      if (element(s) === 'O' && bondsOf[c2].some((b) => !inRing(graph, b) && aryl(across(b, c2)))) return false;
      return (
        mobile(s, n3) && bondsOf[c2].some((b) => b.order === 2 && element(across(b, c2)) === 'N' && inRing(graph, b))
      );
    });
    if (!single) continue;
    setOrder(bondsOf[s][0], 1);
    setOrder(single, 2);
    changed = true;
  }
  return changed;
}

/**
 * A 4-amino-quinazoline-2(1H)-thione (fused on any aromatic ring) as the 2-thiol sources draw, where
 * the InChI lets the hydrogen move between the sulfur and N1. True when it changed.
 */
function aminoQuinazolineThiols(graph, mobile) {
  const { atoms, element, charge, bondsOf, valence, across, setOrder, neighbours } = graph;
  const ring = (a) => ringBondCount(graph, a);
  const amino = (n) => element(n) === 'N' && charge(n) === 0 && bondsOf[n].every((bond) => !inRing(graph, bond));
  const fusion = (a) => element(a) === 'C' && ring(a) === 3 && bondsOf[a].some((bond) => bond.order === 2);
  let changed = false;
  for (let s = 1; s <= atoms; s += 1) {
    if (element(s) !== 'S' || charge(s) !== 0 || bondsOf[s].length !== 1 || bondsOf[s][0].order !== 2) continue;
    const c2 = across(bondsOf[s][0], s);
    if (element(c2) !== 'C' || ring(c2) !== 2) continue;
    const c4 = (n3) => {
      const double = bondsOf[n3].find((bond) => bond.order === 2 && element(across(bond, n3)) === 'C');
      const c = double && across(double, n3);
      return c && neighbours(c).some(amino) && neighbours(c).some(fusion) ? c : undefined;
    };
    const single = bondsOf[c2].find((bond) => {
      const n1 = across(bond, c2);
      if (element(n1) !== 'N' || charge(n1) !== 0 || bondsOf[n1].length !== 2 || valence[n1] !== 2) return false;
      const n3 = neighbours(c2).find((a) => a !== s && a !== n1);
      return mobile(s, n1) && element(n3) === 'N' && c4(n3) && neighbours(n1).some(fusion);
    });
    if (!single) continue;
    setOrder(bondsOf[s][0], 1);
    setOrder(single, 2);
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
  const { atoms, element, charge, bondsOf, valence, across, setOrder, neighbours } = graph;
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
    setOrder(graph.bondBetween(donor, carbon), 2);
    changed = true;
  }
  return changed;
}

/**
 * One layer of an InChI (`h`, `b`), a component at a time: each component's part of the layer and the
 * number of its first atom less one (Indigo numbers a molfile's atoms as the InChI does, component
 * after component). Undefined when the layers cannot be read together.
 */
function componentLayer(inchi, letter) {
  const layers = inchi.split('/');
  const components = (layers[1] ?? '').split('.').flatMap((part) => {
    const [, times, formula] = /^(\d*)(.*)$/.exec(part);
    const heavy = [...formula.matchAll(/([A-Z][a-z]?)(\d*)/g)]
      .filter(([, element]) => element !== 'H')
      .reduce((sum, [, , count]) => sum + Number(count || 1), 0);
    return Array(Number(times || 1)).fill(heavy);
  });
  const layer = layers.find((text) => text.startsWith(letter));
  const segments = (layer?.slice(1) ?? '').split(';').flatMap((segment) => {
    const [, times, rest] = /^(?:(\d+)\*)?(.*)$/.exec(segment);
    return Array(Number(times || 1)).fill(rest);
  });
  if (layer && segments.length !== components.length) return undefined;
  let offset = 0;
  return components.map((heavy, c) => {
    const part = { offset, segment: segments[c] ?? '' };
    offset += heavy;
    return part;
  });
}

/**
 * Which atoms share a mobile hydrogen, by the InChI's mobile groups (`(H,9,10)` in its /h layer), as
 * a test `mobile(a, b)` on atom numbers. Every pair passes when the layers cannot be read.
 */
function mobileGroups(inchi) {
  const components = componentLayer(inchi, 'h');
  if (!components) return () => true;
  const group = new Map();
  components.forEach(({ offset, segment }, c) => {
    for (const [k, [, atoms]] of [...segment.matchAll(/\(H\d*-?,([\d,]+)\)/g)].entries())
      for (const atom of atoms.split(',')) group.set(offset + Number(atom), `${c}.${k}`);
  });
  return (a, b) => group.has(a) && group.get(a) === group.get(b);
}

/** The hydrogens of each atom that has its own (the /h layer outside its mobile groups), by atom number. */
function fixedHydrogens(inchi) {
  const count = new Map();
  for (const { offset, segment } of componentLayer(inchi, 'h') ?? [])
    for (const [, list, n] of segment.replace(/\([^)]*\)/g, '').matchAll(/([\d,-]+)H(\d*)/g))
      for (const range of list.split(',').filter(Boolean)) {
        const [from, to = from] = range.split('-').map(Number);
        for (let a = from; a <= to; a += 1) count.set(offset + a, Number(n || 1));
      }
  return count;
}

/**
 * The molfile of a structure as drawn, from Indigo's molfile of its Standard InChI `inchi` (laid
 * out or not); and whether it holds hydrogen atoms, which RDKit then removes.
 */
function drawnMolfile(molfile, inchi) {
  const graph = molfileGraph(molfile);
  if (!graph) return { molfile, explicitHydrogens: true };
  const redrawn =
    impossibleValences(graph, inchi) |
    redrawAsTheInChILibrary(graph, inchi) |
    protonsToWeakerAcids(graph) |
    protonsToAnions(graph) |
    pyridiniumOximes(graph) |
    protonsToNitrogenAnions(graph) |
    diazoCompounds(graph)
      ? graph.molfile()
      : molfile;
  const mobile = mobileGroups(inchi);
  // A cation the InChI writes as a neutral structure plus protons (/p+1) has no mobile group for the
  // hydrogen its normalisation took as that proton: a quaternary ammonium's or pyridinium's amide
  // N–H, which the rebuild puts back on the oxygen as an iminol. Its amides, lactams and the like
  // are drawn as such all the same (the Standard InChI is the same either way).
  const tautomer = commonTautomer(redrawn, /\/p\+/.test(inchi) ? () => true : mobile) ?? redrawn;
  const salts = molfileGraph(tautomer);
  const drawn =
    protonsToAmines(salts) |
    ringLactams(salts, mobile) |
    pyrimidinoneHydrogens(salts, mobile) |
    triazoleThiols(salts, mobile) |
    quinolinols(salts, mobile) |
    acylQuinolinols(salts, mobile) |
    thioPyrimidinols(salts, mobile) |
    aminoPyrimidinols(salts, mobile) |
    azolopyrimidinols(salts, mobile) |
    aminoQuinazolineThiols(salts, mobile) |
    ringImines(salts, mobile) |
    ringCations(salts) |
    aromaticCations(salts) |
    mesoionicAnions(salts, inchi) |
    amideAnions(salts) |
    azoleHydrogens(salts, mobile) |
    aromaticHydrogens(salts, mobile) |
    amidineHydrogens(salts, mobile) |
    cationIminols(salts) |
    sulfoxides(salts)
      ? salts.molfile()
      : tautomer;
  return { molfile: drawn, explicitHydrogens: graph.hasHydrogens() };
}

/**
 * What `read` (Indigo's reading of an InChI) gives of `inchi`, and whether the InChI's double-bond
 * stereo was left out: when Indigo refuses it ("Unsupported cis-trans configuration": a pyridinium's
 * oxime), `read` is given the InChI again without its /b layers. The molecule searched keeps no stereo;
 * a depiction then draws those bonds as either (eitherCisOrTrans). Any other error is thrown.
 */
function readInchi(read, inchi) {
  try {
    return { result: read(inchi), withoutStereo: false };
  } catch (error) {
    if (!/cis-trans/.test(String(error?.message ?? error)) || !/\/b/.test(inchi)) throw error;
    return { result: read(inchi.replace(/\/b[^/]*/g, '')), withoutStereo: true };
  }
}

/**
 * A molfile laid out without the InChI's double-bond stereo (readInchi) with each double bond of
 * the InChI's /b layer marked as either cis or trans, so that a depiction does not show a geometry by chance.
 */
function eitherCisOrTrans(molfile, inchi) {
  const graph = molfileGraph(molfile);
  if (!graph) return molfile;
  for (const { offset, segment } of componentLayer(inchi, 'b') ?? [])
    for (const [, x, y] of segment.matchAll(/(\d+)-(\d+)[+-]/g)) {
      const bond = graph.bondBetween(offset + Number(x), offset + Number(y));
      if (bond?.order === 2) graph.eitherCisOrTrans(bond);
    }
  return graph.molfile();
}

module.exports = { drawnMolfile, readInchi, eitherCisOrTrans };
