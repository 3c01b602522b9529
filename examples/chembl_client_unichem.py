"""The ChEMBL web resource client's UniChem client pointed at chemxref
(pip install chembl_webresource_client==0.10.9).

    CHEMXREF_URL=http://127.0.0.1:8080 python examples/chembl_client_unichem.py

Prints what it finds for paracetamol (ChEMBL CHEMBL112, NCI/DTP 3991 in the demo data) and exits 1
if an expected answer is missing.
"""
import os
import sys

from chembl_webresource_client.settings import Settings

# The one change: the client reads its legacy API URL once, when its module is imported, so set it first.
Settings.Instance().UNICHEM_URL = os.environ.get("CHEMXREF_URL", "http://127.0.0.1:8080") + "/rest"
# Optional: no answers cached on disk (~/.chembl_ws_client__*.sqlite, kept a day), and no retries of
# a 4xx (the client retries 400-420 three times with backoff: 12 s before it gives up).
Settings.Instance().CACHING = False
Settings.Instance().TOTAL_RETRIES = 0

from chembl_webresource_client.unichem import unichem_client as unichem  # noqa: E402

PARACETAMOL_KEY = "RZVAJINKPMORJF-UHFFFAOYSA-N"
failures = []


def check(what, call, expected):
    """Runs call(), prints its answer, and records a failure unless expected(answer) holds."""
    try:
        answer = call()
        ok = expected(answer)
    except Exception as error:  # the client raises on an HTTP error
        answer, ok = f"{type(error).__name__}: {error}", False
    print(("ok  " if ok else "FAIL") + "  " + what + ": " + repr(answer)[:200])
    if not ok:
        failures.append(what)


check("get('CHEMBL112') lists NCI/DTP 3991", lambda: unichem.get("CHEMBL112"),
      lambda a: {"src_id": "101", "src_compound_id": "3991"} in a)
check("get('CHEMBL112', 1, 101) is NSC 3991", lambda: unichem.get("CHEMBL112", 1, 101),
      lambda a: a == [{"src_compound_id": "3991"}])
check("get(InChIKey) lists CHEMBL112", lambda: unichem.get(PARACETAMOL_KEY),
      lambda a: {"src_id": "1", "src_compound_id": "CHEMBL112"} in a)
check("get('3991', 101): NSC 3991 has no obsolete ids", lambda: unichem.get("3991", 101),
      lambda a: a == [])
check("structure('CHEMBL112', 1) is paracetamol", lambda: unichem.structure("CHEMBL112", 1),
      lambda a: a[0]["standardinchikey"] == PARACETAMOL_KEY)
check("inchiFromKey(InChIKey)", lambda: unichem.inchiFromKey(PARACETAMOL_KEY),
      lambda a: a[0]["standardinchi"].startswith("InChI=1S/C8H9NO2/"))
check("src() lists ChEMBL", lambda: unichem.src(), lambda a: {"src_id": "1"} in a)
check("connectivity(InChIKey) finds CHEMBL112", lambda: unichem.connectivity(PARACETAMOL_KEY),
      lambda a: "CHEMBL112" in [m["src_compound_id"] for s in a["1"] for m in s["src_matches"]])
check("connectivity('CHEMBL112', 1) finds NSC 3991", lambda: unichem.connectivity("CHEMBL112", 1),
      lambda a: "3991" in [m["src_compound_id"] for s in a["1"] for m in s["src_matches"]])

if failures:
    print(f"{len(failures)} check(s) failed against {Settings.Instance().UNICHEM_URL}", file=sys.stderr)
    sys.exit(1)
