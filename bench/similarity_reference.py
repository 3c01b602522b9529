"""Python reference side of the similarity/substructure benchmark (RDKit + FPSim2 0.7.4).

Reads the benchmark TSV (`id<TAB>Standard InChI<TAB>InChIKey`), prints JSON lines. Run it with a
venv that has rdkit and FPSim2==0.7.4:
  python bench/similarity_reference.py fingerprints --in bench.tsv --out ref.fps --workers 2
  python bench/similarity_reference.py similarity --fps ref.fps --queries keys --thresholds 0.5,0.9
  python bench/similarity_reference.py substructure --in stored.tsv --queries smarts --limit 100
  python bench/similarity_reference.py drawn --in molecules.tsv.gz --stored stored.txt \
      --group amide 'C(=O)N|ALTERNATIVE SMARTS|...' [--group NAME SMILES ...] [--limit N] --workers 2
fingerprints derives from each InChI what chemxref stores (MolFromInchi: Morgan, pattern, binary), writing
`InChIKey<TAB>hex` a row: Morgan r2/2048 as 256 bytes, bit 8i+j = (byte i >> j) & 1, empty if none.
similarity and substructure read chemxref's stored fingerprints and molecules (base64). drawn reads the
fixture's molecules and chemxref's stored molecule of each row (base64, a line a row; see `drawn_row`).
"""
import argparse
import base64
import gzip
import json
import statistics
import sys
import tempfile
import time
from multiprocessing import Pool

import FPSim2
import numpy as np
import rdkit
import tables as tb
from FPSim2.io.backends.pytables import create_schema
from rdkit import Chem, DataStructs, RDLogger
from rdkit.Chem import rdFingerprintGenerator, rdSubstructLibrary as rdsl

RDLogger.DisableLog('rdApp.*')
FP_PARAMS = {'radius': 2, 'fpSize': 2048}
# Reverses the bits of a byte: our little-endian bit order -> FPSim2's MSB-first uint64 words.
REVERSE = np.array([int(f'{i:08b}'[::-1], 2) for i in range(256)], np.uint8)


def fingerprint_chunk(rows):
    gen = rdFingerprintGenerator.GetMorganGenerator(**FP_PARAMS)
    derived = ((gen.GetFingerprint(m), Chem.PatternFingerprint(m, 2048), m.ToBinary()) if m else None
               for m in (Chem.MolFromInchi(inchi) for inchi, _ in rows))
    fps = (DataStructs.BitVectToBinaryText(d[0]).hex() if d else '' for d in derived)
    return [f'{key}\t{fp}\n' for (_, key), fp in zip(rows, fps)]


def fingerprints(args):
    start = time.perf_counter()
    rows = [line.rstrip('\n').split('\t')[1:3] for line in open(args.input)]  # InChI, key
    chunks, failed = [rows[i:i + 1000] for i in range(0, len(rows), 1000)], 0
    with Pool(args.workers) as pool, open(args.out, 'w') as out:
        for lines in pool.imap(fingerprint_chunk, chunks):  # in order
            failed += sum(line.endswith('\t\n') for line in lines)
            out.writelines(lines)
    secs = time.perf_counter() - start
    print(json.dumps({'structures': len(rows), 'failed': failed, 'seconds': round(secs, 1),
                      'perSecond': round(len(rows) / secs), 'workers': args.workers}))


def fpsim2_engine(ids, words, popcnt, path):
    """Writes the fingerprints as an FPSim2 0.7 database file, sorted by popcount, and loads it."""
    order = np.argsort(popcnt, kind='stable')
    with tb.open_file(path, mode='w') as h5:
        table = h5.create_table(h5.root, 'fps', create_schema(2048))
        columns = [ids[order], *words[order].T, popcnt[order]]
        table.append(np.rec.fromarrays(columns, dtype=table.dtype))
        counts, first = np.unique(popcnt[order], return_index=True)
        ends = [*first[1:], len(ids)]
        bins = [(int(c), (int(s), int(e))) for c, s, e in zip(counts, first, ends)]
        config = h5.create_vlarray(h5.root, 'config', atom=tb.ObjectAtom())
        for item in ('Morgan', dict(FP_PARAMS), rdkit.__version__, FPSim2.__version__, bins):
            config.append(item)
    return FPSim2.FPSim2Engine(path, in_memory_fps=True)


