// The tautomer a chemist draws, for the molecule of a structure (drawn.cjs). The InChI library
// rebuilds a mobile hydrogen on one of the atoms that share it, often not the one chemists draw:
// paracetamol comes out as the iminol CC(O)=Nc1ccc(O)cc1, 4-(benzylamino)quinazoline as the imine of
// a 3H-quinazoline. On a V2000 molfile with implicit hydrogens (Indigo's molfile of an InChI), this
// moves such hydrogens by shifting bond orders, the hydrogens following by themselves (each atom
// keeps its valence):
//   X–C=N → X=C–N, X an OH or SH on the carbon: amides, lactams, ureas, imides, carbamates,
//     thioamides, thioureas, 2-pyridones and the lactams of pyrimidines and purines;
//   X–C=C–C=N → X=C–C=C–N, the four atoms from that carbon in one six-membered ring: 4-pyridones,
//     4-quinolones;
//   then, for an amino group on an aza-aromatic ring drawn as an exocyclic imine over a ring NH,
//   HN(ring)–C=N(exocyclic) → N=C–NH, and HN(ring)–A=B–C=N(exocyclic) → N=A–B=C–NH (A, B carbons
//     or nitrogens) in a five- or six-membered ring: 2- and 4-aminopyridines, aminopyrimidines,
//     4-aminoquinazolines, aminotetrazoles.
// Plain JavaScript, for the workers.

/** The atoms and bonds of a V2000 molfile, or undefined when it is not one. */
function parse(molfile) {
  const lines = molfile.split('\n');
  if (!/V2000/.test(lines[3] ?? '')) return undefined;
  // the counts line is fixed-width: "120130" is 120 atoms and 130 bonds
  const [atomCount, bondCount] = [Number(lines[3].slice(0, 3)), Number(lines[3].slice(3, 6))];
  const atoms = [null];
  for (let i = 1; i <= atomCount; i += 1) {
    const line = lines[3 + i] ?? '';
    // The charge field (an old-style charge), besides M  CHG, and the valence field: either makes the atom unusual.
    const unusual = line.slice(36, 39).trim() !== '0' || (line.slice(48, 51).trim() || '0') !== '0';
    atoms.push({ element: line.slice(31, 34).trim(), unusual, bonds: [] });
  }
  const bonds = [];
  for (let b = 0; b < bondCount; b += 1) {
    const at = 4 + atomCount + b;
    const line = lines[at] ?? '';
    const bond = { at, x: Number(line.slice(0, 3)), y: Number(line.slice(3, 6)), order: Number(line.slice(6, 9)) };
    if (!atoms[bond.x] || !atoms[bond.y]) return undefined;
    bonds.push(bond);
    atoms[bond.x].bonds.push(bond);
    atoms[bond.y].bonds.push(bond);
  }
  // Charged atoms, radicals and isotopes: left as they are.
  for (const line of lines)
    if (/^M {2}(CHG|RAD|ISO)/.test(line))
      for (let k = 0, f = line.slice(9).trim().split(/\s+/); k + 1 < f.length; k += 2)
        if (atoms[Number(f[k])] && Number(f[k + 1]) !== 0) atoms[Number(f[k])].unusual = true;
  return { lines, atoms, bonds };
}

const other = (bond, atom) => (bond.x === atom ? bond.y : bond.x);

/** Atom `a` is an OH or SH on a carbon: one single bond, to that carbon. */
function hydroxy(atoms, a) {
  const atom = atoms[a];
  if (!['O', 'S'].includes(atom.element) || atom.unusual || atom.bonds.length !== 1) return undefined;
  const [bond] = atom.bonds;
  const carbon = other(bond, a);
  return bond.order === 1 && atoms[carbon].element === 'C' && !atoms[carbon].unusual ? { bond, carbon } : undefined;
}

/** The double bond of atom `a` to a neutral, ordinary nitrogen, if any. */
function doubleToNitrogen(atoms, a) {
  return atoms[a].bonds.find(
    (bond) =>
      bond.order === 2 &&
      atoms[other(bond, a)].element === 'N' &&
      !atoms[other(bond, a)].unusual &&
      atoms[other(bond, a)].bonds.length <= 2,
  );
}

/**
 * Whether atoms `a` and `b` close a ring through two further atoms (six-membered, with the two
 * atoms of `avoid` between them on the other side), or also through one (five-membered) when `five`.
 */
function closesRing(atoms, a, b, avoid, five = false) {
  return atoms[a].bonds.some((first) => {
    const next = other(first, a);
    if (avoid.includes(next) || next === b) return false;
    if (five && atoms[next].bonds.some((second) => other(second, next) === b)) return true;
    return atoms[next].bonds.some((second) => {
      const last = other(second, next);
      return !avoid.includes(last) && last !== a && atoms[last].bonds.some((third) => other(third, last) === b);
    });
  });
}

/** Whether `bond` is in a ring: its atoms are joined without it. */
function inRing(atoms, bond) {
  const seen = new Set([bond.x]);
  const queue = [bond.x];
  while (queue.length > 0) {
    const a = queue.pop();
    for (const next of atoms[a].bonds) {
      if (next === bond) continue;
      const b = other(next, a);
      if (b === bond.y) return true;
      if (!seen.has(b)) {
        seen.add(b);
        queue.push(b);
      }
    }
  }
  return false;
}

