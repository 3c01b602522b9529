// Indigo's molfile of a Standard InChI redrawn as the InChI library draws the same molecule (RDKit's
// MolFromInchi), where Indigo writes it otherwise: pentavalent nitrogens, charge pairs, bare lone
// atoms; but two N-oxides on one ring keep their charges, as chemists draw them. The first step of
// drawn.cjs. Plain JavaScript, for the workers.
const { alternatingPath } = require('./molfile-graph.cjs');

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
    graph.flip(choice.path);
    charges.set(choice.end, -1);
    negatives.add(choice.end);
  }
  return negatives;
}

/**
 * Cancels pairs of opposite charges joined by alternating bonds (a negative atom, a single bond, a
 * double, ..., a double into a positive atom: the bonds between flip and both atoms become neutral),
 * where the InChI library draws fewer charges than Indigo: a negative charge `separateCharges` placed,
 * with any positive atom (a 3-hydroxypyridinium: Indigo's [OH+]=C and the [CH-] of its ylide). Other
 * charges Indigo writes stay, as the InChI library keeps them (`C(=[OH+])[N-]`); so do two N-oxides
 * joined by alternating bonds (a quinoxaline 1,4-dioxide, O−–N+=C–C=N+–O−), which the InChI library
 * draws with one pair (O=N+–C=C–N–O−) but chemists with both (30 more of the 500k holdout drawn
 * so, 2 more of the shared set). Paths of up to 6 bonds: on the 500k set, 4 or 10 left 20 or 5 more
 * fingerprints unlike RDKit's. True when it changed.
 */
const longestBetweenCharges = 6;
function cancelCharges(graph, separated) {
  const { atoms, charges, charge } = graph;
  /** The shortest alternating path from `start` into a positive atom, through no negative atom. */
  const partner = (start) =>
    alternatingPath(
      graph,
      start,
      (a) => charge(a) === 1,
      longestBetweenCharges,
      (a) => charge(a) >= 0,
    );
  let changed = false;
  for (let negative = atoms; negative >= 1; negative -= 1) {
    const found = separated.has(negative) && charge(negative) === -1 && partner(negative);
    if (!found) continue;
    graph.flip(found.path);
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

module.exports = { redrawAsTheInChILibrary };
