#!/usr/bin/env python3
"""Bounded soak of the MPI library: many short jobs, every one watched.

Runs benchmarks (pingpong, osu_latency/bw/bibw) and the MPI test programs
(stress, p2p_large, coll_check) under locusrun, over a matrix of settings
(CMA forced or off, tiny rings and chunks that keep the ring-full and
pool-full paths busy, 2 ranks bound or 4/8 oversubscribed), optionally
with a CPU hog running beside them. A job that has not finished after
--hang seconds counts as a hang: the stacks of its ranks are captured with
gdb (with the core's and the shm transport's state) into --out before the
job is killed. A job that exits non-zero, or whose output lacks its
success line, is a failure. A /dev/shm file that appeared and whose
creator is gone is noted (not counted: it may belong to another job).

    tests/mpi/soak.py BUILD [--runs N] [--only REGEX] [--minutes M] [--load]
    tests/mpi/soak.py BUILD --list

Exit status 0 when every job passed, 1 otherwise, 2 on bad usage. Not a
ctest case (it runs for minutes); tests/mpi/CMakeLists.txt registers a
short smoke run of it.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

# Settings that steer the shm transport into its corner cases.
TINY = {"LOCUS_SHM_RING_SIZE": "1k", "LOCUS_SHM_EAGER_MAX": "256",
        "LOCUS_SHM_CHUNK_SIZE": "4k", "LOCUS_SHM_POOL_SIZE": "8k"}
ENVS = {
    "default": {},
    "cma": {"LOCUS_SINGLE_COPY": "cma"},
    "nocma": {"LOCUS_SINGLE_COPY": "none"},
    "tiny": dict(TINY, LOCUS_SINGLE_COPY="none"),
    "tiny-cma": dict(TINY, LOCUS_SINGLE_COPY="cma"),
    "ring2k": {"LOCUS_SHM_RING_SIZE": "2k", "LOCUS_SHM_EAGER_MAX": "16k",
               "LOCUS_SHM_CHUNK_SIZE": "8k", "LOCUS_SHM_POOL_SIZE": "16k",
               "LOCUS_SINGLE_COPY": "none"},
}

# (name, program relative to the build, ranks, arguments, success regex)
PROGS = [
    ("pingpong-1000", "bench/pingpong", 2, ["--reps", "1000"], r"iter =\s+2"),
    ("pingpong-100", "bench/pingpong", 2, ["--reps", "100", "--end", "40000", "--step", "3000"],
     r"iter =\s+2"),
    ("pingpong-3", "bench/pingpong", 3, ["--reps", "10", "--warmup", "0", "--iter", "5"],
     r"iter =\s+5"),
    ("osu_latency", "bench/osu_latency", 2, ["-m", "256k", "-i", "200", "-x", "10"], r"262144"),
    ("osu_bw", "bench/osu_bw", 2, ["-m", "1M", "-i", "10", "-x", "2"], r"1048576"),
    ("osu_bibw", "bench/osu_bibw", 2, ["-m", "1M", "-i", "10", "-x", "2", "-W", "16"], r"1048576"),
    ("stress-2", "tests/mpi/mpi_stress", 2, ["400"], r" No Errors"),
    ("stress-4", "tests/mpi/mpi_stress", 4, ["300"], r" No Errors"),
    ("stress-8", "tests/mpi/mpi_stress", 8, ["150"], r" No Errors"),
    ("p2p_large-2", "tests/mpi/mpi_p2p_large", 2, [], r" No Errors"),
    ("coll-2", "tests/coll/coll_check", 2, ["40"], r" No Errors"),
    ("coll-4", "tests/coll/coll_check", 4, ["20"], r" No Errors"),
    ("coll-8", "tests/coll/coll_check", 8, ["8"], r" No Errors"),
]

GDB_STATE = [
    "set print elements 32",
    "thread apply all bt",
    "print locus_mpi.core.npend",
    "print locus_mpi.core.nsend",
    "print *locus_mpi.core.posted_head",
    "print *locus_mpi.core.unexp_head",
    "print *(shm_tp_t *)locus_mpi.core.tps[1]",
    "print ((shm_tp_t *)locus_mpi.core.tps[1])->peers[0]",
    "print ((shm_tp_t *)locus_mpi.core.tps[1])->peers[1]",
]


def cases(only):
    out = []
    for pname, prog, np_, args, ok in PROGS:
        for ename, env in ENVS.items():
            for over in ([False, True] if np_ == 2 else [True]):
                name = "%s/%s%s" % (pname, ename, "/over" if over else "")
                if only and not re.search(only, name):
                    continue
                out.append((name, prog, np_, args, ok, env, over))
    return out


def descendants(pid):
    """Pids below pid (from /proc, children files)."""
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            kids = []
        seen += kids
        todo += kids
    return seen


def comm_of(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


def capture(job, prog, outdir, tag):
    """gdb stacks and core/transport state of every rank of a hung job."""
    base = os.path.basename(prog)[:15]
    path = os.path.join(outdir, tag + ".txt")
    with open(path, "w") as f:
        for pid in descendants(job.pid):
            if comm_of(pid) != base:
                continue
            f.write("==== pid %d ====\n" % pid)
            f.flush()
            cmd = ["gdb", "-p", str(pid), "-batch", "-nx"]
            for c in GDB_STATE:
                cmd += ["-ex", c]
            try:
                r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=60, text=True)
                f.write(r.stdout)
            except (OSError, subprocess.TimeoutExpired) as e:
                f.write("gdb: %s\n" % e)
    return path


def shm_leaks(before):
    """/dev/shm entries of ours that appeared and whose process is gone."""
    leaks = []
    for n in os.listdir("/dev/shm"):
        if n in before or not n.startswith("locus"):
            continue
        m = re.match(r"locus\..*\.(\d+)$", n) or re.match(r"locus-coll-(\d+)-", n)
        if m and not os.path.exists("/proc/" + m.group(1)):
            leaks.append(n)
    return leaks


def run_one(build, case, hang, outdir, tag):
    name, prog, np_, args, ok, env, over = case
    cmd = [os.path.join(build, "bin/locusrun"), "-n", str(np_), "--timeout", str(hang + 120)]
    if over:
        cmd.append("--oversubscribe")
    cmd += [os.path.join(build, prog)] + args
    e = dict(os.environ)
    e.update(env)
    before = set(os.listdir("/dev/shm"))
    t0 = time.time()
    job = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           start_new_session=True)
    try:
        out, _ = job.communicate(timeout=hang)
        verdict = "ok"
        if job.returncode != 0:
            verdict = "FAIL(rc=%d)" % job.returncode
        elif not re.search(ok, out.decode(errors="replace")):
            verdict = "FAIL(output)"
    except subprocess.TimeoutExpired:
        where = capture(job, prog, outdir, tag)
        os.killpg(job.pid, signal.SIGKILL)
        out, _ = job.communicate()
        verdict = "HANG(stacks in %s)" % where
    dt = time.time() - t0
    leaks = shm_leaks(before)
    if leaks:
        # Only a note: other jobs on the machine (their ranks gone, their
        # launcher not yet done cleaning) can show up here too.
        verdict += " (note: new in /dev/shm, creator gone: %s)" % " ".join(leaks)
    if not verdict.startswith("ok"):
        with open(os.path.join(outdir, tag + ".out"), "wb") as f:
            f.write(out)
    return verdict, dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=3, help="runs of each case (default 3)")
    ap.add_argument("--only", help="regex on case names (e.g. 'pingpong.*default')")
    ap.add_argument("--hang", type=float, default=60, help="seconds before a job counts as hung")
    ap.add_argument("--minutes", type=float, default=10, help="stop starting jobs after this")
    ap.add_argument("--load", action="store_true", help="run a CPU hog (yes) beside the jobs")
    ap.add_argument("--out", default="soak-out", help="folder for stacks and outputs of bad runs")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    a = ap.parse_args()
    todo = cases(a.only)
    if a.list:
        print("\n".join(c[0] for c in todo))
        return 0
    if not os.access(os.path.join(a.build, "bin/locusrun"), os.X_OK):
        print("soak: %s/bin/locusrun not found (build first)" % a.build, file=sys.stderr)
        return 2
    if not todo or a.runs < 1:
        print("soak: nothing to run", file=sys.stderr)
        return 2
    if not shutil.which("gdb"):
        print("soak: gdb not found: hung jobs will be killed without stacks", file=sys.stderr)
    os.makedirs(a.out, exist_ok=True)
    hog = None
    if a.load:
        # In its own process group, so killing it takes timeout's child too.
        hog = subprocess.Popen(["timeout", str(int(a.minutes * 60 + a.hang + 60)), "yes"],
                               stdout=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + a.minutes * 60
    bad, done = [], 0
    try:
        for r in range(a.runs):
            for i, case in enumerate(todo):
                if time.time() > deadline:
                    break
                tag = "%s.r%d" % (re.sub(r"[^\w.-]", "_", case[0]), r)
                verdict, dt = run_one(a.build, case, a.hang, a.out, tag)
                done += 1
                print("%-40s run %d  %6.2fs  %s" % (case[0], r, dt, verdict), flush=True)
                if not verdict.startswith("ok"):
                    bad.append((case[0], r, verdict))
    finally:
        if hog:
            os.killpg(hog.pid, signal.SIGKILL)
            hog.wait()
    print("soak: %d jobs, %d bad" % (done, len(bad)))
    for b in bad:
        print("  %s run %d: %s" % b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
