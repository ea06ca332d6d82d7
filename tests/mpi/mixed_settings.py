#!/usr/bin/env python3
"""Tunables set differently on one rank (a node with its own environment):
the job still delivers every message intact, or says why in one line;
it never hangs and never truncates.

usage: mixed_settings.py LOCUSRUN STRESS P2P_LARGE

For each transport the stress test (random sizes, order and content
checked) and the large-message exchanges (simultaneous, blocking and
synchronous, 1 MiB) at 2 and 3 ranks, rank 1 alone with the setting.
Over tcp, LOCUS_QOS on one rank hung the 1 MiB exchange before the card
said how many classes a rank opens (frames queued for a class the pair
did not open). The ofi transport's own mixes are in ofi_tests.py (they
need libfabric)."""
import os
import signal
import subprocess
import sys
import tempfile

LOCUSRUN, STRESS, LARGE = sys.argv[1:4]
FAILURES = []

# (transports, every rank's settings, rank 1's own)
ADAPTIVE = {"LOCUS_QOS": "adaptive", "LOCUS_QOS_DELAY_US": "1"}
CASES = [
    ("self,tcp", {}, {"LOCUS_QOS": "static"}),
    ("self,tcp", {}, ADAPTIVE),
    ("self,tcp", {"LOCUS_QOS": "static"}, ADAPTIVE),
    ("self,tcp", ADAPTIVE, {"LOCUS_QOS": "static"}),
    ("self,tcp", {}, {"LOCUS_TCP_EAGER_MAX": "1k"}),
    ("self,tcp", {}, {"LOCUS_TCP_CHUNK_SIZE": "8k"}),
    ("self,shm", {}, {"LOCUS_SHM_RING_SIZE": "4k"}),
    ("self,shm", {}, {"LOCUS_SHM_EAGER_MAX": "1024"}),
    ("self,shm", {}, {"LOCUS_SHM_POOL_SIZE": "256k", "LOCUS_SHM_CHUNK_SIZE": "8k"}),
    ("self,shm", {}, {"LOCUS_SINGLE_COPY": "none"}),
]


def run(transports, base, rank1, nranks, prog, wrap):
    env = dict(os.environ, LOCUS_TRANSPORTS=transports, LOCUS_YIELD="always")
    for k in list(base) + list(rank1):
        env.pop(k, None)
    env.update(base)
    cmd = [LOCUSRUN, "--oversubscribe", "-n", str(nranks), wrap] + prog.split()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, err = p.communicate(timeout=60)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        # locusrun forwards SIGTERM to its ranks and cleans up; KILL after.
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
                out, err = p.communicate(timeout=10)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                out, err = "", ""
        rc = "hung (60 s)"
    name = "%s, %s, rank 1 with %s, %d ranks, %s" % (
        transports, base or "defaults", rank1, nranks, os.path.basename(prog.split()[0]))
    ok = rc == 0 and " No Errors" in out
    print("%s: %s" % (name, "ok" if ok else "exit %s" % rc))
    if not ok:
        FAILURES.append("%s: exit %s\n%s\n%s" % (name, rc, out[-1000:], err[-1500:]))


def main():
    with tempfile.TemporaryDirectory(prefix="locus-mixed-") as d:
        for i, (transports, base, rank1) in enumerate(CASES):
            wrap = os.path.join(d, "rank1-%d.sh" % i)
            with open(wrap, "w") as f:
                f.write('#!/bin/sh\n[ "$PMI_RANK" = 1 ] && export %s\nexec "$@"\n'
                        % " ".join("%s=%s" % kv for kv in rank1.items()))
            os.chmod(wrap, 0o755)
            for nranks in (2, 3):
                for prog in (STRESS, LARGE):
                    run(transports, base, rank1, nranks, prog, wrap)
    for f in FAILURES:
        print("FAIL:", f)
    print("%d failed" % len(FAILURES) if FAILURES else "mixed settings: OK")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
