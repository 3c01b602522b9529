# UniChem's API from R with httr (install.packages("httr")), pointed at chemxref.
#
#   CHEMXREF_URL=http://127.0.0.1:8080 Rscript examples/httr_unichem.R
#
# Prints what it finds for paracetamol (ChEMBL CHEMBL112, NCI/DTP 3991 in the demo data) and quits
# with status 1 if an expected answer is missing.
library(httr)

# The one change: the base URL (UniChem's is https://www.ebi.ac.uk/unichem).
base_url <- Sys.getenv("CHEMXREF_URL", "http://127.0.0.1:8080")

paracetamol_key <- "RZVAJINKPMORJF-UHFFFAOYSA-N"
failures <- character(0)

check <- function(what, ok, found) {
  cat(if (isTRUE(ok)) "ok  " else "FAIL", " ", what, ": ", paste(found, collapse = ", "), "\n", sep = "")
  if (!isTRUE(ok)) failures <<- c(failures, what)
}

# POST /api/v1/compounds with a JSON body; "<source id>:<compound id>" of every source found.
compounds <- function(payload) {
  response <- POST(paste0(base_url, "/api/v1/compounds"), body = payload, encode = "json")
  answer <- content(response, as = "parsed", type = "application/json")
  ids <- unlist(lapply(answer$compounds, function(compound)
    vapply(compound$sources, function(s) paste0(s$id, ":", s$compoundId), character(1))))
  list(answer = answer, ids = ids)
}

sources <- content(GET(paste0(base_url, "/api/v1/sources")), as = "parsed", type = "application/json")$sources
names <- vapply(sources, function(s) s$name, character(1))
check("GET /api/v1/sources lists chembl", "chembl" %in% names, names)

# Text values stay strings; a length-1 vector is sent as a scalar (httr's encode = "json" unboxes).
by_key <- compounds(list(type = "inchikey", compound = paracetamol_key))
check("compounds by InChIKey: CHEMBL112 and NSC 3991", all(c("1:CHEMBL112", "101:3991") %in% by_key$ids), by_key$ids)

# A UCI is sent as text, as UniChem documents it.
uci <- if (length(by_key$answer$compounds) > 0) by_key$answer$compounds[[1]]$uci else 0
by_uci <- compounds(list(type = "uci", compound = as.character(uci)))
check(paste0("compounds by UCI ", uci, ": CHEMBL112"), "1:CHEMBL112" %in% by_uci$ids, by_uci$ids)

by_id <- compounds(list(type = "sourceID", compound = "CHEMBL112", sourceID = 1L))
check("compounds by ChEMBL id CHEMBL112: NSC 3991", "101:3991" %in% by_id$ids, by_id$ids)

# The legacy GET API answers JSON to httr's default Accept header.
legacy <- content(GET(paste0(base_url, "/rest/src_compound_id/CHEMBL112/1/101")), as = "parsed", type = "application/json")
legacy_ids <- vapply(legacy, function(x) x$src_compound_id, character(1))
check("legacy /rest/src_compound_id/CHEMBL112/1/101: NSC 3991", identical(legacy_ids, "3991"), legacy_ids)

if (length(failures) > 0) {
  message(length(failures), " check(s) failed against ", base_url)
  quit(status = 1)
}
