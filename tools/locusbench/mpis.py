"""The MPIs a comparison can use: how to find, build with and launch each.

An MPI is a compiler wrapper plus a launcher. A *config* is an MPI with one
variant: "shipped" (as installed) or "tuned" (what a user who read the docs
would set). Placement is the same for all: one rank per core, bound
(Open MPI --bind-to core, MPICH -bind-to core, Locus's default).
"""
import os
import shutil
import subprocess

# Programs of the suite: executable -> (sources, needs OpenMP).
PROGRAMS = {
    "pingpong": (["pingpong.c", "bench_util.c", "bench_fit.c"], False),
    "imb": (["imb.c", "imb_kernels.c", "bench_util.c"], False),
    "osu_latency": (["osu_latency.c", "osu_common.c", "bench_util.c"], False),
    "osu_bw": (["osu_bw.c", "osu_common.c", "bench_util.c"], False),
    "osu_bibw": (["osu_bibw.c", "osu_common.c", "bench_util.c"], False),
    "osu_mbw_mr": (["osu_mbw_mr.c", "osu_common.c", "bench_util.c"], False),
    "stream": (["stream.c", "bench_util.c"], True),
    "startup": (["startup.c"], False),
    "congestion": (["congestion.c"], False),
    "io_bench": (["io_bench.c", "osu_common.c", "bench_util.c"], False),
    "mt_rate": (["mt_rate.c", "osu_common.c", "bench_util.c"], False),
}

# Peer variants. "tuned" is what the MPI's own documentation suggests for
# intra-node runs on a machine like this one:
# - Open MPI 4.1: vader's single-copy (CMA) path off; copy-in/copy-out through
#   the shared FIFO is faster on many VMs/containers where CMA is slow or
#   denied (and it silences the ptrace warning).
# - MPICH 4.0 (Debian: ch4:ucx, no XPMEM, no CMA in the POSIX shm module):
#   MPIR_CVAR_NOLOCAL=1 sends intra-node traffic through UCX, whose sm
#   transports include CMA single-copy for large messages.
VARIANTS = {
    "locus": {"shipped": {"args": [], "env": {}}},
    "openmpi": {
        "shipped": {"args": [], "env": {}},
        "tuned": {"args": ["--mca", "btl_vader_single_copy_mechanism", "none"], "env": {}},
    },
    "mpich": {
        "shipped": {"args": [], "env": {}},
        "tuned": {"args": [], "env": {"MPIR_CVAR_NOLOCAL": "1"}},
    },
    # PyPI's MPICH 5 wheel (ch4 with both the ucx and ofi netmods, its own
    # libfabric), installed by scripts/bootstrap into LOCUS_BENCH_MPICH5.
    "mpich5": {"shipped": {"args": [], "env": {}}},
}

KNOWN = ("locus", "openmpi", "mpich", "mpich5")

# Hydra's command line and rank placement, for both MPICHs.
HYDRA = ("mpich", "mpich5")


class Mpi:
    """One MPI installation: name, wrapper, launcher, how to place ranks."""

    def __init__(self, name, mpicc, launcher, version=""):
        self.name = name
        self.mpicc = mpicc
        self.launcher = launcher
        self.version = version

    def launch_cmd(self, np, exe, args, extra=(), cores=None):
        """The command line that runs `exe args` on np ranks, one per core,
        bound; allows oversubscription when np exceeds the cores."""
        cores = cores or os.cpu_count() or 1
        over = np > cores
        if self.name == "openmpi":
            cmd = [self.launcher]
            if os.geteuid() == 0:
                cmd.append("--allow-run-as-root")
            cmd += ["-n", str(np), "--map-by", "core"]
            if over:
                cmd += ["--oversubscribe", "--bind-to", "core:overload-allowed"]
            else:
                cmd += ["--bind-to", "core"]
        elif self.name in HYDRA:
            cmd = [self.launcher, "-n", str(np), "-bind-to", "core"]
        else:
            # Oversubscribed, Locus leaves ranks unbound unless told, as
            # Open MPI does; the peers here are bound round-robin over the
            # cores, so Locus is too.
            cmd = [self.launcher, "-n", str(np)]
            if over:
                cmd.append("--oversubscribe")
                if "--bind-to" not in extra:
                    cmd += ["--bind-to", "core"]
        return cmd + list(extra) + [exe] + list(args)

    def local_env(self):
        """What a run on this one machine adds to the environment.

        Both MPICHs here are ch4:ucx, and UCX opens an interface on every
        network device at MPI_Init. A device that goes between UCX listing
        it and opening it (a virtual cluster's head link taken down beside
        the run) fails MPI_Init with "init_worker No such device". Ranks on
        one node talk through shared memory either way, so UCX is kept to
        it; a UCX_TLS the user set wins."""
        if self.name in HYDRA and "UCX_TLS" not in os.environ:
            return {"UCX_TLS": "self,sm"}
        return {}

    def describe(self):
        return {"name": self.name, "mpicc": self.mpicc, "launcher": self.launcher,
                "version": self.version}


