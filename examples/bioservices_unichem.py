"""bioservices' UniChem class pointed at chemxref (pip install bioservices==1.16.0).

    CHEMXREF_URL=http://127.0.0.1:8080 python examples/bioservices_unichem.py

Prints what it finds for paracetamol (ChEMBL CHEMBL112, NCI/DTP 3991 in the demo data) and exits 1
if an expected answer is missing.
"""
import os
import sys

from bioservices import UniChem

# The one change: UniChem's base URL is a class attribute, read when an instance is made.
UniChem._url = os.environ.get("CHEMXREF_URL", "http://127.0.0.1:8080")

PARACETAMOL_KEY = "RZVAJINKPMORJF-UHFFFAOYSA-N"
failures = []


def check(what, ok, answer):
    print(("ok  " if ok else "FAIL") + "  " + what + ": " + repr(answer)[:200])
    if not ok:
        failures.append(what)


def ids(answer):
    """The (source id, compound id) pairs of a /api/v1/compounds answer ({} when the call failed)."""
    return {(s["id"], s["compoundId"]) for c in answer.get("compounds", []) for s in c["sources"]}


unichem = UniChem()  # reads GET /api/v1/sources
check("sources (GET /api/v1/sources)", unichem.source_ids.get("chembl") == 1, unichem.source_ids)

by_id = unichem.get_compounds("CHEMBL112", "chembl")
check("get_compounds('CHEMBL112', 'chembl') finds NCI/DTP 3991", (101, "3991") in ids(by_id), ids(by_id))

by_key = unichem.get_compounds(PARACETAMOL_KEY, "inchikey")
check("get_compounds(InChIKey, 'inchikey') finds CHEMBL112", (1, "CHEMBL112") in ids(by_key), ids(by_key))

uci = by_id["compounds"][0]["uci"] if by_id.get("compounds") else 0
by_uci = unichem.get_compounds(str(uci), "uci")
check("get_compounds(UCI as text, 'uci') finds CHEMBL112", (1, "CHEMBL112") in ids(by_uci), ids(by_uci))
by_uci_number = unichem.get_compounds(uci, "uci")
check("get_compounds(UCI as number, 'uci') finds CHEMBL112", (1, "CHEMBL112") in ids(by_uci_number), ids(by_uci_number))

related = unichem.get_connectivity(PARACETAMOL_KEY, "inchikey")
found = {(s["id"], s["compoundId"]) for s in related.get("sources", [])}
check("get_connectivity(InChIKey, 'inchikey') finds CHEMBL112", (1, "CHEMBL112") in found, found)

legacy = unichem.get_sources_by_inchikey(PARACETAMOL_KEY)  # GET /rest/inchikey/{key}
pairs = {(x["src_id"], x["src_compound_id"]) for x in legacy} if isinstance(legacy, list) else legacy
check("get_sources_by_inchikey(InChIKey) finds CHEMBL112", ("1", "CHEMBL112") in pairs, pairs)

if failures:
    print(f"{len(failures)} check(s) failed against {UniChem._url}", file=sys.stderr)
    sys.exit(1)
