#!/usr/bin/env bash
# Runs iris-bench ccl or ops with the options given, plus --json and --svg into a
# scratch folder, and fails unless it exits 0 (every result matched its reference), both
# files parse, and the JSON holds every collective (or op) checked and timed. The ctests
# host.iris_bench_ccl and host.iris_bench_ops run it on the host backend.
#
#   tools/scripts/check_bench.sh IRIS_BENCH ccl|ops OUT_PREFIX [iris-bench options...]
set -euo pipefail
bench=$1 cmd=$2 out=$3
shift 3
"$bench" "$cmd" "$@" --json "$out.json" --svg "$out.svg"
python3 -m json.tool "$out.json" >/dev/null
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$out.svg"
python3 - "$cmd" "$out.json" <<'PY'
import json, sys
cmd, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
rows = d["rows"]
if cmd == "ccl":
    ran = [p for r in rows for p in (r["out_of_place"], r["in_place"]) if p["ran"]]
    seen = {r["collective"] for r in rows}
    want = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"}
else:
    ran = [r for r in rows if r["ran"]]
    seen = {r["op"] for r in rows}
    want = {"matmul_all_reduce", "matmul_reduce_scatter", "matmul_all_scatter", "all_gather_matmul"}
assert ran, "no case ran"
assert all(p["wrong"] == 0 and p["time_us"] > 0 for p in ran), "a case is wrong or has no time"
assert seen == want, f"measured: {sorted(seen)}"
if cmd == "ccl":
    # all_reduce runs automatic beside every algorithm: each size has automatic against the fastest.
    auto = [a for a in d["automatic"] if a["block"].startswith("all_reduce")]
    assert auto, "no automatic-against-fastest entry for all_reduce"
    assert all(a["picked"] and a["fastest"] and a["time_us"] > 0 and a["fastest_us"] > 0 for a in auto), auto
print(f"check_bench {cmd}: {len(rows)} rows, {len(ran)} cases checked and timed, JSON and SVG parse")
PY
