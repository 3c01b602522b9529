"""UniChem's own API, called with plain `requests` (pip install requests), pointed at chemxref.

    CHEMXREF_URL=http://127.0.0.1:8080 python examples/requests_unichem.py

Prints what it finds for paracetamol (ChEMBL CHEMBL112, NCI/DTP 3991 in the demo data) and exits 1
if an expected answer is missing.
"""
import os
import sys

import requests

# The one change: the base URL (UniChem's is https://www.ebi.ac.uk/unichem).
BASE_URL = os.environ.get("CHEMXREF_URL", "http://127.0.0.1:8080")

PARACETAMOL_KEY = "RZVAJINKPMORJF-UHFFFAOYSA-N"
failures = []


def check(what, ok, answer):
    print(("ok  " if ok else "FAIL") + "  " + what + ": " + repr(answer)[:200])
    if not ok:
        failures.append(what)


def compounds(payload):
    """POST /api/v1/compounds; the (source id, compound id) pairs found (empty on an error)."""
    answer = requests.post(f"{BASE_URL}/api/v1/compounds", json=payload, timeout=30).json()
    return answer, {(s["id"], s["compoundId"]) for c in answer.get("compounds", []) for s in c["sources"]}


sources = requests.get(f"{BASE_URL}/api/v1/sources", timeout=30).json()["sources"]
names = {s["sourceID"]: s["name"] for s in sources}
check("GET /api/v1/sources lists chembl", names.get(1) == "chembl", names)

answer, found = compounds({"type": "inchikey", "compound": PARACETAMOL_KEY})
check("compounds by InChIKey: CHEMBL112 and NSC 3991", {(1, "CHEMBL112"), (101, "3991")} <= found, found)

uci = answer["compounds"][0]["uci"] if answer.get("compounds") else 0
_, found = compounds({"type": "uci", "compound": str(uci)})
check(f"compounds by UCI {uci}: CHEMBL112", (1, "CHEMBL112") in found, found)

_, found = compounds({"type": "sourceID", "compound": "CHEMBL112", "sourceID": 1})
check("compounds by ChEMBL id CHEMBL112: NSC 3991", (101, "3991") in found, found)

answer, _ = compounds({"type": "inchikey", "compound": "AAAAAAAAAAAAAA-AAAAAAAASA-N"})
check("an unknown InChIKey is 'Not found'", answer.get("response") == "Not found", answer)

related = requests.post(f"{BASE_URL}/api/v1/connectivity", timeout=30,
                        json={"type": "inchikey", "compound": PARACETAMOL_KEY, "searchComponents": True}).json()
found = {(s["id"], s["compoundId"]) for s in related.get("sources", [])}
check("connectivity by InChIKey: CHEMBL112", (1, "CHEMBL112") in found, found)

legacy = requests.get(f"{BASE_URL}/rest/src_compound_id/CHEMBL112/1/101", timeout=30).json()
check("legacy GET /rest/src_compound_id/CHEMBL112/1/101: NSC 3991", legacy == [{"src_compound_id": "3991"}], legacy)

if failures:
    print(f"{len(failures)} check(s) failed against {BASE_URL}", file=sys.stderr)
    sys.exit(1)
