// A V2000 molfile as a graph whose bonds and charges can be redrawn in place, and the searches on it
// that the redraws share (rings, alternating paths). Plain JavaScript, for the workers.

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
  const setOrder = (bond, order) => {
    lines[bond.at] = `${lines[bond.at].slice(0, 6)}${String(order).padStart(3)}${lines[bond.at].slice(9)}`;
    valence[bond.x] += order - bond.order;
    valence[bond.y] += order - bond.order;
    bond.order = order;
  };
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
    /** Gives atom `a` its element's usual valence again: the atom block's valence field, 0 meaning none given. */
    withUsualValence(a) {
      lines[3 + a] = `${lines[3 + a].slice(0, 48)}  0${lines[3 + a].slice(51)}`;
    },
    charge: (a) => charges.get(a) ?? 0,
    across: (bond, a) => (bond.x === a ? bond.y : bond.x),
    /** The bond between atoms `a` and `b`, if they are bonded. */
    bondBetween(a, b) {
      return bondsOf[a]?.find((bond) => (bond.x === a ? bond.y : bond.x) === b);
    },
    /** The atoms bonded to `a`. */
    neighbours(a) {
      return bondsOf[a].map((bond) => (bond.x === a ? bond.y : bond.x));
    },
    setOrder,
    /** Marks a double bond as either cis or trans: the bond block's stereo field 3. */
    eitherCisOrTrans(bond) {
      lines[bond.at] = `${lines[bond.at].slice(0, 9)}  3${lines[bond.at].slice(12)}`;
    },
    /** Flips the single and double bonds of an alternating path (`alternatingPath`'s `path`). */
    flip(path) {
      for (const bond of path) setOrder(bond, 3 - bond.order);
    },
    /** Whether atom `a` is a lone chloride, bromide or iodide without a charge (a hydrohalide's). */
    loneHalide(a) {
      return ['Cl', 'Br', 'I'].includes(element(a)) && bondsOf[a].length === 0 && (charges.get(a) ?? 0) === 0;
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

/** Whether `bond` is in a ring of at most `most` atoms (a macrocycle's bond is not). */
function inSmallRing({ bondsOf }, bond, most = 8) {
  const seen = new Set([bond.x]);
  let level = [bond.x];
  for (let length = 1; length < most && level.length > 0; length += 1) {
    const next = [];
    for (const a of level)
      for (const b of bondsOf[a]) {
        if (b === bond) continue;
        const end = b.x === a ? b.y : b.x;
        if (end === bond.y) return true;
        if (!seen.has(end)) {
          seen.add(end);
          next.push(end);
        }
      }
    level = next;
  }
  return false;
}

/** Whether `bond` is in a ring: its atoms are joined without it. */
function inRing(graph, bond) {
  return inSmallRing(graph, bond, Infinity);
}

/** How many of atom `a`'s bonds are in a ring. */
function ringBondCount(graph, a) {
  return graph.bondsOf[a].filter((bond) => inRing(graph, bond)).length;
}

/**
 * The shortest path from atom `start` of alternating bonds, single first, whose last (double) bond
 * ends in an atom where `ends(atom, path)`, of at most `longest` bonds, going on only through atoms
 * where `through(atom)`, and through no atom twice; undefined when there is none. An atom is reached
 * once by a single bond and once by a double one: the nitrogens of a pyrazole are joined both by
 * their own single bond and by the ring's alternating bonds.
 */
function alternatingPath({ bondsOf, across }, start, ends, longest, through = () => true) {
  const reached = new Set([`${start} 1`, `${start} 2`]);
  for (let level = [{ atom: start, path: [], atoms: [start] }]; level.length > 0 && level[0].path.length < longest;) {
    const next = [];
    for (const { atom, path, atoms } of level)
      for (const bond of bondsOf[atom]) {
        const end = across(bond, atom);
        const order = path.length % 2 === 0 ? 1 : 2;
        if (bond.order !== order || atoms.includes(end) || reached.has(`${end} ${order}`)) continue;
        reached.add(`${end} ${order}`);
        const found = { end, path: [...path, bond] };
        if (bond.order === 2 && ends(end, found.path)) return found;
        if (through(end)) next.push({ atom: end, path: found.path, atoms: [...atoms, end] });
      }
    level = next;
  }
  return undefined;
}

module.exports = { molfileGraph, inRing, inSmallRing, ringBondCount, alternatingPath };
