#!/bin/bash
# The holdout of `npm run bench:similarity -- --drawn --file F`: 30,000 molecules as their depositors drew
# them, drawn at random (Python's random.seed(58)) from the SMILES of the 500K test set of the npm package
# @datagrok/chem 1.17.15, each with the Standard InChI and InChIKey RDKit computes; rows in the columns of
# test/fixtures/chemistry/molecules.tsv.gz (source, id, smiles, std_inchi, std_inchikey). Needs npm, unzip
# and a Python with RDKit (CHEMXREF_PY, as bench:similarity); about a minute. With `2`, a second
# sample to check a rule on molecules it was not tuned on: 30,000 others (random.seed(59)).
#
#   bash scripts/make-drawn-holdout.sh        # writes /tmp/chemwork/drawn-holdout.tsv.gz
#   bash scripts/make-drawn-holdout.sh 2      # writes /tmp/chemwork/drawn-holdout-2.tsv.gz
set -euo pipefail
W=${W:-/tmp/chemwork}
SAMPLE=${1:-1}
OUT=$W/drawn-holdout.tsv.gz
[ "$SAMPLE" = 2 ] && OUT=$W/drawn-holdout-2.tsv.gz
PY=${CHEMXREF_PY:-/root/.cache/chemxref-py}/bin/python
mkdir -p "$W/holdout"
cd "$W/holdout"
npm pack --silent @datagrok/chem@1.17.15 >/dev/null
tar xzf datagrok-chem-1.17.15.tgz package/files/tests/smiles_500K.zip
unzip -o -q package/files/tests/smiles_500K.zip
"$PY" - "$OUT" "$SAMPLE" <<'PY'
import gzip, random, sys
from rdkit import Chem, RDLogger
RDLogger.DisableLog('rdApp.*')
lines = [l.strip() for l in open('smiles_500K.csv').read().split('\n')[1:] if l.strip()]
random.seed(58)
rows = random.sample(range(len(lines)), 30000)
if sys.argv[2] == '2':
    first = set(rows)
    random.seed(59)
    rows = random.sample([i for i in range(len(lines)) if i not in first], 30000)
with gzip.open(sys.argv[1], 'wt') as out:
    out.write('source\tid\tsmiles\tstd_inchi\tstd_inchikey\n')
    for i in sorted(rows):
        mol = Chem.MolFromSmiles(lines[i])
        inchi = Chem.MolToInchi(mol) if mol else ''
        if inchi.startswith('InChI=1S/'):
            out.write(f'dg\tdg{i + 1}\t{lines[i]}\t{inchi}\t{Chem.InchiToInchiKey(inchi)}\n')
PY
cd "$W" && rm -rf holdout
zcat "$OUT" | tail -n +2 | wc -l
