#!/usr/bin/env python3
"""Checks a trace written with IRIS_TRACE: valid Chrome trace-event JSON (what Perfetto
opens), with host spans and device events from every rank.

  check_trace.py TRACE.json RANKS

Prints what each rank recorded; exits 1 naming what is missing."""
import collections
import json
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    path, ranks = sys.argv[1], int(sys.argv[2])
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    host, device, phases = collections.Counter(), collections.Counter(), collections.Counter()
    for e in events:
        if e.get("ph") == "M":
            continue
        for key in ("ph", "pid", "ts"):
            if key not in e:
                print(f"{path}: an event without '{key}': {e}")
                return 1
        phases[e["ph"]] += 1
        (device if e.get("cat") == "device" else host)[e["pid"]] += 1
    bad = []
    for r in range(ranks):
        print(f"rank {r}: {host[r]} host events, {device[r]} device events")
        if host[r] == 0:
            bad.append(f"rank {r} has no host events")
        if device[r] == 0:
            bad.append(f"rank {r} has no device events")
    print("phases:", dict(phases))
    if bad:
        print(f"{path}: " + "; ".join(bad))
        return 1
    print(f"{path}: {len(events)} events from all {ranks} ranks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