def _first_line(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else ""


def _locus_bindir(hint):
    """Where Locus's locusrun and mpicc are: the hint, the install prefix
    this script sits in, then PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = []
    if hint:
        candidates.append(hint)
    # <prefix>/share/locus/tools/locusbench -> <prefix>/bin
    candidates.append(os.path.normpath(os.path.join(here, "..", "..", "..", "..", "bin")))
    on_path = shutil.which("locusrun")
    if on_path:
        candidates.append(os.path.dirname(os.path.realpath(on_path)))
    for d in candidates:
        if os.access(os.path.join(d, "locusrun"), os.X_OK) and \
                os.access(os.path.join(d, "mpicc"), os.X_OK):
            return d
    return None


def find(name, locus_bin=None):
    """The Mpi called `name`, or None when it is not installed here."""
    if name == "locus":
        d = _locus_bindir(locus_bin)
        if not d:
            return None
        return Mpi("locus", os.path.join(d, "mpicc"), os.path.join(d, "locusrun"),
                   _first_line([os.path.join(d, "locusrun"), "--version"]))
    if name == "openmpi":
        cc, run = shutil.which("mpicc.openmpi"), shutil.which("mpirun.openmpi")
        if not (cc and run):
            return None
        return Mpi(name, cc, run, _first_line([run, "--version"]))
    if name == "mpich":
        cc, run = shutil.which("mpicc.mpich"), shutil.which("mpiexec.mpich")
        if not (cc and run):
            return None
        ver = _first_line(["mpichversion"]) if shutil.which("mpichversion") else ""
        return Mpi(name, cc, run, " ".join(ver.split()))
    if name == "mpich5":
        from . import tunables
        prefix = tunables.get("LOCUS_BENCH_MPICH5")
        cc, run = os.path.join(prefix, "bin", "mpicc"), os.path.join(prefix, "bin", "mpiexec")
        if not (os.access(cc, os.X_OK) and os.access(run, os.X_OK)):
            return None
        ver = _first_line([os.path.join(prefix, "bin", "mpichversion")])
        return Mpi(name, cc, run, "PyPI " + " ".join(ver.split()))
    raise ValueError("unknown MPI '%s' (known: %s)" % (name, ", ".join(KNOWN)))


def configs(mpis, variants):
    """[(config name, Mpi, variant dict)] for each MPI and each wanted variant
    it has; Locus only has "shipped" (its tuning is what `sweep` explores)."""
    out = []
    for m in mpis:
        for v in variants:
            spec = VARIANTS[m.name].get(v)
            if spec is None:
                continue
            label = m.name if v == "shipped" else "%s-%s" % (m.name, v)
            out.append((label, m, spec))
    return out


def build(mpi, srcdir, outdir, programs, log, jobs=None):
    """Compiles each program with the MPI's wrapper into outdir, `jobs`
    compilers at a time (default: the CPU count). Returns {program: exe};
    failures are written to log and left out."""
    os.makedirs(outdir, exist_ok=True)
    jobs = jobs or os.cpu_count() or 1
    pending = list(programs)
    running = []
    built = {}

    def reap(entry):
        prog, exe, proc = entry
        out, err = proc.communicate()
        if proc.returncode != 0 or not os.access(exe, os.X_OK):
            log("build of %s with %s failed: %s" % (prog, mpi.name, (err or out).strip()[-400:]))
        else:
            built[prog] = exe

    while pending or running:
        while pending and len(running) < jobs:
            prog = pending.pop(0)
            srcs, omp = PROGRAMS[prog]
            exe = os.path.join(outdir, prog)
            cmd = [mpi.mpicc, "-O2", "-std=gnu11", "-pthread"] + (["-fopenmp"] if omp else [])
            cmd += [os.path.join(srcdir, s) for s in srcs] + ["-o", exe, "-lm"]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
            running.append((prog, exe, proc))
        reap(running.pop(0))
    return built