/** Atom `a` is a ring NH between two single bonds (its hydrogen implicit). */
function ringNH(atoms, a) {
  const atom = atoms[a];
  return atom.element === 'N' && !atom.unusual && atom.bonds.length === 2 && atom.bonds.every((b) => b.order === 1);
}

/** The double bond of carbon `c` to an exocyclic nitrogen, if any. */
function exocyclicImine(atoms, c) {
  const imine = doubleToNitrogen(atoms, c);
  return imine && !inRing(atoms, imine) ? imine : undefined;
}

/** A carbon or nitrogen a double bond may move through. */
const conjugated = (atom) => ['C', 'N'].includes(atom.element) && !atom.unusual;

/**
 * The 1,5 path from atom `from` along `start` to c1, then c1=c2–c3 (c1 and c2 carbons or
 * nitrogens, c3 a carbon), ending at `ending(c3)`, a double bond to a nitrogen; the bonds to shift,
 * or undefined.
 */
function vinylogous(atoms, from, start, ending) {
  const c1 = other(start, from);
  if (!conjugated(atoms[c1])) return undefined;
  for (const alkene of atoms[c1].bonds) {
    const c2 = other(alkene, c1);
    if (alkene.order !== 2 || !conjugated(atoms[c2])) continue;
    for (const link of atoms[c2].bonds) {
      const c3 = other(link, c2);
      if (link.order !== 1 || c3 === c1 || atoms[c3].element !== 'C' || atoms[c3].unusual) continue;
      const imine = ending(c3);
      if (imine) return { bonds: [start, alkene, link, imine], c1, c2, c3 };
    }
  }
  return undefined;
}

/** The two ends of a path of bonds: the atom the hydrogen leaves and the one it goes to. */
function ends(bonds) {
  const [first, second, last, beforeLast] = [bonds[0], bonds[1], bonds.at(-1), bonds.at(-2)];
  const shared = (bond, next) => (bond.x === next.x || bond.x === next.y ? bond.x : bond.y);
  return [other(first, shared(first, second)), other(last, shared(last, beforeLast))];
}

/**
 * The bonds whose orders change (to 2, 1, 2, 1 in turn) for the first hydrogen that can move between
 * two atoms where `mobile(from, to)`, or undefined.
 */
function nextShift(atoms, mobile) {
  const moves = (bonds) => mobile(...ends(bonds));
  const hydroxys = [];
  const ringNHs = [];
  for (let a = 1; a < atoms.length; a += 1) {
    const found = hydroxy(atoms, a);
    if (found) hydroxys.push(found);
    else if (ringNH(atoms, a)) ringNHs.push(a);
  }
  for (const found of hydroxys) {
    const imine = doubleToNitrogen(atoms, found.carbon);
    if (imine && moves([found.bond, imine])) return [found.bond, imine];
  }
  for (const found of hydroxys) {
    const path = vinylogous(atoms, other(found.bond, found.carbon), found.bond, (c3) => doubleToNitrogen(atoms, c3));
    if (path && closesRing(atoms, other(path.bonds[3], path.c3), path.c1, [path.c2, path.c3]) && moves(path.bonds))
      return path.bonds;
  }
  for (const n of ringNHs)
    for (const bond of atoms[n].bonds) {
      const c = other(bond, n);
      if (atoms[c].element !== 'C' || atoms[c].unusual || !inRing(atoms, bond)) continue;
      const imine = exocyclicImine(atoms, c);
      if (imine && moves([bond, imine])) return [bond, imine];
    }
  for (const n of ringNHs)
    for (const bond of atoms[n].bonds) {
      const path = vinylogous(atoms, n, bond, (c3) => exocyclicImine(atoms, c3));
      if (path && closesRing(atoms, n, path.c3, [path.c1, path.c2], true) && moves(path.bonds)) return path.bonds;
    }
  return undefined;
}

/**
 * The molfile with the hydrogens above moved: iminols drawn as amides, hydroxy aza-aromatics as
 * their lactams, ring imines as amines; undefined when nothing moves, or the molfile is not V2000.
 * A hydrogen moves only between atoms where `mobile(from, to)`: those the InChI marks as sharing it.
 */
function commonTautomer(molfile, mobile = () => true) {
  const parsed = parse(molfile);
  if (!parsed) return undefined;
  const { lines, atoms } = parsed;
  let changed = false;
  // Each shift removes an O–H or S–H, or an exocyclic C=N: the loop ends.
  for (let shift = nextShift(atoms, mobile); shift; shift = nextShift(atoms, mobile)) {
    shift.forEach((bond, i) => {
      bond.order = i % 2 === 0 ? 2 : 1;
      lines[bond.at] = `${lines[bond.at].slice(0, 6)}${String(bond.order).padStart(3)}${lines[bond.at].slice(9)}`;
    });
    changed = true;
  }
  return changed ? lines.join('\n') : undefined;
}

module.exports = { commonTautomer };
