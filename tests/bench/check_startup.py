#!/usr/bin/env python3
"""Runs `locus bench startup --quick --model` (Locus's five strategies and
every peer installed, on 1 and 2 emulated nodes) and checks its startup.json:
every layout has a working run of every Locus strategy (and each peer one at
least: their own start-up is not under test), the times are ordered (launch
< end of MPI_Init <= all pairs connected <= exit), and Locus's exchange made
the PMI gets each strategy's formula says on 2 nodes x 2 ranks.

usage: check_startup.py TOOLS_DIR LOCUS_BIN OUT_DIR
"""
import os
import shutil
import sys

from benchcli import run_quick, skip_without_cluster

tools, locus_bin, out = sys.argv[1:4]
skip_without_cluster()
mpis = ["locus"] + [m for m, exe in (("openmpi", "mpirun.openmpi"), ("mpich", "mpiexec.mpich"))
                    if shutil.which(exe)]
doc = run_quick(tools, "startup", ["--quick", "--model", "--mpi", ",".join(mpis),
                                   "--locus-bin", locus_bin], out, "startup.json")
fails = []
want = {"simple": 12, "shm": 6, "roots": 2, "fabric": 2}
peer_ok = {}
for key, by in doc["results"].items():
    for label, runs in by.items():
        ok = [r for r in runs if not r.get("failed")]
        if not label.startswith("locus-"):
            peer_ok[label] = peer_ok.get(label, 0) + len(ok)
        if not ok:
            if label.startswith("locus-"):
                fails.append("%s %s: no run worked" % (key, label))
            else:
                print("note: %s %s: no run worked" % (key, label))
            continue
        r = ok[0]
        if not 0 < r["init"] <= r["connected"] <= r.get("exit", r["connected"]) + 1e-3:
            fails.append("%s %s: times out of order: %s" % (key, label, r))
        if label.startswith("locus-") and key == "2x2":
            strategy = label[6:]
            gets = r["locus"]["gets"]
            if strategy in want and gets != want[strategy]:
                fails.append("%s %s: %d PMI gets, want %d" % (key, label, gets, want[strategy]))
            if strategy == "lazy" and not 0 < gets <= 8:
                fails.append("%s lazy: %d gets for 4 cross-node pairs" % (key, gets))
for label, n in peer_ok.items():
    if n == 0:
        fails.append("%s: no run worked at any layout" % label)
for name in ("startup.md", "startup-model.md"):
    if not os.path.exists(os.path.join(out, name)):
        fails.append("no " + name)
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
