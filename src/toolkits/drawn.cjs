// The molecule of a structure, as a chemist draws it, derived from its Standard InChI alone: one
// implementation for fingerprints, substructure matches and depictions (molecule-worker.cjs,
// depict-worker.cjs), so loads, queries and pictures can never drift apart. It works on Indigo's
// V2000 molfile of the InChI, which is the molecule the InChI library rebuilds:
//   1. its charges are redrawn as the InChI library draws them (Indigo writes some otherwise);
//   2. the mobile hydrogens move to where chemists draw them (tautomer.cjs).
// A change to what it gives raises `moleculeDerivation` (molecules.ts). Plain JavaScript, for workers.
const { commonTautomer } = require('./tautomer.cjs');

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
  /** The shortest alternating path from `start` into an atom where it `ends`, through no negative atom. */
  const partner = (start, ends) => alternatingPath(graph, start, ends, longestBetweenCharges, (a) => charge(a) >= 0);
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

/** Whether `bond` is in a ring: its atoms are joined without it. */
function inRing({ bondsOf }, bond) {
  const seen = new Set([bond.x]);
  for (const queue = [bond.x]; queue.length > 0;)
    for (const next of bondsOf[queue.pop()]) {
      if (next === bond) continue;
      for (const b of [next.x, next.y]) {
        if (b === bond.y) return true;
        if (seen.has(b)) continue;
        seen.add(b);
        queue.push(b);
      }
    }
  return false;
}

/**
 * The shortest path from atom `start` of alternating bonds, single first, whose last (double) bond
 * ends in an atom where `ends(atom, path)`, of at most `longest` bonds, going on only through atoms
 * where `through(atom)`; undefined when there is none.
 */
function alternatingPath({ bondsOf, across }, start, ends, longest, through = () => true) {
  const reached = new Set([start]);
  for (let level = [{ atom: start, path: [] }]; level.length > 0 && level[0].path.length < longest;) {
    const next = [];
    for (const { atom, path } of level)
      for (const bond of bondsOf[atom]) {
        const end = across(bond, atom);
        if (bond.order !== (path.length % 2 === 0 ? 1 : 2) || reached.has(end)) continue;
        reached.add(end);
        const found = { end, path: [...path, bond] };
        if (bond.order === 2 && ends(end, found.path)) return found;
        if (through(end)) next.push({ atom: end, path: found.path });
      }
    level = next;
  }
  return undefined;
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
 * Draws the hydrohalide salt of a ring nitrogen conjugated to an exocyclic imine as chemists do: the
 * InChI library writes dequalinium chloride as a neutral bis(quinolin-4-imine) with two HCl; chemists
 * draw the quinolinium with its amine and a chloride. The halide's proton goes to the imine, the charge
 * to the ring nitrogen, the bonds between them flipping (up to 8 bonds apart). True when it changed.
 */
function protonatedImineSalts(graph) {
  const { atoms, element, charge, charges, bondsOf, setOrder } = graph;
  const halides = [];
  for (let a = 1; a <= atoms; a += 1)
    if (['Cl', 'Br', 'I'].includes(element(a)) && bondsOf[a].length === 0 && charge(a) === 0) halides.push(a);
  let changed = false;
  for (let n = 1; n <= atoms && halides.length > 0; n += 1) {
    const ringNitrogen =
      element(n) === 'N' &&
      charge(n) === 0 &&
      bondsOf[n].length === 3 &&
      bondsOf[n].every((bond) => bond.order === 1) &&
      bondsOf[n].some((bond) => inRing(graph, bond));
    const found = ringNitrogen && alternatingPath(graph, n, (a) => exocyclicImine(graph, a), longestToImine);
    if (!found) continue;
    for (const bond of found.path) setOrder(bond, 3 - bond.order);
    charges.set(n, 1);
    charges.set(halides.pop(), -1);
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
    ringImines(salts, mobile) | protonatedImineSalts(salts) | amideAnions(salts) | azoleHydrogens(salts, mobile)
      ? salts.molfile()
      : tautomer;
  return { molfile: drawn, explicitHydrogens: graph.hasHydrogens() };
}

module.exports = { drawnMolfile };