def similarity(args):
    rows = [line.rstrip('\n').split('\t') for line in open(args.fps)]  # key, hex
    ids = np.array([n for n, (_, fp) in enumerate(rows, 1) if fp], np.int64)  # 1-based rows
    distinct = {}  # hex -> its row in the table of distinct fingerprints (held once, then indexed)
    which = np.array([distinct.setdefault(fp, len(distinct)) for _, fp in rows if fp], np.int64)
    fps = np.frombuffer(bytes.fromhex(''.join(distinct)), np.uint8).reshape(-1, 256)[which]
    words = REVERSE[fps].view('>u8').astype('<u8')
    popcnt = np.bitwise_count(words).sum(1).astype(np.int64)
    index_of = {rows[n - 1][0]: i for i, n in reversed(list(enumerate(ids)))}  # key -> fps index
    start = time.perf_counter()
    with tempfile.NamedTemporaryFile(suffix='.h5') as h5:
        engine = fpsim2_engine(ids, words, popcnt, h5.name)
    secs = round(time.perf_counter() - start, 1)
    print(json.dumps({'fingerprints': len(ids), 'engineSeconds': secs}))
    times = {float(t): [] for t in args.thresholds.split(',')}  # threshold -> ms
    for key in (q.strip() for q in open(args.queries) if q.strip()):
        r = index_of[key]
        query = DataStructs.CreateFromBinaryText(fps[r].tobytes())
        for t in times:
            start = time.perf_counter()
            res = engine.similarity(query, t, n_workers=1)
            times[t].append((time.perf_counter() - start) * 1000)
            print(json.dumps({'query': key, 'threshold': t, 'ms': round(times[t][-1], 3),
                              'hits': [[rows[i - 1][0], round(float(c), 6)] for i, c in res]}))
    print(json.dumps({'p50ms': {t: round(statistics.median(v), 3) for t, v in times.items()}}))


def substructure(args):
    rows = [line.rstrip('\n').split('\t') for line in open(args.input)]  # key, stored molecule
    lib = rdsl.SubstructLibrary(rdsl.CachedMolHolder(), rdsl.PatternHolder())
    lib_rows, secs = [], 0.0  # library index -> row
    for n, (_, stored) in enumerate(rows, 1):
        start = time.perf_counter()
        mol = Chem.Mol(base64.b64decode(stored)) if stored else None
        if mol is not None:
            lib.AddMol(mol)
            lib_rows.append(n)
        secs += time.perf_counter() - start
    print(json.dumps({'rows': len(rows), 'molecules': len(lib), 'buildSeconds': round(secs, 1)}))
    times = []
    for text in (q.strip() for q in open(args.queries) if q.strip()):
        query = Chem.MolFromSmarts(text)
        start = time.perf_counter()
        # One thread gives the matches in library order: the first `limit` by row, as checked against
        # a plain HasSubstructMatch loop when this was written.
        first = list(lib.GetMatches(query, numThreads=1, maxResults=args.limit))
        times.append((time.perf_counter() - start) * 1000)
        found = [lib_rows[i] for i in first]
        print(json.dumps({'query': text, 'ms': round(times[-1], 3), 'rows': found,
                          'keys': [rows[n - 1][0] for n in found]}))
    print(json.dumps({'p50ms': round(statistics.median(times), 3), 'queries': len(times)}))


# Metals by element: alkali and alkaline earth, Al, Ga to Sn, the transition metals, the lanthanides
# and actinides, Tl to Po; not the metalloids (B, Si, Ge, As, Sb, Te).
METALS = frozenset([3, 4, 11, 12, 13, *range(19, 32), *range(37, 51), *range(55, 85),
                    *range(87, 119)])
# Atoms drawn X=O or [X+]-[O-] alike, as src/toolkits/query-tautomers.cjs treats them.
OXIDE_ATOMS = frozenset([15, 16, 17, 33, 34, 35, 52, 53])


def canonical_places(mol):
    """The InChI of `mol` and its heavy atoms by their place in the InChI's numbering: (component,
    number) -> atom index, from the AuxInfo's N layer (1-based atom indices, components by ';')."""
    inchi, aux = Chem.MolToInchiAndAuxInfo(mol)
    layer = next((part[2:] for part in aux.split('/') if part.startswith('N:')), '')
    return inchi, {(c, n): int(atom) - 1 for c, component in enumerate(layer.split(';'))
                   for n, atom in enumerate(component.split(',')) if atom}


