#!/usr/bin/env bash
# A/B of two builds of iris-bench on one machine: runs `iris-bench ccl` of build A and of
# build B in turn, ROUNDS times each (A, B, A, B, ...), with the same options, and prints
# per case the iris times of every round side by side and B's median over A's (NCCL, in
# every run, shows the machine's drift). For speed work: change one thing, build it as
# B beside A, measure both in one call.
#
#   tools/scripts/ab_ccl.sh A/iris-bench B/iris-bench [ROUNDS] -- [iris-bench ccl options]
#   e.g. tools/scripts/ab_ccl.sh before/bin/iris-bench build/bin/iris-bench 2 -- --dtypes bf16 \
#        --sizes 8KiB,64KiB --graph
#
# Logs and JSON go to ${OUT:-/tmp/ab-ccl}. Exit status: nonzero if a run failed (a wrong
# result included).
set -u
if [ $# -lt 2 ]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
a=$1 b=$2
shift 2
rounds=2
if [ $# -gt 0 ] && [ "$1" != "--" ]; then rounds=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
for exe in "$a" "$b"; do
  [ -x "$exe" ] || { echo "ab_ccl: $exe is not an executable" >&2; exit 2; }
done
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
out=${OUT:-/tmp/ab-ccl}
mkdir -p "$out"
status=0
for ((i = 1; i <= rounds; ++i)); do
  for side in A B; do
    exe=$a; [ "$side" = B ] && exe=$b
    t0=$SECONDS
    "$exe" ccl "$@" --json "$out/$side-$i.json" >"$out/$side-$i.log" 2>&1
    rc=$?
    echo "ab_ccl: $side round $i: rc $rc, $((SECONDS - t0)) s ($out/$side-$i.log)"
    [ $rc -ne 0 ] && status=1 && tail -5 "$out/$side-$i.log"
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
runs = {}
for side in "AB":
    for i in range(1, rounds + 1):
        path = os.path.join(out, f"{side}-{i}.json")
        if os.path.exists(path):
            runs.setdefault(side, []).append(json.load(open(path))["rows"])
if set(runs) != {"A", "B"}:
    sys.exit("ab_ccl: no JSON from one side")
def key(r):
    return (r["collective"], r["dtype"], r["redop"], r["bytes"], r["variant"])
def place(r):
    return r["in_place"] if r["collective"] == "broadcast" else r["out_of_place"]
table = {}
for side, rs in runs.items():
    for rows in rs:
        for r in rows:
            p = place(r)
            if not p.get("ran"):
                continue
            t = table.setdefault(key(r), {"A": ([], []), "B": ([], [])})
            t[side][0].append(p["time_us"])
            if p.get("graph_time_us"):
                t[side][1].append(p["graph_time_us"])
def fmt(xs):
    return " ".join(f"{x:8.2f}" for x in xs)
print("# case: eager us of each round, A then B, and B/A of the medians; in a graph the same")
for k, t in table.items():
    (ae, ag), (be, bg) = t["A"], t["B"]
    if not ae or not be:
        continue
    line = f"{k[0]:14} {k[1]:5} {k[3]:>10} {k[4]:24} A {fmt(ae)}  B {fmt(be)}  {statistics.median(be) / statistics.median(ae):5.3f}"
    if ag and bg:
        line += f"   graph A {fmt(ag)}  B {fmt(bg)}  {statistics.median(bg) / statistics.median(ag):5.3f}"
    print(line)
PY
exit $status
