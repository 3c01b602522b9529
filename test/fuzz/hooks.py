# Hooks of the API fuzzer (test/fuzz/run.ts loads this module through SCHEMATHESIS_HOOKS).
import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    """NDJSON bodies (POST /batch, POST /jobs): a string as it is, anything else as one JSON line."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return (json.dumps(value) + "\n").encode("utf-8")
