#!/usr/bin/env python3
"""Exact plans for a few (topology, request) cases, checked against JSON
files in golden/. A difference fails the test; the files are rewritten only
when LOCUS_REGEN_GOLDEN=1 is set (then review the diff before committing).

    golden_test.py LOCUS_BINARY TOPOLOGY_DIR GOLDEN_DIR
"""
import json
import os
import subprocess
import sys

CASES = {
    "lassen-n8-map-nic": ["coral-lassen.xml", "-n", "8", "--map-by", "nic"],
    "lassen-n4-restrict-mem8": ["coral-lassen.xml", "-n", "4", "--restrict", "8-23,96-111",
                                "--mem-on", "8"],
    "mirage-n4-default": ["24em64t-2n6c2t-pci.xml", "-n", "4"],
    "mirage-n13-default": ["24em64t-2n6c2t-pci.xml", "-n", "13"],
    "corona-n6-t2": ["epyc-corona.xml", "-n", "6", "--cpus-per-rank", "2"],
    "cpusets-n5-default": ["16amd64-8n2c-cpusets.xml", "-n", "5"],
    "quartz-n4-socket-bindnuma": ["cts1-quartz-smt1.xml", "-n", "4", "--map-by", "socket",
                                  "--bind-to", "numa"],
    "conan-n3-ppr2numa": ["32em64t-2n8c2t-pci-normalio.xml", "-n", "3", "--map-by", "ppr:2:numa"],
}


def main():
    locus, topodir, golden = sys.argv[1:4]
    regen = os.environ.get("LOCUS_REGEN_GOLDEN") == "1"
    failures = 0
    for name, args in sorted(CASES.items()):
        cmd = [locus, "map", "--json", "--topology", os.path.join(topodir, args[0])] + args[1:]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            print(f"FAIL {name}: exit {out.returncode}: {out.stderr.strip()}")
            failures += 1
            continue
        got = json.loads(out.stdout)
        path = os.path.join(golden, name + ".json")
        if regen:
            with open(path, "w") as f:
                json.dump(got, f, indent=1, sort_keys=True)
                f.write("\n")
            print(f"regenerated {path}")
            continue
        try:
            with open(path) as f:
                want = json.load(f)
        except OSError as e:
            print(f"FAIL {name}: no golden file ({e}); run with LOCUS_REGEN_GOLDEN=1")
            failures += 1
            continue
        if got != want:
            failures += 1
            print(f"FAIL {name}: plan differs from {path}")
            for r, (g, w) in enumerate(zip(got.get("ranks", []), want.get("ranks", []))):
                if g != w:
                    print(f"  rank {r}: got  {json.dumps(g, sort_keys=True)}")
                    print(f"  rank {r}: want {json.dumps(w, sort_keys=True)}")
                    break
            for k in sorted(set(got) | set(want)):
                if k != "ranks" and got.get(k) != want.get(k):
                    print(f"  {k}: got {got.get(k)!r}, want {want.get(k)!r}")
    print("No Errors" if failures == 0 else f"{failures} case(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
