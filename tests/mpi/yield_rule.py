#!/usr/bin/env python3
"""The idle-yield rule is decided per node: with LOCUS_YIELD unset, ranks
yield only when the node's ranks outnumber the CPUs they may run on
together. Observed through LOCUS_VERBOSE=1's line per rank at MPI_Init.

usage: yield_rule.py LOCUSRUN MPI_PROGRAM [MPIEXEC_HYDRA]
"""
import os
import re
import subprocess
import sys

LOCUSRUN, PROG = sys.argv[1:3]
HYDRA = sys.argv[3] if len(sys.argv) > 3 else ""
FAILURES = []
LINE = re.compile(r"^locus: rank (\d+) of (\d+) .*: .*yield (yes|no) \(([^;]+); "
                  r"(\d+) local ranks, (\d+) CPUs from ([^)]+)\)$", re.M)


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)
    return cond


def verbose_lines(cmd, cpus=None, **env_over):
    env = {k: v for k, v in os.environ.items() if k not in ("LOCUS_YIELD", "LOCUS_VERBOSE")}
    env.update(env_over)
    pre = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env,
                       stdin=subprocess.DEVNULL, preexec_fn=pre)
    print("$ %s %s\n%s%s" % (" ".join("%s=%s" % kv for kv in env_over.items()),
                             " ".join(cmd), p.stdout, p.stderr))
    check(p.returncode == 0, "%s: exit status %d" % (cmd, p.returncode))
    return LINE.findall(p.stderr)


def expect(lines, n, yields, why, ncpus=None, source=None):
    check(sorted(int(l[0]) for l in lines) == list(range(n)), "want one line per rank of %d: %s"
          % (n, lines))
    for rank, size, y, w, local, cpus, src in lines:
        check(y == ("yes" if yields else "no") and w == why,
              "rank %s: yield %s (%s), want %s (%s)" % (rank, y, w, yields, why))
        check(int(local) == n, "rank %s: %s local ranks, want %d" % (rank, local, n))
        if ncpus is not None:
            check(int(cpus) == ncpus, "rank %s: %s CPUs, want %d" % (rank, cpus, ncpus))
        if source is not None:
            check(src == source, "rank %s: CPU count from %s, want %s" % (rank, src, source))


allowed = sorted(os.sched_getaffinity(0))
if len(allowed) < 2:
    print("SKIPPED: needs two CPUs")
    sys.exit(77)
two = set(allowed[:2])
# 2 ranks bound one per CPU on 2 CPUs: not oversubscribed.
expect(verbose_lines([LOCUSRUN, "-n", "2", PROG], two, LOCUS_VERBOSE="1"),
       2, False, "not oversubscribed", 2, "LOCUS_NODE_NCPUS")
# 4 ranks on the same 2 CPUs: oversubscribed.
expect(verbose_lines([LOCUSRUN, "-n", "4", "--oversubscribe", PROG], two, LOCUS_VERBOSE="1"),
       4, True, "oversubscribed", 2, "LOCUS_NODE_NCPUS")
# LOCUS_YIELD overrides the rule either way.
expect(verbose_lines([LOCUSRUN, "-n", "4", "--oversubscribe", PROG], two, LOCUS_VERBOSE="1",
                     LOCUS_YIELD="never"), 4, False, "LOCUS_YIELD=never")
expect(verbose_lines([LOCUSRUN, "-n", "2", PROG], two, LOCUS_VERBOSE="1", LOCUS_YIELD="always"),
       2, True, "LOCUS_YIELD=always")
# Quiet by default.
check(verbose_lines([LOCUSRUN, "-n", "2", PROG], two) == [], "lines without LOCUS_VERBOSE")
# Without locusrun (Hydra): the node's CPUs online within the cgroup.
if HYDRA and os.path.exists(HYDRA):
    lines = verbose_lines([HYDRA, "-n", "2", PROG], LOCUS_VERBOSE="1")
    ncpus = int(lines[0][5]) if lines else 0
    check(0 < ncpus <= (os.cpu_count() or 0), "Hydra: %d CPUs" % ncpus)
    expect(lines, 2, ncpus < 2, "oversubscribed" if ncpus < 2 else "not oversubscribed", ncpus)
    check(all(l[6] in ("CPUs online", "cgroup cpuset") for l in lines), "Hydra source: %s" % lines)
if FAILURES:
    print("%d check(s) failed" % len(FAILURES))
    sys.exit(1)
print(" No Errors")
