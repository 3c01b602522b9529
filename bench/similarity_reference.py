"""Python reference side of the similarity/substructure benchmark (RDKit + FPSim2 0.7.4).

Reads the benchmark TSV (`id<TAB>Standard InChI<TAB>InChIKey`), prints JSON lines. Run it with a
venv that has rdkit and FPSim2==0.7.4:
  python bench/similarity_reference.py fingerprints --in bench.tsv --out ref.fps --workers 2
  python bench/similarity_reference.py similarity --fps ref.fps --queries keys --thresholds 0.5,0.9
      [--copies FILE ...]  (lines `UCI<TAB>key<TAB>row`: more structures, each sharing a row's fingerprint)
  python bench/similarity_reference.py substructure --in bench.tsv --queries smarts --limit 100
fingerprints writes `InChIKey<TAB>hex` per row in order: Morgan radius 2, 2048 bits as 256 bytes,
bit 8i+j = (byte i >> j) & 1 (BitVectToBinaryText); empty if RDKit cannot read the InChI.
"""
import argparse
import json
import statistics
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
    mols = (Chem.MolFromInchi(inchi) for inchi, _ in rows)
    fps = (DataStructs.BitVectToBinaryText(gen.GetFingerprint(m)).hex() if m else '' for m in mols)
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
    for line in (line for name in args.copies for line in open(name)):  # UCI, key, row it shares
        _, key, row = line.rstrip('\n').split('\t')
        rows.append((key, rows[int(row) - 1][1]))
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
    rows = [line.rstrip('\n').split('\t')[1:3] for line in open(args.input)]
    lib = rdsl.SubstructLibrary(rdsl.CachedTrustedSmilesMolHolder(), rdsl.PatternHolder())
    lib_rows, secs = [], 0.0  # library index -> row
    for n, (inchi, _) in enumerate(rows, 1):
        start = time.perf_counter()
        mol = Chem.MolFromInchi(inchi)
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
                          'keys': [rows[n - 1][1] for n in found]}))
    print(json.dumps({'p50ms': round(statistics.median(times), 3), 'queries': len(times)}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    fps, sim, subs = (sub.add_parser(c) for c in ('fingerprints', 'similarity', 'substructure'))
    for p, name in ((fps, '--in'), (fps, '--out'), (sim, '--fps'), (sim, '--queries'),
                    (subs, '--in'), (subs, '--queries')):
        p.add_argument(name, dest='input' if name == '--in' else None, required=True)
    fps.add_argument('--workers', type=int, default=2)
    sim.add_argument('--thresholds', default='0.5,0.7,0.9')
    sim.add_argument('--copies', nargs='*', default=[])
    subs.add_argument('--limit', type=int, default=100)
    args = parser.parse_args()
    globals()[args.command](args)


if __name__ == '__main__':
    main()
