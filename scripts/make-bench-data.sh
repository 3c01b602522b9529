#!/bin/bash
# The benchmarks' 500,000 real molecules: bench-500k.tsv, one `id<TAB>Standard InChI<TAB>InChIKey` row each.
# The SMILES are the 500K set of the @datagrok/chem npm package (its tests' smiles_500K.zip); Open Babel
# computes each molecule's Standard InChI and InChIKey (IUPAC InChI library), in two processes.
# Needs Debian packages (openbabel, unzip: installed when missing, as root) and npm; about 3-4 minutes on 2 cores.
#
#   bash scripts/make-bench-data.sh              # writes /tmp/chemwork/bench-500k.tsv
#   W=/some/folder bash scripts/make-bench-data.sh
set -euo pipefail
W=${W:-/tmp/chemwork}
mkdir -p "$W"
cd "$W"
if ! command -v obabel >/dev/null || ! command -v unzip >/dev/null; then
  apt-get install -y -q openbabel unzip >/dev/null
fi
[ -d dg ] || { npm pack --silent @datagrok/chem@1.17.15 >/dev/null; mkdir dg; tar xzf datagrok-chem-1.17.15.tgz -C dg; }
unzip -o -q dg/package/files/tests/smiles_500K.zip
# One SMILES a row after a header; each gets the id dg<row>.
tail -n +2 smiles_500K.csv | tr -d '\r' | awk '{print $0"\tdg"NR}' > s500k.smi
split -n l/2 -d s500k.smi part
for p in part00 part01; do obabel -ismi "$p" -osmi --append "InChI InChIKey" -O "$p.out" 2>/dev/null & done
wait
# obabel writes `SMILES<TAB>id InChI InChIKey`: keep the id and the last two words.
cat part00.out part01.out | awk -F'\t' '{n=split($2,a," "); print a[1]"\t"a[n-1]"\t"a[n]}' > bench-500k.tsv
rm -f s500k.smi smiles_500K.csv part00 part01 part00.out part01.out datagrok-chem-1.17.15.tgz
rm -rf dg
wc -l bench-500k.tsv