def difference(drawn, other):
    """Why `other` is not the molecule `drawn` (None when they are the same, stereo aside): a class
    of tautomers or charges, found by pairing their atoms through the InChI's numbering and
    comparing each atom's hydrogens and charge."""
    if other is None:
        return 'no molecule'
    # Stereo aside: the stored molecule has none (no coordinates), and neither fingerprints nor
    # substructure matches read it.
    drawn, other = Chem.Mol(drawn), Chem.Mol(other)
    for m in (drawn, other):
        Chem.RemoveStereochemistry(m)
    if Chem.MolToSmiles(drawn) == Chem.MolToSmiles(other):
        return None
    (inchi, places), (their_inchi, theirs) = canonical_places(drawn), canonical_places(other)
    if inchi != their_inchi or places.keys() != theirs.keys():
        return "another InChI (the molecule's own differs)"
    pairs = [(drawn.GetAtomWithIdx(places[k]), other.GetAtomWithIdx(theirs[k])) for k in places]
    moved = [(a, b) for a, b in pairs if a.GetTotalNumHs(True) != b.GetTotalNumHs(True)]
    charged = [(a, b) for a, b in pairs if a.GetFormalCharge() != b.GetFormalCharge()]
    if any(a.GetAtomicNum() == 8 and any(n.GetAtomicNum() in OXIDE_ATOMS for n in a.GetNeighbors())
           for a, _ in charged):
        return 'X+-O- against X=O (S, P, halogen oxides)'
    if charged and moved:
        return 'protons placed otherwise (salts, zwitterions)'
    if charged:
        return 'charges placed otherwise'
    if not moved:
        return 'bonds only (conjugation drawn otherwise)'
    if any(a.GetAtomicNum() == 6 for a, _ in moved):
        return 'hydrogen on carbon (keto-enol, imine-enamine)'
    chalcogens = [(a, b) for a, b in moved if a.GetAtomicNum() in (8, 16)]
    if any(n.GetIsAromatic() for pair in chalcogens for m in pair for n in m.GetNeighbors()):
        return 'OH on an aromatic ring against oxo (pyridones, tropolones)'
    if chalcogens:
        return 'amide against iminol, lactam against lactim'
    if all(m.IsInRingSize(5) and m.GetIsAromatic() for pair in moved for m in pair):
        return 'ring NH of azoles'
    return 'H between nitrogens (amidines, guanidines, aminoazines)'


def drawn_row(row, smiles, inchi, stored, groups):
    """One row: whether RDKit reads its SMILES, has a metal, and gives the file's InChI for it; then
    the Morgan fingerprint (hex, as `fingerprints` writes them) of the drawn molecule; which groups
    the drawn and the stored molecule contain ('0'/'1' a group); why the stored molecule differs
    from the drawn one; and whether the drawn molecule's Morgan is that of MolFromInchi's rebuild."""
    drawn = Chem.MolFromSmiles(smiles)
    if drawn is None:
        return {'row': row, 'readable': False}
    metal = any(atom.GetAtomicNum() in METALS for atom in drawn.GetAtoms())
    same = Chem.MolToInchi(drawn) == inchi
    line = {'row': row, 'readable': True, 'metal': metal, 'sameInchi': same}
    if metal or not same:
        return line
    gen = rdFingerprintGenerator.GetMorganGenerator(**FP_PARAMS)
    kept = Chem.Mol(base64.b64decode(stored)) if stored else None
    has = lambda m: ''.join('1' if m and any(m.HasSubstructMatch(q) for q in g) else '0' for g in groups)
    line.update(drawn=DataStructs.BitVectToBinaryText(gen.GetFingerprint(drawn)).hex(),
                groups={'drawn': has(drawn), 'stored': has(kept)}, why=difference(drawn, kept),
                asRebuilt=gen.GetFingerprint(drawn) == gen.GetFingerprint(Chem.MolFromInchi(inchi) or Chem.Mol()))
    if line['why'] and kept:
        line['storedSmiles'] = Chem.MolToSmiles(kept)
    return line


def drawn_chunk(chunk):
    rows, patterns = chunk
    groups = [[Chem.MolFromSmiles(s), *map(Chem.MolFromSmarts, alts)] for s, *alts in (p.split('|') for p in patterns)]
    return [json.dumps(drawn_row(*row, groups)) + '\n' for row in rows]


def drawn(args):
    start = time.perf_counter()
    with gzip.open(args.input, 'rt') as lines, open(args.stored) as stored:
        next(lines)  # the header
        rows = [(n, *line.rstrip('\n').split('\t')[2:4], kept.strip())
                for n, (line, kept) in enumerate(zip(lines, stored), 1)][:args.limit]
    patterns = [smiles for _, smiles in args.group]
    chunks = [(rows[i:i + 300], patterns) for i in range(0, len(rows), 300)]
    with Pool(args.workers) as pool:
        for lines in pool.imap(drawn_chunk, chunks):  # in order
            sys.stdout.writelines(lines)
    print(json.dumps({'rows': len(rows), 'seconds': round(time.perf_counter() - start, 1),
                      'workers': args.workers}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    commands = ('fingerprints', 'similarity', 'substructure', 'drawn')
    fps, sim, subs, drw = (sub.add_parser(c) for c in commands)
    for p, name in ((fps, '--in'), (fps, '--out'), (sim, '--fps'), (sim, '--queries'),
                    (subs, '--in'), (subs, '--queries'), (drw, '--in'), (drw, '--stored')):
        p.add_argument(name, dest='input' if name == '--in' else None, required=True)
    for p in (fps, drw):
        p.add_argument('--workers', type=int, default=2)
    drw.add_argument('--group', nargs=2, action='append', default=[], metavar=('NAME', 'SMILES'))
    drw.add_argument('--limit', type=int, default=None)
    sim.add_argument('--thresholds', default='0.5,0.7,0.9')
    subs.add_argument('--limit', type=int, default=100)
    args = parser.parse_args()
    globals()[args.command](args)


if __name__ == '__main__':
    main()
