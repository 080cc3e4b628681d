#!/usr/bin/env bash
# Runs iris-bench ccl with the options given, plus --json and --svg into a scratch
# folder, and fails unless it exits 0 (every result matched its reference) and both
# files parse. The ctest host.iris_bench_ccl runs it on the host backend.
#
#   tools/scripts/check_bench_ccl.sh IRIS_BENCH OUT_PREFIX [iris-bench ccl options...]
set -euo pipefail
bench=$1 out=$2
shift 2
"$bench" ccl "$@" --json "$out.json" --svg "$out.svg"
python3 -m json.tool "$out.json" >/dev/null
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$out.svg"
python3 - "$out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
ran = [p for r in rows for p in (r["out_of_place"], r["in_place"]) if p["ran"]]
assert ran, "no case ran"
assert all(p["wrong"] == 0 and p["time_us"] > 0 for p in ran), "a case is wrong or has no time"
seen = {r["collective"] for r in rows}
want = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"}
assert seen == want, f"collectives measured: {sorted(seen)}"
print(f"check_bench_ccl: {len(rows)} rows, {len(ran)} cases checked and timed, JSON and SVG parse")
PY
