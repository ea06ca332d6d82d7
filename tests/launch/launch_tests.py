#!/usr/bin/env python3
"""End-to-end tests of locusrun with real processes.

usage: launch_tests.py CASE LOCUSRUN PMI_RANK MPICH_HELLO|"" TOPOLOGY_DIR [BOOT_NODES]

Each case starts real jobs and checks exit status, messages, output, and
that no process of the job (found by LOCUS_JOBID in /proc/*/environ) and no
/dev/shm/locus.<jobid>.* file is left afterwards.
"""
import glob
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

CASE, LOCUSRUN, PMI_RANK, MPICH_HELLO, TOPODIR = sys.argv[1:6]
BOOT_NODES = sys.argv[6] if len(sys.argv) > 6 else ""
OMPI_HELLO = sys.argv[7] if len(sys.argv) > 7 else ""
PMIX_INTRUDER = sys.argv[8] if len(sys.argv) > 8 else ""
# An exec-launcher prefix that runs every "node" here (tests/launch/fake_rsh).
FAKE_RSH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_rsh")
EXEC = ["--launcher", "exec", "--launcher-exec", FAKE_RSH]
FAILURES = []
HOST = socket.gethostname()


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)
    return cond


def run(args, stdin_data=None, timeout=30, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([LOCUSRUN] + args, input=stdin_data, capture_output=True,
                       text=True, timeout=timeout, env=e,
                       stdin=None if stdin_data is not None else subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


class Job:
    """A job running in the background, its stdout read line by line."""

    def __init__(self, args, env=None):
        self.t0 = time.monotonic()
        e = dict(os.environ)
        e.update(env or {})
        self.p = subprocess.Popen([LOCUSRUN] + args, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                  text=True, env=e)
        self.lines = queue.Queue()
        self.out = []   # stdout lines taken from the queue so far
        self.err = []
        threading.Thread(target=self._pump, args=(self.p.stdout, self.lines.put),
                         daemon=True).start()
        threading.Thread(target=self._pump, args=(self.p.stderr, self.err.append),
                         daemon=True).start()

    @staticmethod
    def _pump(f, put):
        for line in f:
            put(line)

    def starts(self, n, timeout=20):
        """Waits for n "start R PID JOBID" lines; returns {rank: pid}, jobid."""
        pids, jobid = {}, None
        end = time.monotonic() + timeout
        while len(pids) < n and time.monotonic() < end:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            self.out.append(line)
            m = re.match(r"start (\d+) (\d+) (\S+)", line)
            if m:
                pids[int(m.group(1))] = int(m.group(2))
                jobid = m.group(3)
        took = time.monotonic() - self.t0
        if len(pids) < n:
            self.p.kill()
            raise SystemExit("FAIL: only %d of %d ranks started in %.1f s; stderr: %s"
                             % (len(pids), n, took, "".join(self.err)))
        print("%d ranks started in %.2f s" % (n, took))
        return pids, jobid

    def expect(self, pattern, count, timeout=20):
        """Waits for count stdout lines matching pattern; returns them."""
        end = time.monotonic() + timeout
        while True:
            got = [line for line in self.out if re.search(pattern, line)]
            if len(got) >= count or time.monotonic() > end:
                break
            try:
                self.out.append(self.lines.get(timeout=0.2))
            except queue.Empty:
                pass
        check(len(got) == count, "want %d lines like %r, got %s; stderr: %s"
              % (count, pattern, got, "".join(self.err)))
        return got

    def wait(self, timeout=20):
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            check(False, "locusrun did not end within %s s" % timeout)
            rc = None
        time.sleep(0.05)  # let the reader threads drain
        return rc, time.monotonic() - self.t0, "".join(self.err)


def job_processes(jobid):
    needle = b"\0LOCUS_JOBID=" + jobid.encode() + b"\0"
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                env = b"\0" + f.read()
        except OSError:
            continue
        if needle in env + b"\0":
            found.append(int(d))
    return found


def check_nothing_left(jobid, pids=()):
    """No process of the job and no shm file of it, allowing the kernel a
    moment to finish reaping."""
    end = time.monotonic() + 1.0
    while True:
        procs = job_processes(jobid)
        alive = [p for p in pids if os.path.exists("/proc/%d" % p)
                 and not open("/proc/%d/stat" % p).read().split(") ")[1].startswith("Z")]
        shm = glob.glob("/dev/shm/locus.%s.*" % jobid)
        if not (procs or alive or shm) or time.monotonic() > end:
            break
        time.sleep(0.05)
    check(not procs, "processes of job %s left: %s" % (jobid, procs))
    check(not alive, "rank pids still alive: %s" % alive)
    check(not shm, "shm files left: %s" % shm)


def parse_list(s):
    out = set()
    for part in s.strip().split(","):
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        elif part:
            out.add(int(part))
    return out


def env_lines(out):
    ranks = {}
    for line in out.splitlines():
        kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
        if "LOCUS_RANK" in kv:
            ranks[int(kv["LOCUS_RANK"])] = kv
    return ranks


def failing_job(mode, n, target, want_rc, want_msg):
    job = Job(["-n", str(n), "--oversubscribe", PMI_RANK, mode, str(target)])
    pids, jobid = job.starts(n)
    rc, elapsed, err = job.wait()
    print("rc=%s in %.2f s; stderr:\n%s" % (rc, elapsed, err))
    check(rc == want_rc, "%s: exit status %s, want %s" % (mode, rc, want_rc))
    msg = want_msg % {"pid": pids[target], "host": HOST}
    check(msg in err, "%s: message %r not in stderr" % (mode, msg))
    check_nothing_left(jobid, pids.values())


# ---------------------------------------------------------------- cases

def case_env():
    os.environ["LOCUS_TEST_FROM_ENV"] = "yes"
    rc, out, err = run(["-n", "3", "--oversubscribe", "-x", "LOCUS_TEST_X=42",
                        "-x", "LOCUS_TEST_FROM_ENV", PMI_RANK, "env"])
    check(rc == 0, "exit status %d, stderr %s" % (rc, err))
    ranks = env_lines(out)
    check(sorted(ranks) == [0, 1, 2], "ranks reported: %s" % sorted(ranks))
    jobids = set()
    for r, kv in ranks.items():
        for k, v in (("PMI_RANK", r), ("PMI_SIZE", 3), ("MPI_LOCALNRANKS", 3),
                     ("MPI_LOCALRANKID", r), ("LOCUS_SIZE", 3), ("LOCUS_LOCAL_RANK", r),
                     ("LOCUS_LOCAL_SIZE", 3), ("LOCUS_TEST_X", 42)):
            check(kv.get(k) == str(v), "rank %d: %s=%s, want %s" % (r, k, kv.get(k), v))
        check(kv.get("PMI_FD", "x").isdigit(), "rank %d: PMI_FD=%s" % (r, kv.get("PMI_FD")))
        jobids.add(kv.get("LOCUS_JOBID"))
    check(len(jobids) == 1 and None not in jobids and "(unset)" not in jobids,
          "LOCUS_JOBID differs or unset: %s" % jobids)
    # mpirun and mpiexec are the same launcher.
    for alias in ("mpirun", "mpiexec"):
        path = os.path.join(os.path.dirname(LOCUSRUN), alias)
        p = subprocess.run([path, "-np", "2", "--oversubscribe", PMI_RANK, "env"],
                           capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        check(p.returncode == 0 and sorted(env_lines(p.stdout)) == [0, 1],
              "%s: %d %s" % (alias, p.returncode, p.stderr))
    # -x VAR alone passes this environment's value on.
    rc, out, err = run(["-n", "1", "-x", "LOCUS_TEST_X", PMI_RANK, "env"],
                       env={"LOCUS_TEST_X": "fromhere"})
    check(env_lines(out).get(0, {}).get("LOCUS_TEST_X") == "fromhere", "-x VAR: %s" % out)


def case_bindings():
    ncpu = len(os.sched_getaffinity(0))
    allowed = os.sched_getaffinity(0)
    n = min(ncpu, 4)
    for extra in ([], ["--bind-to", "core"], ["--bind-to", "pu"]):
        rc, out, err = run(["-n", str(n)] + extra + ["--report-bindings", PMI_RANK, "env"])
        check(rc == 0, "%s: exit %d %s" % (extra, rc, err))
        ranks = env_lines(out)
        seen = set()
        for r, kv in ranks.items():
            planned = parse_list(kv["LOCUS_CPUS"])
            real = parse_list(kv["allowed"])
            check(planned == real, "rank %d %s: bound to %s, plan says %s" % (r, extra, real, planned))
            check(kv["LOCUS_BOUND"] == "1", "rank %d not marked bound" % r)
            check(not (real & seen), "rank %d shares PUs %s" % (r, real & seen))
            seen |= real
            check(re.search(r"rank %d\b" % r, err) is not None, "no report line for rank %d" % r)
            check_membind(r, kv)
    rc, out, err = run(["-n", "2", "--oversubscribe", "--bind-to", "none", PMI_RANK, "env"])
    for r, kv in env_lines(out).items():
        check(parse_list(kv["allowed"]) == allowed, "--bind-to none: rank %d on %s" % (r, kv["allowed"]))
    if ncpu >= 2:
        rc, out, err = run(["-n", "1", "--cpus-per-rank", "2", PMI_RANK, "env"])
        kv = env_lines(out).get(0, {})
        check(len(parse_list(kv.get("allowed", ""))) == 2, "--cpus-per-rank 2: %s" % kv)


def check_membind(r, kv):
    """Memory binding is only applied where it narrows something: with
    several NUMA nodes and a rank planned on fewer than all of them."""
    nodes = glob.glob("/sys/devices/system/node/node[0-9]*")
    planned = parse_list(kv.get("LOCUS_MEM_NODES", ""))
    mode, _, mask = kv.get("mempolicy", "-1:").partition(":")
    if len(nodes) > 1 and planned and len(planned) < len(nodes):
        check(mode == "2" and parse_list(mask) == planned,
              "rank %d: memory policy %s, plan says MPOL_BIND on %s" % (r, kv.get("mempolicy"), planned))
    else:
        check(mode == "0", "rank %d: memory policy %s on a node where nothing narrows"
              % (r, kv.get("mempolicy")))


def case_omp():
    """The plan's OMP_* values and its LOCUS_NET_IFACES apply unless the
    user set one explicitly (in the environment or with -x);
    LOCUS_NODE_NCPUS counts the PUs the node's ranks may use together."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}

    def ranks(args, env):
        p = subprocess.run([LOCUSRUN] + args + [PMI_RANK, "env"], capture_output=True,
                           text=True, timeout=30, env=env, stdin=subprocess.DEVNULL)
        check(p.returncode == 0, "%s: exit %d %s" % (args, p.returncode, p.stderr))
        return env_lines(p.stdout)

    base = ranks(["-n", "2", "--oversubscribe"], clean)
    check(sorted(base) == [0, 1], "ranks reported: %s" % sorted(base))
    for r, kv in base.items():
        check(kv.get("OMP_NUM_THREADS") == "1", "rank %d: plan OMP_NUM_THREADS=%s, want 1"
              % (r, kv.get("OMP_NUM_THREADS")))
    plan_places = {r: kv.get("OMP_PLACES") for r, kv in base.items()}
    env = dict(clean, OMP_NUM_THREADS="3")
    for r, kv in ranks(["-n", "2", "--oversubscribe"], env).items():
        check(kv.get("OMP_NUM_THREADS") == "3", "rank %d: environment's OMP_NUM_THREADS=3 lost: %s"
              % (r, kv.get("OMP_NUM_THREADS")))
        check(kv.get("OMP_PLACES") == plan_places[r], "rank %d: OMP_PLACES %s, plan's %s"
              % (r, kv.get("OMP_PLACES"), plan_places[r]))
    got = ranks(["-n", "2", "--oversubscribe", "-x", "OMP_NUM_THREADS=5", "-x",
                 "OMP_PLACES=cores", "-x", "OMP_PROC_BIND=spread"], env)
    for r, kv in got.items():
        for k, v in (("OMP_NUM_THREADS", "5"), ("OMP_PLACES", "cores"), ("OMP_PROC_BIND", "spread")):
            check(kv.get(k) == v, "rank %d: -x %s=%s gave %s" % (r, k, v, kv.get(k)))
    got = ranks(["-n", "1", "-x", "OMP_NUM_THREADS"], dict(clean, OMP_NUM_THREADS="6"))
    check(got.get(0, {}).get("OMP_NUM_THREADS") == "6", "-x OMP_NUM_THREADS: %s" % got)
    # The plan names this node's NIC in LOCUS_NET_IFACES (eth0 here); the
    # user's choice of interfaces wins, given with -x or in the environment.
    got = ranks(["-n", "1", "-x", "LOCUS_NET_IFACES=lo"], clean)
    check(got.get(0, {}).get("LOCUS_NET_IFACES") == "lo", "-x LOCUS_NET_IFACES=lo: %s"
          % got.get(0, {}).get("LOCUS_NET_IFACES"))
    got = ranks(["-n", "1"], dict(clean, LOCUS_NET_IFACES="lo"))
    check(got.get(0, {}).get("LOCUS_NET_IFACES") == "lo", "environment's LOCUS_NET_IFACES=lo: %s"
          % got.get(0, {}).get("LOCUS_NET_IFACES"))
    if len(os.sched_getaffinity(0)) >= 2:
        got = ranks(["-n", "1", "--cpus-per-rank", "2"], clean)
        check(got.get(0, {}).get("OMP_NUM_THREADS") == "2",
              "--cpus-per-rank 2 without a user value: %s" % got)
    # LOCUS_NODE_NCPUS: the union of what the node's ranks may run on.
    ncpu = len(os.sched_getaffinity(0))
    for args in (["-n", str(min(ncpu, 2))], ["-n", str(2 * ncpu), "--oversubscribe"],
                 ["-n", "2", "--oversubscribe", "--bind-to", "none"]):
        got = ranks(args, clean)
        union = set()
        for kv in got.values():
            union |= parse_list(kv["allowed"])
        for r, kv in got.items():
            check(kv.get("LOCUS_NODE_NCPUS") == str(len(union)),
                  "%s: rank %d LOCUS_NODE_NCPUS=%s, ranks may use %d PUs"
                  % (args, r, kv.get("LOCUS_NODE_NCPUS"), len(union)))


def case_report():
    rc, out, err = run(["-n", "2", "--oversubscribe", "--report-bindings", PMI_RANK, "env"])
    check(rc == 0, "exit %d" % rc)
    lines = [l for l in err.splitlines() if l.strip()]
    check(len(lines) == 2, "want 2 report lines, got %s" % lines)
    for r, line in enumerate(lines):
        check(re.search(r"rank %d\b" % r, line), "line %d names rank %d: %s" % (r, r, line))
        for word in ("PU", "NUMA", "NIC", "GPU"):
            check(word in line, "report line lacks %s: %s" % (word, line))


def case_dryrun():
    xml = sorted(glob.glob(os.path.join(TOPODIR, "*.xml")))
    check(xml, "no topologies in %s" % TOPODIR)
    with tempfile.TemporaryDirectory() as d:
        marker = os.path.join(d, "started")
        rc, out, err = run(["--topology", xml[0], "--dry-run", "-n", "8", "/usr/bin/touch", marker])
        check(rc == 0, "dry-run exit %d: %s" % (rc, err))
        check(not os.path.exists(marker), "--dry-run started the program")
        rows = [l for l in out.splitlines() if re.match(r"\s*\d+\s", l)]
        check(len(rows) == 8, "want 8 plan rows, got %d:\n%s" % (len(rows), out))
        rc, out, err = run(["--dry-run", "-n", "1"])
        check(rc == 0 and out.strip(), "dry-run of this machine: %d %s" % (rc, err))


def case_badinput():
    with tempfile.TemporaryDirectory() as d:
        marker = os.path.join(d, "started")
        notexec = os.path.join(d, "data.txt")
        open(notexec, "w").write("x")
        touch = ["/usr/bin/touch", marker]
        cases = [
            (["-n", "0"] + touch, "-n: '0' is not a positive integer"),
            (["-n", "-3"] + touch, "-n: '-3' is not a positive integer"),
            (["-n", "abc"] + touch, "-n: 'abc' is not a positive integer"),
            (["-np", "2x"] + touch, "-np: '2x' is not a positive integer"),
            (["-n", "2", "/no/such/program"], "/no/such/program"),
            (["-n", "2", "no-such-program-xyz"], "no-such-program-xyz"),
            (["-n", "2", notexec], notexec),
            (["-n", "2", d], d),
            (["--frobnicate"] + touch, "--frobnicate"),
            (["-n", "2", "--map-by", "nonsense"] + touch, "nonsense"),
            (["-n", "100000"] + touch, "PU"),
            (["-n"], "-n"),
            ([], "program"),
            (["-n", "1", "--timeout", "-1"] + touch, "--timeout"),
            (["-n", "1", "--topology", "/x.xml"] + touch, "--topology"),
        ]
        for args, words in cases:
            rc, out, err = run(args)
            lines = err.splitlines()
            check(rc == 2, "%s: exit %d, want 2" % (args, rc))
            check(len(lines) == 1 and lines[0].startswith("locusrun: ") and words in lines[0],
                  "%s: stderr %r" % (args, err))
            check(out == "", "%s: stdout %r" % (args, out))
            check(not os.path.exists(marker), "%s: the program was started" % args)


def case_pmi16():
    rc, out, err = run(["-n", "16", "--oversubscribe", PMI_RANK, "ok"], timeout=50)
    check(rc == 0, "exit %d: %s" % (rc, err))
    ok = set(int(m) for m in re.findall(r"^rank (\d+) of 16 OK$", out, re.M))
    check(ok == set(range(16)), "ranks OK: %s\n%s" % (sorted(ok), err))
    jobs = set(re.findall(r"^start \d+ \d+ (\S+)$", out, re.M))
    for j in jobs:
        check_nothing_left(j)


def case_pmibad():
    rc, out, err = run(["-n", "2", PMI_RANK, "bad"])
    check(rc == 0, "exit %d: %s" % (rc, err))
    check(len(re.findall(r"^rank \d of 2 OK$", out, re.M)) == 2, "out: %s err: %s" % (out, err))


def case_mpich():
    if not MPICH_HELLO or not os.path.exists(MPICH_HELLO):
        print("SKIPPED: mpicc.mpich not found, no MPICH-built program to run")
        sys.exit(77)
    # MPICH's own library over locusrun's PMI-1: --no-abi-swap, or locusrun
    # would give it Locus's MPICH-ABI layer (tested by abi_legacy_mpich, out
    # of the sanitizer pass: the layer is no place for a sanitized library).
    for extra in (["--no-abi-swap"],):
        rc, out, err = run(extra + ["-n", "4", "--oversubscribe", MPICH_HELLO], timeout=50)
        check(rc == 0, "%s exit %d: %s" % (extra, rc, err))
        got = sorted(re.findall(r"^hello rank (\d+) of (\d+) sum (\d+)$", out, re.M))
        check(got == [(str(r), "4", "6") for r in range(4)], "MPICH ranks %s: %s\n%s"
              % (extra, got, err))


def ompi_hello_or_skip():
    if not OMPI_HELLO or not os.path.exists(OMPI_HELLO):
        print("SKIPPED: mpicc.openmpi or OpenPMIx not found, no Open MPI-built program to run")
        sys.exit(77)


def case_ompi():
    """An Open MPI-built program on Open MPI's own library (--no-abi-swap;
    without it locusrun gives it Locus's Open MPI-ABI layer, abi_legacy_*)
    under locusrun --mpi pmix: every rank sees the job (sizes, the
    allreduce), and runs where locusrun bound it."""
    ompi_hello_or_skip()
    tmp = tempfile.mkdtemp()  # the servers' directories go under TMPDIR
    env = {"TMPDIR": tmp}
    rc, out, err = run(["--no-abi-swap", "--mpi", "pmix", "-n", "4", "--oversubscribe", OMPI_HELLO], timeout=50,
                       env=env)
    check(rc == 0, "exit %d: %s" % (rc, err))
    got = sorted(re.findall(r"^hello rank (\d+) of (\d+) sum (\d+)$", out, re.M))
    check(got == [(str(r), "4", "6") for r in range(4)], "Open MPI ranks: %s\n%s" % (got, err))
    rc, out, err = run(["--no-abi-swap", "--mpi=pmix", "-n", "2", "--bind-to", "core", "--report-bindings",
                        OMPI_HELLO], timeout=50, env=env)
    check(rc == 0, "bound run: exit %d: %s" % (rc, err))
    planned = dict(re.findall(r"rank (\d+) bound to .*?PUs? (\S+),", err))
    seen = dict(re.findall(r"^affinity rank (\d+) cpus (\S+)$", out, re.M))
    check(len(seen) == 2 and planned == seen,
          "ranks run where locusrun bound them: planned %s, seen %s\n%s" % (planned, seen, err))
    check(not os.listdir(tmp), "PMIx server directories left: %s" % os.listdir(tmp))
    check(not pmix_shm_left(), "Open MPI's segments left: %s" % pmix_shm_left())
    os.rmdir(tmp)


SHOW_RANK = r"""r=${PMI_RANK:-$OMPI_COMM_WORLD_RANK}
echo "rank $r local ${MPI_LOCALRANKID:-$OMPI_COMM_WORLD_LOCAL_RANK} of \
${MPI_LOCALNRANKS:-$OMPI_COMM_WORLD_LOCAL_SIZE} FOO=$FOO \
cpus $(grep Cpus_allowed_list /proc/self/status | cut -f2)"
"""


def rank_lines(cmd, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd + ["/bin/sh", "-c", SHOW_RANK], capture_output=True, text=True,
                       timeout=60, env=e, stdin=subprocess.DEVNULL)
    return p.returncode, sorted(l for l in p.stdout.splitlines() if l.startswith("rank ")), p.stderr


def case_dialects():
    """Open MPI's and Hydra's mpirun command lines run under locusrun as
    under each peer's own launcher: the same ranks per node, local ranks,
    exported variables and, where bound, cores. What Locus cannot honour
    is named in one line."""
    ompi, hydra = shutil.which("mpirun.openmpi"), shutil.which("mpiexec.hydra") or \
        shutil.which("mpiexec.mpich")
    if not ompi or not hydra:
        print("SKIPPED: Open MPI's mpirun or MPICH's Hydra is not installed")
        sys.exit(77)
    forms = [
        ("Open MPI", [ompi, "--allow-run-as-root"], [],
         ["-np", "2", "--map-by", "ppr:2:socket:PE=1", "--bind-to", "core", "-x", "FOO=1"]),
        ("Open MPI", [ompi, "--allow-run-as-root"], [],
         ["-np", "2", "--map-by", "core", "--mca", "hwloc_base_binding_policy", "none",
          "-x", "FOO=2"]),
        ("Hydra", [hydra, "-launcher", "fork"], EXEC,
         ["-n", "4", "-ppn", "2", "-genv", "FOO", "1", "-hosts", "a,b", "-bind-to", "core"]),
        ("Hydra", [hydra, "-launcher", "fork"], EXEC,
         ["-n", "2", "-genvlist", "FOO", "-bind-to", "core"]),
    ]
    for peer, peer_cmd, ours, words in forms:
        env = {"FOO": "3"}
        prc, want, perr = rank_lines(peer_cmd + words, env)
        if prc != 0:
            print("%s could not run %s here (%d): %s" % (peer, words, prc, perr.strip()))
            continue
        rc, got, err = rank_lines([LOCUSRUN] + ours + words, env)
        print("%s %s:\n  %s\n  locusrun: %s" % (peer, " ".join(words), want, got))
        check(rc == 0 and got == want, "%s %s: locusrun gave %s (%d, %r), %s gave %s"
              % (peer, words, got, rc, err, peer, want))
    # What cannot be honoured: one line each, and the job still runs.
    rc, got, err = rank_lines([LOCUSRUN, "-n", "1", "--mca", "btl", "^openib", "-genvnone",
                               "--rank-by", "numa"])
    lines = err.strip().splitlines()
    check(rc == 0 and len(got) == 1 and len(lines) == 3 and
          all(l.startswith("locusrun: ") and l.endswith("; ignored") for l in lines),
          "unhonoured options: rc %d, %r" % (rc, err))
    rc, out, err = run(["-n", "1", "-genv", "FOO"])
    check(rc == 2 and "-genv: needs two values" in err, "-genv FOO: %d %r" % (rc, err))


def case_pmix_intruder():
    """Clients of the job's user that are no rank, at a --mpi pmix job's
    server: a TCP connection that never finishes its handshake (it held
    PMIx_server_finalize, and the job, forever), and a client with a rank's
    PMIx environment that joins, starts a fence and dies there. The job
    ends on time, with every rank's last line, and leaves nothing."""
    if not PMIX_INTRUDER:
        print("SKIPPED: built without OpenPMIx")
        sys.exit(77)
    for how in ("hold", "die"):
        tmp = tempfile.mkdtemp()
        job = Job(["--mpi", "pmix", "-n", "2", "--oversubscribe", "/bin/sh", "-c",
                   "echo ready $PMIX_RANK $$; sleep 2; echo last $PMIX_RANK"], env={"TMPDIR": tmp})
        ready = [re.search(r"^ready (\d+) (\d+)", l) for l in job.expect(r"^ready \d+ \d+", 2)]
        pid0 = [int(m.group(2)) for m in ready if m.group(1) == "0"][0]
        env = dict(x.split("=", 1) for x in environ_text(pid0).split("\0") if "=" in x)
        held = []
        if how == "hold":
            host, port = env["PMIX_SERVER_URI4"].split("tcp4://")[1].rsplit(":", 1)
            for _ in range(3):
                held.append(socket.create_connection((host, int(port)), timeout=5))
        else:
            p = subprocess.run([PMIX_INTRUDER], env=env, capture_output=True, text=True,
                               timeout=20)
            check(p.returncode == -9, "intruder: %d %r %r" % (p.returncode, p.stdout, p.stderr))
        t0 = time.monotonic()
        rc, _, err = job.wait(timeout=30)
        took = time.monotonic() - t0
        for s in held:
            s.close()
        while not job.lines.empty():
            job.out.append(job.lines.get())
        print("%s: the job ended %.2f s after the intruder (its ranks sleep 2 s); %s"
              % (how, took, err.strip()))
        check(rc == 0, "%s: exit %s: %s" % (how, rc, err))
        lasts = sorted(l.split()[1] for l in job.out if l.startswith("last "))
        check(lasts == ["0", "1"], "%s: last lines %s: %r" % (how, lasts, job.out))
        # 2 s of sleep and 2 s of the PMIx server's grace here (4.2 s on a
        # quiet machine, 7.3 s once in CI among the heaviest cases): what
        # matters is that the intruder does not hold the job for ever.
        check(took < 15.0, "%s: took %.2f s" % (how, took))
        check(not os.listdir(tmp), "%s: PMIx server directories left: %s" % (how, os.listdir(tmp)))
        shutil.rmtree(tmp, ignore_errors=True)
        check_nothing_left(env.get("LOCUS_JOBID", "none"), [pid0])


def environ_text(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        return f.read().decode(errors="replace")


def pmix_shm_left():
    """/dev/shm/locus.<jobid>.pmix-n<node> directories (Open MPI's segments
    under --mpi pmix) of locusrun jobs that have ended (the jobid starts
    with the front end's pid)."""
    left = []
    for f in glob.glob("/dev/shm/locus.*.pmix-n*"):
        pid = os.path.basename(f).split(".")[1].split("-")[0]
        if pid.isdigit() and not os.path.exists("/proc/" + pid):
            left.append(f)
    return left


def case_ompi_abort():
    """MPI_Abort of an Open MPI rank reaches locusrun through PMIx: the job
    ends with the rank's code and a line naming it, nothing left behind."""
    ompi_hello_or_skip()
    tmp = tempfile.mkdtemp()
    t0 = time.monotonic()
    rc, out, err = run(["--no-abi-swap", "--mpi", "pmix", "-n", "3", "--oversubscribe", OMPI_HELLO, "abort"],
                       timeout=50, env={"TMPDIR": tmp})
    check(rc == 3, "exit %d (want 3): %s" % (rc, err))
    check(re.search(r"rank 1 \(pid \d+\) on \S+ called abort with exit code 3", err),
          "no abort line: %s" % err)
    print("abort to exit: %.2f s" % (time.monotonic() - t0))
    check(not os.listdir(tmp), "PMIx server directories left: %s" % os.listdir(tmp))
    check(not pmix_shm_left(), "Open MPI's segments left: %s" % pmix_shm_left())
    os.rmdir(tmp)


def case_ompi_badmpi():
    rc, out, err = run(["--mpi", "pmi3", "-n", "1", "/bin/true"])
    check(rc == 2 and "--mpi pmi3: expected pmi1 or pmix" in err and err.count("\n") == 1,
          "bad --mpi: exit %d: %r" % (rc, err))


def case_tagoutput():
    n, count = 4, 3000
    rc, out, err = run(["-n", str(n), "--oversubscribe", "--tag-output", PMI_RANK, "spam", str(count)])
    check(rc == 0, "exit %d" % rc)
    nextline = [0] * n
    pat = re.compile(r"^\[(\d+)\] spam rank (\d+) line (\d+) \.{64}$")
    for line in out.splitlines():
        m = pat.match(line)
        if not check(m and m.group(1) == m.group(2), "torn or mistagged line: %r" % line):
            break
        r, i = int(m.group(1)), int(m.group(3))
        check(i == nextline[r], "rank %d line %d out of order" % (r, i))
        nextline[r] = i + 1
    check(nextline == [count] * n, "lines per rank: %s" % nextline)


def case_stdin():
    rc, out, err = run(["-n", "2", "--oversubscribe", "/bin/cat"], stdin_data="hello\nworld\n")
    check(rc == 0 and out == "hello\nworld\n", "stdin to rank 0 only: rc %d out %r" % (rc, out))
    rc, out, err = run(["-n", "2", "--oversubscribe", "--tag-output", "/bin/cat"],
                       stdin_data="a\nb")
    check(out == "[0] a\n[0] b", "tagged stdin echo: %r" % out)
    big = "".join("line %d\n" % i for i in range(50000))
    rc, out, err = run(["-n", "1", "/bin/cat"], stdin_data=big)
    check(rc == 0 and out == big, "large stdin: %d bytes back of %d" % (len(out), len(big)))


def case_success_nonmpi():
    rc, out, err = run(["-n", "2", "--oversubscribe", "/bin/true"])
    check(rc == 0 and err == "", "true: %d %r" % (rc, err))
    rc, out, err = run(["-n", "2", "--oversubscribe", "/bin/sh", "-c", "exit $LOCUS_RANK"])
    check(rc == 1 and re.search(r"rank 1 \(pid \d+\) on \S+ exited with status 1", err),
          "sh exit: %d %r" % (rc, err))


RANK_FDS = r"""
import os, stat
fds = []
for name in os.listdir("/proc/self/fd"):
    try:
        st = os.fstat(int(name))   # the listing's own descriptor is gone by now
    except OSError:
        continue
    kind = "sock" if stat.S_ISSOCK(st.st_mode) else "pipe" if stat.S_ISFIFO(st.st_mode) else "other"
    fds.append("%s:%s" % (name, kind))
print("rank", os.environ["PMI_RANK"], "pmi", os.environ.get("PMI_FD"), "fds", ",".join(sorted(fds)))
"""


def case_rankfds():
    """A rank holds stdio and its PMI socket, nothing else: not the proxy's
    control stream (through it a rank could forge the job's exit status or
    other ranks' output), not another rank's pipes, not what the caller's
    shell left open. Local launcher, and the exec launcher over two nodes."""
    r, w = os.pipe()   # a descriptor the caller leaves open (inheritable)
    os.set_inheritable(w, True)
    for extra in ([], EXEC + ["--host", "n0:2,n1:2"]):
        p = subprocess.run([LOCUSRUN] + extra + ["-n", "4", "--oversubscribe", sys.executable,
                            "-c", RANK_FDS], capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL, pass_fds=(w,))
        lines = [l.split() for l in p.stdout.splitlines() if l.startswith("rank ")]
        check(p.returncode == 0 and len(lines) == 4, "rankfds %s: rc %d, %r %r"
              % (extra[:2], p.returncode, p.stdout, p.stderr))
        for l in lines:
            pmi = l[3]
            fds = dict(x.split(":") for x in l[5].split(","))
            want = {"0", "1", "2", pmi}
            check(set(fds) == want and fds[pmi] == "sock",
                  "rankfds %s: rank %s has %s, want stdio and PMI fd %s only"
                  % (extra[:2], l[1], l[5], pmi))
    os.close(r)
    os.close(w)


def case_exitcode():
    failing_job("exit", 3, 1, 3, "rank 1 (pid %(pid)d) on %(host)s exited with status 3")


def case_nofinalize():
    failing_job("nofin", 3, 2, 1, "rank 2 (pid %(pid)d) on %(host)s exited without calling PMI finalize")


def case_closepmi():
    failing_job("closepmi", 3, 1, 1,
                "rank 1 (pid %(pid)d) on %(host)s closed its PMI connection without finalize")


def case_abort():
    failing_job("abort", 4, 1, 7, "rank 1 (pid %(pid)d) on %(host)s called abort with exit code 7")


def case_crash():
    failing_job("crash", 4, 2, 139, "rank 2 (pid %(pid)d) on %(host)s killed by signal 11 (SIGSEGV)")


def case_kill9():
    job = Job(["-n", "4", "--oversubscribe", PMI_RANK, "hang"])
    pids, jobid = job.starts(4)
    t0 = time.monotonic()
    os.kill(pids[2], signal.SIGKILL)
    rc, _, err = job.wait()
    elapsed = time.monotonic() - t0
    print("job ended %.3f s after kill -9 of rank 2; stderr:\n%s" % (elapsed, err))
    check(rc == 137, "exit status %s, want 137" % rc)
    check("locusrun: rank 2 (pid %d) on %s killed by signal 9 (SIGKILL)" % (pids[2], HOST) in err,
          "message naming rank and signal")
    # The launcher promises one second; the margin absorbs a loaded 2-core
    # test machine (sanitizer builds, parallel ctest).
    check(elapsed < 2.0, "took %.2f s" % elapsed)
    check_nothing_left(jobid, pids.values())


def case_sigint():
    job = Job(["-n", "4", "--oversubscribe", PMI_RANK, "hang"])
    pids, jobid = job.starts(4)
    job.p.send_signal(signal.SIGINT)
    rc, _, err = job.wait()
    check(rc == 130, "exit status %s, want 130; %s" % (rc, err))
    check("SIGINT" in err, "no mention of SIGINT: %r" % err)
    check_nothing_left(jobid, pids.values())


def case_sigterm():
    job = Job(["-n", "3", "--oversubscribe", PMI_RANK, "hang"])
    pids, jobid = job.starts(3)
    job.p.send_signal(signal.SIGTERM)
    rc, _, err = job.wait()
    check(rc == 143, "exit status %s, want 143; %s" % (rc, err))
    check("SIGTERM" in err, "no mention of SIGTERM: %r" % err)
    check_nothing_left(jobid, pids.values())


def case_ctrlc_tty():
    """A real Ctrl-C: locusrun on a terminal, ^C typed into it. Only the
    front end is in the terminal's foreground group; it must forward."""
    import pty
    import select
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(LOCUSRUN, [LOCUSRUN, "-n", "3", "--oversubscribe", PMI_RANK, "hang"])
    out = b""
    end = time.monotonic() + 20
    while out.count(b"start ") < 3 and time.monotonic() < end:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    m = re.search(rb"start \d+ \d+ (\S+)", out)
    check(m is not None, "ranks did not start: %r" % out)
    os.write(fd, b"\x03")
    st = None
    while st is None and time.monotonic() < end:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                out += os.read(fd, 4096)
            except OSError:
                pass  # the terminal closes as locusrun exits
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            st = status
    if st is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        check(False, "locusrun did not end after ^C")
    os.close(fd)
    print(out.decode(errors="replace"))
    if st is not None:
        check(os.waitstatus_to_exitcode(st) == 130, "exit %s, want 130" % os.waitstatus_to_exitcode(st))
    check(b"got SIGINT" in out, "no forwarding message")
    if m:
        check_nothing_left(m.group(1).decode())


def case_sigint2():
    job = Job(["-n", "3", "--oversubscribe", PMI_RANK, "hangign"])
    pids, jobid = job.starts(3)
    job.p.send_signal(signal.SIGINT)
    time.sleep(0.5)
    check(job.p.poll() is None, "job ended on a forwarded SIGINT its ranks ignore")
    t0 = time.monotonic()
    job.p.send_signal(signal.SIGINT)
    rc, _, err = job.wait()
    print("second Ctrl-C ended the job in %.3f s" % (time.monotonic() - t0))
    check(rc == 130, "exit status %s, want 130; %s" % (rc, err))
    check_nothing_left(jobid, pids.values())


def case_timeout():
    # 4 s: under the sanitizers, on a loaded machine (a fresh clone's whole
    # suite beside other builds), the second rank took over 1.5 s to start.
    job = Job(["-n", "2", "--oversubscribe", "--timeout", "4", PMI_RANK, "hangign"])
    pids, jobid = job.starts(2)
    rc, elapsed, err = job.wait()
    print("timeout job ended after %.2f s" % elapsed)
    check(rc == 124, "exit status %s, want 124; %s" % (rc, err))
    check("timeout" in err, "no timeout message: %r" % err)
    check(elapsed >= 4, "ended early: %.2f s" % elapsed)
    check_nothing_left(jobid, pids.values())


def case_proxykill():
    # kill -9 of the proxy: ranks die through PDEATHSIG, the front end reports.
    job = Job(["-n", "2", "--oversubscribe", PMI_RANK, "hang"])
    pids, jobid = job.starts(2)
    proxy = [p for p in job_processes(jobid) if p not in pids.values()]
    check(len(proxy) == 1, "want one proxy process, got %s" % proxy)
    os.kill(proxy[0], signal.SIGKILL)
    rc, _, err = job.wait()
    check(rc not in (0, None), "exit status %s after the proxy died" % rc)
    check("proxy" in err, "no message about the proxy: %r" % err)
    check_nothing_left(jobid, pids.values())
    # kill -9 of locusrun itself: the proxy tears the job down.
    job = Job(["-n", "2", "--oversubscribe", PMI_RANK, "hang"])
    pids, jobid = job.starts(2)
    job.p.kill()
    job.wait()
    check_nothing_left(jobid, pids.values())


def proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(") ", 1)[1].split()[0]
    except OSError:
        return "gone"


def wait_state(pids, want, timeout=5.0):
    """Waits until every pid is in state want (True) or none is (False)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        states = [proc_state(p) for p in pids]
        if all((st == "T") == want for st in states):
            return True
        time.sleep(0.05)
    return False


def case_signals():
    """SIGUSR1/SIGUSR2 (what batch systems send before the time limit) are
    forwarded to every rank; locusrun neither dies of them nor ends the job."""
    job = Job(["-n", "3", "--oversubscribe", PMI_RANK, "signals"])
    job.starts(3)
    job.expect(r"^ready \d", 3)
    for sig, u1, u2 in ((signal.SIGUSR1, 1, 0), (signal.SIGUSR2, 1, 1), (signal.SIGUSR1, 2, 1)):
        job.p.send_signal(sig)
        job.expect(r"^signals rank=\d usr1=%d usr2=%d$" % (u1, u2), 3)
        # (after the last one the ranks are done and the job ends)
        check(u1 + u2 == 3 or job.p.poll() is None,
              "locusrun ended on %s" % signal.Signals(sig).name)
    rc, _, err = job.wait()
    check(rc == 0, "exit status %s after forwarded signals, want 0; %s" % (rc, err))


def case_tstp():
    """Ctrl-Z (SIGTSTP): the ranks stop and so does locusrun (so the shell
    gets the terminal back); SIGCONT resumes both."""
    job = Job(["-n", "2", "--oversubscribe", PMI_RANK, "hang"])
    pids, jobid = job.starts(2)
    job.p.send_signal(signal.SIGTSTP)
    check(wait_state(list(pids.values()), True), "ranks not stopped after SIGTSTP: %s"
          % [proc_state(p) for p in pids.values()])
    check(wait_state([job.p.pid], True), "locusrun not stopped after SIGTSTP: %s"
          % proc_state(job.p.pid))
    proxy = [p for p in job_processes(jobid) if p not in pids.values()]
    check(len(proxy) == 1 and proc_state(proxy[0]) != "T", "the proxy must keep running")
    job.p.send_signal(signal.SIGCONT)
    check(wait_state(list(pids.values()) + [job.p.pid], False),
          "not resumed after SIGCONT: locusrun %s ranks %s"
          % (proc_state(job.p.pid), [proc_state(p) for p in pids.values()]))
    # A stopped job still ends cleanly: stop it again, then SIGTERM.
    job.p.send_signal(signal.SIGTSTP)
    check(wait_state(list(pids.values()), True), "ranks not stopped the second time")
    job.p.send_signal(signal.SIGCONT)
    wait_state([job.p.pid], False)
    job.p.send_signal(signal.SIGTERM)
    rc, _, err = job.wait()
    check(rc == 143, "exit status %s, want 143; %s" % (rc, err))
    check_nothing_left(jobid, pids.values())


def case_kvsflood():
    """A hostile PMI client putting keys without end fails the job, named."""
    for env, what in (({"LOCUS_PMI_KVS_BYTES_MAX": "1M"}, "bytes"),
                      ({"LOCUS_PMI_KVS_KEYS_MAX": "500"}, "keys")):
        job = Job(["-n", "3", "--oversubscribe", PMI_RANK, "floodkvs", "1"], env=env)
        pids, jobid = job.starts(3)
        rc, elapsed, err = job.wait(timeout=60)
        print("%s flood: rc=%s in %.2f s; %s" % (what, rc, elapsed, err.strip()))
        check(rc == 1, "%s flood: exit status %s, want 1" % (what, rc))
        check(re.search(r"rank 1 \(pid %d\) on \S+ put more than" % pids[1], err),
              "%s flood: no message naming rank 1: %r" % (what, err))
        check_nothing_left(jobid, pids.values())


def case_barrierflood():
    """A client entering barrier after barrier fails the job instead of
    filling the proxy's barrier table for everyone."""
    job = Job(["-n", "3", "--oversubscribe", PMI_RANK, "floodbar", "2"])
    pids, jobid = job.starts(3)
    rc, elapsed, err = job.wait(timeout=30)
    check(rc == 1, "exit status %s, want 1; %s" % (rc, err))
    check(re.search(r"rank 2 \(pid %d\) on \S+ entered more than 8 PMI barriers" % pids[2],
                    err), "no message naming rank 2: %r" % err)
    check_nothing_left(jobid, pids.values())


def case_wedged():
    """--timeout ends the job even when the proxy does not answer (stopped):
    locusrun kills it and cleans up within the grace and a second."""
    job = Job(["-n", "2", "--oversubscribe", "--timeout", "2", PMI_RANK, "hangign"])
    pids, jobid = job.starts(2)
    proxy = [p for p in job_processes(jobid) if p not in pids.values()]
    check(len(proxy) == 1, "want one proxy, got %s" % proxy)
    os.kill(proxy[0], signal.SIGSTOP)
    rc, elapsed, err = job.wait(timeout=30)
    print("wedged proxy: job ended after %.2f s (timeout 2 s); stderr:\n%s" % (elapsed, err))
    check(rc == 124, "exit status %s, want 124" % rc)
    check(elapsed < 2 + 2.0 + 1.0, "took %.2f s after a 2 s timeout" % elapsed)
    check("did not end" in err, "no message about the wedged proxy: %r" % err)
    check_nothing_left(jobid, list(pids.values()) + proxy)


def case_hosts_badinput():
    with tempfile.TemporaryDirectory() as d:
        marker = os.path.join(d, "started")
        touch = ["/usr/bin/touch", marker]

        def hostfile(text):
            path = os.path.join(d, "hosts%d" % len(os.listdir(d)))
            with open(path, "w") as f:
                f.write(text)
            return path
        cases = [
            (["--host", ""] + touch, "empty host list"),
            (["--host", "a,,b"] + touch, "empty host name"),
            (["-H", "a:0"] + touch, "'a:0': slot count '0' is not a positive integer"),
            (["--host", "a:x"] + touch, "slot count 'x'"),
            (["--host", "-oProxyCommand=x"] + touch, "not a host name"),
            (["--host", "a b"] + touch, "not a host name"),
            (["--host", "a:2:3"] + touch, "slot count"),
            (["--hostfile", "/no/such/hostfile"] + touch, "/no/such/hostfile: No such file"),
            (["--hostfile", d] + touch, d),
            (["--hostfile", hostfile("a slots=2\nb slots=0\n")] + touch, ":2: 'slots=0'"),
            (["--hostfile", hostfile("a slots=2 frob=1\n")] + touch, ":1: 'frob=1': unknown"),
            (["--hostfile", hostfile("a:2 slots=3\n")] + touch, "given twice"),
            (["--hostfile", hostfile("# only a comment\n\n")] + touch, "no hosts"),
            (["-n", "5", "--host", "a:2,b:2"] + touch, "5 ranks but only 4 slots on 2 hosts"),
            (["-n", "3", "--host", "a,b"] + touch, "3 ranks but only 2 slots"),
            (["--ppn", "0", "--host", "a"] + touch, "--ppn: '0' is not a positive integer"),
            (["-n", "5", "--host", "a:9,b:9", "--ppn", "2"] + touch, "--ppn 2 on 2 hosts allows only 4"),
            (["-n", "3", "-N", "2"] + touch, "--ppn 2 on 1 host allows only 2"),
            (["--launcher", "rocket", "--host", "a"] + touch, "'rocket' is not a launcher"),
            (["--launcher", "exec", "--host", "a"] + touch, "needs --launcher-exec"),
            (["--launcher", "local", "--launcher-exec", "x"] + touch, "only with --launcher ssh or exec"),
            (["--host"], "--host: needs a value"),
        ]
        for args, words in cases:
            rc, out, err = run(args)
            lines = err.splitlines()
            check(rc == 2, "%s: exit %d, want 2" % (args, rc))
            check(len(lines) == 1 and lines[0].startswith("locusrun: ") and words in lines[0],
                  "%s: stderr %r, want one line with %r" % (args, err, words))
            check(not os.path.exists(marker), "%s: the program was started" % args)


def node_lines(out):
    got = {}
    for line in out.splitlines():
        if line.startswith("nodes "):
            kv = dict(w.split("=", 1) for w in line.split()[1:])
            got[int(kv["rank"])] = kv
    return got


# An srun stand-in: records its arguments, then runs the command here once
# per node of --nodelist (SLURMD_NODENAME set as slurmd sets it), at once
# for the one-srun form (--nodelist=a,b,...), exec'd for srun per node
# (--nodelist HOST, whose stdio is the proxy's control stream).
FAKE_SRUN = """#!/bin/sh
echo "$*" >> %s
while [ $# -gt 0 ]; do
    case "$1" in
        --nodelist) nodes="$2"; shift 2; break ;;
        --nodelist=*) nodes="${1#--nodelist=}"; shift; break ;;
        *) shift ;;
    esac
done
case "$nodes" in
    *,*) ;;
    *) SLURMD_NODENAME="$nodes" exec "$@" ;;
esac
pids=
for n in $(echo "$nodes" | tr , ' '); do
    SLURMD_NODENAME="$n" "$@" < /dev/null &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait "$p" || rc=$?; done
exit $rc
"""


def case_slurm_env():
    """Inside a Slurm allocation locusrun takes SLURM_JOB_NODELIST (hostlist
    syntax) and SLURM_TASKS_PER_NODE as its hosts and starts the proxies of
    all its nodes with one srun, each dialling back with the launch token
    (here a stand-in on PATH that records its arguments and runs the
    command locally per node), or one srun per node with
    LOCUS_SLURM_ONE_SRUN=0; bad values give one line naming the variable;
    LOCUS_SLURM=0 or --host ignores the allocation; a connection to the
    front end with a wrong token is dropped and the job goes on."""
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "srun.log")
        srun = os.path.join(d, "srun")
        with open(srun, "w") as f:
            f.write(FAKE_SRUN % log)
        os.chmod(srun, 0o755)
        env = {"SLURM_JOB_NODELIST": "h[0-1],g[08-09]", "SLURM_TASKS_PER_NODE": "2(x2),1(x2)",
               "SLURM_JOB_ID": "42", "PATH": d + ":" + os.environ["PATH"],
               "LOCUS_LAUNCH_AUTOFORK": "0"}
        rc, out, err = run([PMI_RANK, "ok", "nodes"], env=env)
        check(rc == 0, "in an allocation: exit %d: %s" % (rc, err))
        got = node_lines(out)
        want = [0, 0, 1, 1, 2, 3]
        check(sorted(got) == list(range(6)) and
              all(got[r]["node"] == str(n) for r, n in enumerate(want)) and
              got[0]["mapping"] == "(vector,(0,2,2),(2,2,1))",
              "nodes from SLURM_JOB_NODELIST: %s" % got)
        calls = open(log).read().splitlines() if os.path.exists(log) else []
        check(len(calls) == 1 and calls[0].startswith(
            "--nodes=4 --ntasks=4 --ntasks-per-node=1 --overlap --mpi=none --unbuffered") and
              "--nodelist=h0,h1,g08,g09 " in calls[0] and calls[0].endswith(" --proxy-connect"),
              "one srun for the 4 nodes: %s" % calls)
        # One srun per node, the proxy's control stream on its stdio.
        os.unlink(log)
        rc, out, err = run([PMI_RANK, "ok", "nodes"], env=dict(env, LOCUS_SLURM_ONE_SRUN="0"))
        check(rc == 0 and len(node_lines(out)) == 6, "LOCUS_SLURM_ONE_SRUN=0: exit %d: %s"
              % (rc, err))
        calls = open(log).read().splitlines() if os.path.exists(log) else []
        hosts = sorted(c.split("--nodelist ")[1].split()[0] for c in calls if "--nodelist " in c)
        check(hosts == ["g08", "g09", "h0", "h1"] and
              all(c.startswith("--nodes=1 --ntasks=1 --overlap --mpi=none --unbuffered")
                  for c in calls), "srun calls: %s" % calls)
        # A stranger dialling the front end's port with a wrong token while
        # the proxies start: dropped; the job completes.
        os.rename(srun, srun + ".real")
        with open(srun, "w") as f:
            f.write("#!/bin/sh\nfor a; do case \"$a\" in --proxy-connect) "
                    "echo \"$LOCUS_FRONTEND\" > %s/frontend;; esac; done\n"
                    "sleep 1\nexec %s.real \"$@\"\n" % (d, srun))
        os.chmod(srun, 0o755)
        job = subprocess.Popen([LOCUSRUN, PMI_RANK, "ok", "nodes"], env=dict(os.environ, **env),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True)
        front = os.path.join(d, "frontend")
        end = time.monotonic() + 10
        while not os.path.exists(front) and time.monotonic() < end:
            time.sleep(0.05)
        refused = False
        if check(os.path.exists(front), "the srun stand-in never saw LOCUS_FRONTEND"):
            ip, port = open(front).read().strip().split(",")[0].rsplit(":", 1)
            with socket.create_connection((ip, int(port)), timeout=5) as s:
                s.sendall(b"locus-proxy 00000000000000000000000000000000 h0\n")
                s.settimeout(5)
                try:
                    refused = s.recv(1) == b""
                except OSError:
                    refused = True
        out, err = job.communicate(timeout=60)
        check(refused, "a connection with a wrong token was not dropped")
        check(job.returncode == 0 and len(node_lines(out)) == 6,
              "job beside the stranger: exit %d: %s" % (job.returncode, err))
        os.rename(srun + ".real", srun)
        # kill -9 of one node's proxy while the one srun runs on with the
        # others: the job ends with a message, nothing of it is left.
        job = Job([PMI_RANK, "hang"], env=env)
        pids, jobid = job.starts(6)
        proxy = [p for p in job_processes(jobid) if p not in pids.values() and
                 b"SLURMD_NODENAME=g08\0" in open("/proc/%d/environ" % p, "rb").read() and
                 b"--proxy-connect" in open("/proc/%d/cmdline" % p, "rb").read()]
        if check(len(proxy) == 1, "g08's proxy not found: %s" % proxy):
            t0 = time.monotonic()
            os.kill(proxy[0], signal.SIGKILL)
            rc, _, err = job.wait()
            check(rc not in (0, None) and "g08" in err and time.monotonic() - t0 < 15,
                  "after g08's proxy died: exit %s in %.1f s: %r"
                  % (rc, time.monotonic() - t0, err[-600:]))
        else:
            job.p.kill()
            job.wait()
        check_nothing_left(jobid, pids.values())
        for var, val in (("SLURM_JOB_NODELIST", "h[0-"), ("SLURM_TASKS_PER_NODE", "2(x9)")):
            rc, out, err = run([PMI_RANK, "ok"], env=dict(env, **{var: val}))
            check(rc == 2 and err.startswith("locusrun: %s=%s" % (var, val)) and
                  err.count("\n") == 1, "bad %s: exit %d: %r" % (var, rc, err))
        rc, out, err = run(["-n", "2", PMI_RANK, "ok", "nodes"], env=dict(env, LOCUS_SLURM="0"))
        check(rc == 0 and len(node_lines(out)) == 2 and
              all(kv["nnodes"] == "1" for kv in node_lines(out).values()),
              "LOCUS_SLURM=0: exit %d %s %s" % (rc, out, err))


def case_hosts_layout():
    """Ranks over nodes (by slot, by node, --ppn, hostfile forms,
    oversubscription): every rank's node id, local rank and the job's
    PMI_process_mapping, exchanged through fences across nodes (here every
    node is this machine, reached through the exec launcher)."""
    with tempfile.TemporaryDirectory() as d:
        hf = os.path.join(d, "hosts")
        with open(hf, "w") as f:
            f.write("# Open MPI and Hydra forms\nh0 slots=2\n\nh1:1   # one slot\nh2\n")
        layouts = [
            (["--host", "h0:2,h1:2", "-n", "4"], [0, 0, 1, 1], "(vector,(0,2,2))"),
            (["--map-by", "node", "--host", "h0:2,h1:2"], [0, 1, 0, 1], "(vector,(0,2,1))"),
            (["--host", "h0:3,h1:1"], [0, 0, 0, 1], "(vector,(0,1,3),(1,1,1))"),
            (["--ppn", "1", "--host", "h0:4,h1:4,h2:4"], [0, 1, 2], "(vector,(0,3,1))"),
            (["--hostfile", hf], [0, 0, 1, 2], "(vector,(0,1,2),(1,2,1))"),
            (["-n", "6", "--host", "h0,h1", "--oversubscribe"], [0, 0, 0, 1, 1, 1],
             "(vector,(0,2,3))"),
            (["-n", "2", "--host", "h0:4,h1:4"], [0, 0], "(vector,(0,1,2))"),
        ]
        for args, nodes, mapping in layouts:
            rc, out, err = run(EXEC + ["--oversubscribe"] + args + [PMI_RANK, "ok", "nodes"])
            check(rc == 0, "%s: exit %d: %s" % (args, rc, err))
            got = node_lines(out)
            check(sorted(got) == list(range(len(nodes))), "%s: ranks %s" % (args, sorted(got)))
            nn = len(set(nodes))
            for r, kv in got.items():
                local = nodes[:r].count(nodes[r])
                want = {"node": str(nodes[r]), "local": str(local),
                        "nlocal": str(nodes.count(nodes[r])), "nnodes": str(nn),
                        "mapping": mapping}
                for k, v in want.items():
                    check(kv.get(k) == v, "%s: rank %d %s=%s, want %s" % (args, r, k, kv.get(k), v))
                # What every rank learned about every other through the fences.
                peers = [p.split("/")[0] for p in kv["all"].split(",")]
                check(peers == [str(n) for n in nodes], "%s: rank %d saw nodes %s" % (args, r, peers))
        # Report lines come from each node's proxy, named by the host.
        rc, out, err = run(EXEC + ["--host", "h0:2,h1:1", "--report-bindings", PMI_RANK, "ok"])
        for r, h in ((0, "h0"), (1, "h0"), (2, "h1")):
            check(re.search(r"^\[%s\] rank %d (bound|not bound)" % (h, r), err, re.M),
                  "--report-bindings: no line for rank %d on %s: %r" % (r, h, err))
        # --dry-run with hosts: one table per node, the job's rank numbers.
        rc, out, err = run(["--dry-run", "--host", "h0:2,h1:1", "--oversubscribe"])
        check(rc == 0 and "# node 0: h0, 2 ranks" in out and "# node 1: h1, 1 rank " in out,
              "--dry-run with hosts: %d %r %r" % (rc, out, err))
        rows = [l.split()[0] for l in out.splitlines() if re.match(r"\d+\s", l)]
        check(rows == ["0", "1", "2"], "--dry-run ranks: %s" % rows)
        # The exec launcher really ran each node through the prefix, with its name.
        rc, out, err = run(EXEC + ["--host", "h0:1,h1:1", PMI_RANK, "env"])
        envs = env_lines(out)
        check([envs.get(r, {}).get("FAKE_RSH_HOST") for r in (0, 1)] == ["h0", "h1"],
              "exec launcher host names: %s" % envs)
        # localhost with the default (ssh) launcher is a local fork: no ssh.
        rc, out, err = run(["--host", "localhost:2", PMI_RANK, "ok", "nodes"],
                           env={"LOCUS_SSH": "/bin/false"})
        check(rc == 0 and len(node_lines(out)) == 2, "localhost:2: %d %s" % (rc, err))


def case_hosts_nodes():
    """Node identity reaches the MPI library: its boot layer maps ranks to
    the launcher's nodes, and the shared-memory transport built from that
    map reaches exactly the ranks of the same node, even when two "nodes"
    share a kernel and a host name. The shared segments' names are
    node-scoped keys: each proxy keeps its ranks' (the start-up report
    counts them), and none reaches the front end."""
    if not BOOT_NODES:
        print("SKIPPED: boot_nodes not built")
        sys.exit(77)
    for args, nodes in ((["--host", "h0:2,h1:2"], [0, 0, 1, 1]),
                        (["--map-by", "node", "--host", "h0:2,h1:2,h2:1"], [0, 1, 2, 0, 1]),
                        (["-n", "3"], [0, 0, 0])):
        extra = EXEC if "--host" in args else []
        rc, out, err = run(extra + ["--oversubscribe", "--startup-report"] + args +
                           [BOOT_NODES], timeout=60)
        check(rc == 0, "%s: exit %d: %s %s" % (args, rc, out, err))
        kept = [int(n) for n in re.findall(r"^locusrun: proxy on \S+ served \d+ ranks: .*, (\d+) "
                                            r"node-scoped keys kept on the node,", err, re.M)]
        fe = re.findall(r"^locusrun: front end took (\d+) key-value pairs .* (\d+) node-scoped;",
                        err, re.M)
        want = sorted(c if c > 1 else 0 for c in (nodes.count(n) for n in set(nodes)))
        check(sorted(kept) == want,
              "%s: node-scoped keys kept per proxy %s (want one per rank of a node with "
              "several)\n%s" % (args, kept, err))
        check(len(fe) == 1 and fe[0][1] == "0",
              "%s: the front end's count of node-scoped keys: %s\n%s" % (args, fe, err))
        seen = set()
        for line in out.splitlines():
            if not line.startswith("boot "):
                continue
            kv = dict(w.split("=", 1) for w in line.split()[1:])
            r = int(kv["rank"])
            seen.add(r)
            same = [p for p in range(len(nodes)) if nodes[p] == nodes[r]]
            want = {"node": str(nodes[r]), "nnodes": str(len(set(nodes))), "from": "1",
                    "locals": ",".join(map(str, same)),
                    "shm": ",".join(str(p) for p in same if p != r) or "-"}
            for k, v in want.items():
                check(kv.get(k) == v, "%s: rank %d %s=%s, want %s" % (args, r, k, kv.get(k), v))
        check(seen == set(range(len(nodes))), "%s: ranks reported %s; %s" % (args, seen, err))


def case_hosts_fail():
    """Failures on other nodes end the whole job, named by host and rank."""
    # A node that cannot be reached: the others are torn down.
    t0 = time.monotonic()
    rc, out, err = run(EXEC + ["--host", "h0:2,bad-host:2", PMI_RANK, "hang"])
    took = time.monotonic() - t0
    print("unknown host: rc=%d in %.2f s; %s" % (rc, took, err.strip()))
    check(rc == 1, "unknown host: exit %d" % rc)
    check("cannot start the proxy on bad-host: the exec launcher exited with status 255" in err,
          "unknown host: message %r" % err)
    check(took < 5, "unknown host: took %.2f s" % took)
    for j in set(re.findall(r"^start \d+ \d+ (\S+)$", out, re.M)):
        check_nothing_left(j)
    # kill -9 of a rank on the second node.
    job = Job(EXEC + ["--host", "h0:2,h1:2", PMI_RANK, "hang"])
    pids, jobid = job.starts(4)
    t0 = time.monotonic()
    os.kill(pids[3], signal.SIGKILL)
    rc, _, err = job.wait()
    took = time.monotonic() - t0
    print("kill -9 of rank 3 on h1: ended in %.3f s" % took)
    check(rc == 137 and "rank 3 (pid %d) on h1 killed by signal 9" % pids[3] in err,
          "kill -9 on h1: rc %s, %r" % (rc, err))
    check(took < 2.0, "took %.2f s" % took)
    check_nothing_left(jobid, pids.values())
    # kill -9 of the second node's proxy.
    job = Job(EXEC + ["--host", "h0:2,h1:2", PMI_RANK, "hang"])
    pids, jobid = job.starts(4)
    procs = job_processes(jobid)
    proxies = [p for p in procs if p not in pids.values()
               and b"FAKE_RSH_HOST=h1" in open("/proc/%d/environ" % p, "rb").read()]
    check(len(proxies) == 1, "want h1's proxy, got %s" % proxies)
    t0 = time.monotonic()
    os.kill(proxies[0], signal.SIGKILL)
    rc, _, err = job.wait()
    took = time.monotonic() - t0
    print("kill -9 of h1's proxy: ended in %.3f s" % took)
    check(rc == 1 and "proxy on h1 (pid %d) ended before the job did" % proxies[0] in err,
          "proxy kill: rc %s, %r" % (rc, err))
    check(took < 2.0, "took %.2f s" % took)
    check_nothing_left(jobid, pids.values())
    # The proxy binary on the other nodes: LOCUS_PROXY_PATH.
    with tempfile.TemporaryDirectory() as d:
        link = os.path.join(d, "locusrun-elsewhere")
        os.symlink(LOCUSRUN, link)
        rc, out, err = run(EXEC + ["--host", "h0:1,h1:1", PMI_RANK, "ok"],
                           env={"LOCUS_PROXY_PATH": link})
        check(rc == 0, "LOCUS_PROXY_PATH=%s: exit %d %s" % (link, rc, err))
        rc, out, err = run(EXEC + ["--host", "h0:1,h1:1", PMI_RANK, "ok"],
                           env={"LOCUS_PROXY_PATH": "/no/such/locusrun"})
        check(rc == 1 and re.search(r"cannot start the proxy on h[01]: the exec launcher exited "
                                    r"with status 127 before it answered", err),
              "missing proxy: %d %r" % (rc, err))
        # Proxies that break the protocol are refused, the job ends.
        for name, script, words in (
                ("oldproxy", 'echo "hello 1 fake $$"; sleep 30', "speaks control protocol 1"),
                ("liar", 'echo "hello 2 fake $$"; echo "io 99 1 x"; sleep 30',
                 "sent an unknown or malformed message 'io'"),
                ("garbage", 'echo "hello 2 fake $$"; echo "fence %ZZ"; sleep 30',
                 "sent a malformed control line"),
                ("silent", "sleep 30", "no answer from the proxy on h0 within 1 s")):
            fake = os.path.join(d, name)
            with open(fake, "w") as f:
                f.write("#!/bin/sh\n" + script + "\n")
            os.chmod(fake, 0o755)
            t0 = time.monotonic()
            rc, out, err = run(EXEC + ["--host", "h0:1", PMI_RANK, "ok"],
                               env={"LOCUS_PROXY_PATH": fake, "LOCUS_LAUNCH_TIMEOUT": "1"})
            took = time.monotonic() - t0
            check(rc == 1 and words in err and took < 5,
                  "%s proxy: exit %d after %.1f s, %r" % (name, rc, took, err))

        # A host named like this machine is forked, whatever the launcher
        # (Hydra's autofork): a prefix that cannot start anything is not
        # used for it, unless LOCUS_LAUNCH_AUTOFORK=0.
        rc, out, err = run(["--launcher", "exec", "--launcher-exec", "/bin/false", "--host",
                            HOST + ":1", PMI_RANK, "ok"])
        check(rc == 0, "autofork of %s with the exec launcher: exit %d %r" % (HOST, rc, err))
        rc, out, err = run(["--launcher", "exec", "--launcher-exec", "/bin/false", "--host",
                            HOST + ":1", PMI_RANK, "ok"], env={"LOCUS_LAUNCH_AUTOFORK": "0"})
        check(rc == 1 and "cannot start the proxy on %s" % HOST in err,
              "LOCUS_LAUNCH_AUTOFORK=0: exit %d %r" % (rc, err))
        rc, out, err = run(["--host", HOST + ":1", PMI_RANK, "ok"],
                           env={"LOCUS_LAUNCH_AUTOFORK": "maybe"})
        check(rc == 2 and "LOCUS_LAUNCH_AUTOFORK" in err, "bad autofork: %d %r" % (rc, err))
        for bad in ("1", "-2", "tree", "8x"):
            rc, out, err = run(["--host", HOST + ":1", PMI_RANK, "ok"],
                               env={"LOCUS_LAUNCH_FANOUT": bad})
            check(rc == 2 and err.startswith("locusrun: LOCUS_LAUNCH_FANOUT: '%s'" % bad) and
                  err.count("\n") == 1, "LOCUS_LAUNCH_FANOUT=%s: exit %d %r" % (bad, rc, err))


def main():
    fn = globals().get("case_" + CASE)
    if fn is None:
        raise SystemExit("unknown case " + CASE)
    fn()
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        sys.exit(1)
    print("launch %s: OK" % CASE)


if __name__ == "__main__":
    main()
