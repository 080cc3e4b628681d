#!/usr/bin/env bash
# iris-bench ccl --table on the host backend: the sweep's section of automatic's table is
# written into a copy of runtime/src/library/ccl_automatic.def in place of the old one
# (rows of collectives it did not measure kept), nothing outside that section changes,
# and the library's choice code compiles with the new table (its static_asserts check
# every row). The ctest host.iris_bench_table runs it.
#
#   tools/scripts/check_table.sh IRIS_BENCH CXX SOURCE_DIR SCRATCH
set -euo pipefail
bench=$1 cxx=$2 src=$3 out=$4
rm -rf "$out" && mkdir -p "$out/library"
table=$out/library/ccl_automatic.def
cp "$src/runtime/src/library/ccl_automatic.def" "$table"
"$bench" ccl --backend host --ranks 2 --sizes 8KiB,64KiB --collectives all_reduce,broadcast \
  --algorithms one_shot_push,two_shot_push,one_shot_ll,one_shot_slots,automatic --routes staged,direct,ll,slots \
  --dtypes bf16 --iters 1 --warmup 0 --no-nccl --table "$table" | tee "$out/bench.log"
grep -q "^# automatic's table: [0-9]* rows for worlds 2-2 written into $table" "$out/bench.log"
python3 - "$src/runtime/src/library/ccl_automatic.def" "$table" <<'PY'
import re, sys
old, new = (open(p).read().splitlines() for p in sys.argv[1:])
def split(lines):
    b, e = lines.index("// BEGIN worlds 2-2"), lines.index("// END worlds 2-2")
    return lines[:b], lines[b + 1:e], lines[e + 1:]
ob, osec, oa = split(old)
nb, nsec, na = split(new)
assert (ob, oa) == (nb, na), "lines outside the 2-rank section changed"
rows = [l for l in nsec if not l.startswith("//")]
row = re.compile(r"^(ALL_REDUCE\(2, 2|ROUTE\((all_gather|reduce_scatter|all_to_all|broadcast), 2, 2), "
                 r"(floats|narrow|any), (kib\(\d+\)|mib\(\d+\)|\d+), \w+\)$")
assert rows and all(row.match(l) for l in rows), rows
measured = [l for l in rows if l.startswith(("ALL_REDUCE", "ROUTE(broadcast"))]
assert any(l.startswith("ALL_REDUCE") for l in measured) and any(l.startswith("ROUTE(broadcast") for l in measured), rows
# What the sweep did not measure stays as it was: the old section's all_gather,
# reduce_scatter and all_to_all rows.
kept = [l for l in osec if l.startswith(("ROUTE(all_gather", "ROUTE(reduce_scatter", "ROUTE(all_to_all"))]
assert kept and all(l in rows for l in kept), (kept, rows)
assert not any(l in rows for l in osec if l.startswith(("ALL_REDUCE", "ROUTE(broadcast")) and l not in measured)
print(f"check_table: {len(measured)} rows written, {len(kept)} kept, the rest of the table unchanged")
PY
# The table compiles into the library's choice code (its include is found in $out first).
"$cxx" -std=c++20 -fsyntax-only -I"$out" -I"$src/runtime/src" -I"$src/runtime/include" -I"$src/templates/include" \
  "$src/runtime/src/library/ccl_choices.cpp"
echo "check_table: the written table compiles"
