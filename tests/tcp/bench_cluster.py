#!/usr/bin/env python3
"""bench_cluster.py LOCUS_BENCH_PY LOCUS_BIN OUT: `locus bench compare
--nodes 2` end to end in a tiny configuration (quick sizes, 1 repeat) under
Locus, Open MPI and MPICH, on its own emulated cluster locus-bc (2 nodes x 2
rails, 198.18.150-151.0/24). Checks that compare.json has every multi-node
benchmark with a number for every MPI at every size, the targets as numbers,
the table and (with matplotlib) the plots; and that compare took its
cluster's namespaces down (they are taken down here too, whatever happened).

Exit 77 (skipped) when a peer MPI is not installed, or where no emulated
cluster can be built (not root).
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "..", "..", "scripts", "cluster")
NAME, SUBNET = "locus-bc", 150
CASES = ["osu_latency", "osu_bw_2rail", "osu_bw_1rail", "osu_bibw", "osu_mbw_mr_np2",
         "imb_Allreduce_np2", "imb_Alltoall_np2"]
MPIS = ["locus", "openmpi", "mpich"]


def namespaces():
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10)
    return [l.split()[0] for l in r.stdout.splitlines() if l.startswith(NAME + "-")]


def check(doc, out):
    errs = []
    by_id = {c["case"]["id"]: c for c in doc["cases"]}
    for cid in CASES:
        c = by_id.get(cid)
        if c is None:
            errs.append("%s: missing" % cid)
            continue
        if c["configs"] != MPIS:
            errs.append("%s: configs %s, want %s" % (cid, c["configs"], MPIS))
        for m in MPIS:
            if c["successful_runs"].get(m, 0) < 1:
                errs.append("%s: no successful run under %s (%s)"
                            % (cid, m, c["failures"].get(m)))
        if len(c["rows"]) < 2:
            errs.append("%s: %d rows" % (cid, len(c["rows"])))
        for row in c["rows"]:
            for m in MPIS:
                v = row["values"].get(m)   # OSU prints 2 decimals: 1 B may read 0.00 MB/s
                if not isinstance(v, (int, float)) or v < 0:
                    errs.append("%s: %s at %s is %r" % (cid, m, row["x"], v))
    targets = doc["meta"].get("targets") or []
    if len(targets) < 4:
        errs.append("targets: %d of 4" % len(targets))
    for t in targets:
        if not isinstance(t.get("value"), (int, float)) or t["value"] <= 0:
            errs.append("target %r has no number" % t.get("target"))
    want = ["compare.md"]
    try:
        import matplotlib  # noqa: F401
        want += ["cluster_p2p.png", "osu_bw_2rail.png"]
    except ImportError:
        pass
    for f in want:
        if not os.path.isfile(os.path.join(out, f)):
            errs.append("no %s" % f)
    return errs


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    bench, locus_bin, out = sys.argv[1:]
    missing = [p for p in ("mpicc.openmpi", "mpirun.openmpi", "mpicc.mpich", "mpiexec.mpich")
               if not shutil.which(p)]
    if missing:
        print("SKIPPED: peer MPI not installed (%s)" % ", ".join(missing))
        return 77
    if os.geteuid() != 0:
        print("SKIPPED: not root (the emulated cluster needs network namespaces)")
        return 77
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, bench, "compare", "--nodes", "2", "--rails", "2", "--quick",
           "--repeats", "1", "--mpi", ",".join(MPIS), "--locus-bin", locus_bin,
           "--cluster-name", NAME, "--subnet", str(SUBNET), "--timeout", "60", "--out", out]
    print("$", " ".join(cmd), flush=True)
    errs = []
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=240,
                           stdin=subprocess.DEVNULL)
        print(r.stderr[-6000:])
        if r.returncode != 0:
            errs.append("compare exited with %d" % r.returncode)
        if namespaces():
            errs.append("compare left its cluster's namespaces: %s" % namespaces())
        with open(os.path.join(out, "compare.json")) as f:
            errs += check(json.load(f), out)
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        errs.append("compare: %s" % exc)
    finally:
        subprocess.run([CLUSTER, "down", "--name", NAME], capture_output=True, timeout=60)
    left = namespaces()
    if left:
        errs.append("namespaces left behind after scripts/cluster down: %s" % left)
    for e in errs:
        print("FAIL:", e)
    if errs:
        return 1
    print("No Errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
