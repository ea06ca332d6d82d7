#!/usr/bin/env python3
"""Runs `locus bench congestion --quick` with Locus alone (LOCUS_QOS off and
static) on its emulated cluster and checks congestion.json: both labels have
a working run, every victim test has samples in both phases, every figure is
positive and finite, the congestors moved data, and without QoS the
congested phase did slow the victims' latency down (CIF above 2); then that
congestion.md has its tables and that the cluster, its processes and any
/dev/shm/locus* file of the runs are gone.

usage: check_congestion.py TOOLS_DIR LOCUS_BIN OUT_DIR
"""
import math
import os
import subprocess
import sys

from benchcli import run_quick, skip_without_cluster

tools, locus_bin, out = sys.argv[1:4]
skip_without_cluster()
sys.path.insert(0, tools)
from locusbench import congestion  # noqa: E402

shm_before = {n for n in os.listdir("/dev/shm") if n.startswith("locus")}
doc = run_quick(tools, "congestion", ["--quick", "--mpi", "locus", "--qos-modes", "off,static",
                                      "--locus-bin", locus_bin], out, "congestion.json")
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
    return cond


def positive(v):
    return isinstance(v, (int, float)) and math.isfinite(v) and v > 0


check(doc["labels"] == ["locus-off", "locus-static"], "labels %s" % doc["labels"])
check(doc["cluster"].get("qos") is True and doc["cluster"].get("rate") == "50mbit",
      "cluster %s" % doc["cluster"])
check(doc["params"]["nodes"] == 4 and doc["params"]["ppn"] == 2, "params %s" % doc["params"])
check(doc["meta"]["mpis"][0]["name"] == "locus", "meta.mpis %s" % doc["meta"]["mpis"])
for label in doc["labels"]:
    runs = doc["results"][label]
    if not check(len(runs) == 1 and not runs[0].get("failed"), "%s: runs %s" % (label, runs)):
        continue
    r = runs[0]
    cfg = r["config"]
    check(cfg.get("victims") == 2 and cfg.get("sinks") == 2 and cfg.get("congestors") == 4,
          "%s: roles %s" % (label, cfg))
    for test, _, _ in congestion.TESTS:
        for ph in congestion.PHASES:
            fig = r["tests"][test][ph]
            check(fig["n"] > 0, "%s %s %s: no samples" % (label, test, ph))
            for k in ("avg", "p50", "p99", "worst"):
                check(positive(fig.get(k)), "%s %s %s: %s = %s" % (label, test, ph, k,
                                                                   fig.get(k)))
    check(positive(r["bulk"]["congestor"]["MBps"]) and r["bulk"]["congestor"]["bytes"] > 0,
          "%s: congestors sent nothing: %s" % (label, r["bulk"]))
s = congestion.summarize(doc)
lat = s["locus-off"]["tests"]["lat"]["cif_avg"]
check(lat is not None and lat > 2, "locus-off: latency CIF %s, the congestion did not congest"
      % lat)
try:
    with open(os.path.join(out, "congestion.md")) as f:
        md = f.read()
    check("## Key results" in md and "| locus-static | RR two-sided lat" in md,
          "congestion.md lacks its tables")
except OSError as exc:
    check(False, "no congestion.md: %s" % exc)
left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
check(congestion.NAME + "-" not in left, "the cluster's namespaces are still there: %s" % left)
check(not os.path.exists("/run/locus-cluster/" + congestion.NAME), "cluster state left")
# Another test's job may be running beside this one: only a file of a job
# whose launcher is gone, which nobody uses any more, is a leftover.
stale = congestion.leftovers(shm_before)
check(not stale, "/dev/shm files left: %s" % stale)
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
