"""`locus bench perfboost`: the same binaries, built against Open MPI or
MPICH, on Locus through its legacy ABI layers (plain `locusrun`, no option)
and on their own MPI, in one run.

- NetPIPE: Debian's NPmpich2 under locusrun and under MPICH's mpiexec
  (Hydra), NPopenmpi under locusrun and under Open MPI's mpirun; 2 ranks,
  1 B to 1 MiB (-u 1048576, -n fixed repetitions per size). Latency is the
  smallest message's one-way time, taken from NetPIPE's Mbps column (its
  time column has 10 ns steps); bandwidth the 1 MiB row's Mbps.
- The layers' per-call cost: bench/osu_latency.c built with mpicc.mpich,
  mpicc.openmpi and Locus's own mpicc, all three under locusrun -n 2 (the
  first two through the layers); 8 B and 1 MiB one-way latency, layer over
  native (the target: within 5 %).
- Debian's LAMMPS (lmp, Open MPI's ABI): the melt example on a larger box,
  `Loop time` at 2 and 4 ranks, locusrun against Open MPI's mpirun (both
  --oversubscribe past the cores).

Every layered binary is probed once first (LOCUS_ABI_LIBMPI pointing
nowhere: the layer must say it cannot load Locus's library), and LAMMPS's
`info communication` must name Locus on Locus's side: a figure labelled
Locus is Locus's. Runs are interleaved (the order rotates each repeat) so
machine noise hits every side alike; each figure is the median of the
repeats, each ratio the ratio of the medians.
"""
import os
import re
import shutil
import signal
import time

from . import congestion, mpis, runner

RUN_TIMEOUT = 120
# Seconds a job may take after its whole result is out (MPICH 4.0's ch4:ucx
# now and then hangs in MPI_Finalize): then it is killed and its figures kept.
EXIT_GRACE = 5.0
PARTS = ("netpipe", "osu", "lammps")
NETPIPE_UPPER = 1048576
# osu_latency's -i sets the iterations of every size, so the two sizes run
# separately: many iterations where a call costs a microsecond.
OSU_ITERS = {"small": (100000, 1000), "large": (1000, 10)}
OSU_ITERS_QUICK = {"small": (10000, 100), "large": (100, 5)}
OSU_SIZES = {"small": 8, "large": 1048576}
LAYER_NAMES = {"mpich": "MPICH", "openmpi": "Open MPI"}
# LAMMPS's melt example (examples/melt/in.melt) with the box and the run
# length as parameters; thermo output only at the start and the end.
MELT = """# 3d Lennard-Jones melt (LAMMPS examples/melt), box {box}^3 lattice cells
units           lj
atom_style      atomic
lattice         fcc 0.8442
region          box block 0 {box} 0 {box} 0 {box}
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 3.0 87287 loop geom
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    every 20 delay 0 check no
fix             1 all nve
thermo          {steps}
run             {steps}
info            communication
"""
LOOP = re.compile(r"^Loop time of ([0-9.eE+-]+) on (\d+) procs", re.M)
MPI_VERSION = re.compile(r"^MPI version: (.*)$", re.M)
OSU_ROW = re.compile(r"^(\d+)\s+([0-9.]+)\s*$", re.M)
NP_LINE = re.compile(r"^\s*\d+:\s+(\d+) bytes", re.M)


def tools(locus):
    """{name: path or None} of every program the runs need."""
    t = {n: shutil.which(n) for n in ("NPmpich2", "NPopenmpi", "mpiexec.mpich", "mpirun.openmpi",
                                      "mpicc.mpich", "mpicc.openmpi", "lmp")}
    t["locusrun"] = locus.launcher if locus else None
    t["mpicc"] = locus.mpicc if locus else None
    return t


def _locus_cmd(t, np, argv):
    cmd = [t["locusrun"], "-n", str(np)]
    if np > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    return cmd + argv


def _ompi_cmd(t, np, argv, over=False):
    cmd = [t["mpirun.openmpi"]]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if over:
        cmd.append("--oversubscribe")
    return cmd + ["-np", str(np)] + argv


def parse_netpipe(path):
    """NetPIPE's -o file (bytes, Mbps, seconds per row) -> {latency_us,
    bw_1mib_mbps}."""
    rows = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 3:
                rows.append((int(w[0]), float(w[1]), float(w[2])))
    if not rows:
        raise ValueError("%s has no rows" % path)
    b, mbps, secs = min(rows)
    lat = 8.0 * b / mbps if mbps > 0 else secs * 1e6
    big = [r[1] for r in rows if r[0] == NETPIPE_UPPER]
    if not big:
        raise ValueError("%s has no %d B row" % (path, NETPIPE_UPPER))
    return {"latency_us": lat, "latency_bytes": b, "bw_1mib_mbps": big[0]}


def parse_osu(text, size):
    for b, v in OSU_ROW.findall(text):
        if int(b) == size:
            return {"latency_us": float(v)}
    raise ValueError("no %d B row in osu_latency's output" % size)


def parse_lammps(text, locus):
    m = LOOP.search(text)
    if not m:
        raise ValueError("no 'Loop time' line")
    v = MPI_VERSION.search(text)
    lib = v.group(1).strip() if v else ""
    if locus and "through its Open MPI ABI layer" not in lib:
        raise ValueError("not Locus through its Open MPI ABI layer: MPI version '%s'" % lib)
    if not locus and not lib.startswith("Open MPI"):
        raise ValueError("not Open MPI: MPI version '%s'" % lib)
    return {"loop_s": float(m.group(1)), "procs": int(m.group(2)), "library": lib}


class Job:
    """One command to run each repeat; parse(stdout, rawfile) -> figures."""

    def __init__(self, jid, side, cmd, parse, complete, env=None):
        self.id, self.side, self.cmd = jid, side, cmd
        self.parse, self.complete, self.env = parse, complete, env or {}


def _probe(t, exe, argv, layer, note, probes):
    """Whether exe under locusrun loads Locus's layer for `layer` (it names
    itself when Locus's library is missing); probes[exe] says which did."""
    env = dict(os.environ, LOCUS_ABI_LIBMPI="/nonexistent/liblocusmpi.so.0")
    rc, out, err, _, _ = runner.run_watched([t["locusrun"], "-n", "1", exe] + argv, env, 30)
    want = "locus (%s ABI): cannot load Locus's library" % LAYER_NAMES[layer]
    if want in out + err:
        probes[exe] = "Locus's %s-ABI layer" % LAYER_NAMES[layer]
        return True
    probes[exe] = "not Locus's layer"
    note("%s under locusrun did not load Locus's %s-ABI layer (%s); its rows are skipped"
         % (os.path.basename(exe), LAYER_NAMES[layer],
            ((err or out).strip().splitlines() or ["no output"])[-1][:200]))
    return False


def plan(args, t, exes, outdir, note, probes):
    """(jobs, rows): what to run and what to report. A row whose binaries
    are missing, or whose binary does not load Locus's layer under
    locusrun, is left out with a note."""
    jobs, rows = [], []
    raw = os.path.join(outdir, "raw")
    np_n = str(args.netpipe_n)
    if "netpipe" in args.parts:
        for layer, npexe, own in (("mpich", "NPmpich2", "mpiexec.mpich"),
                                  ("openmpi", "NPopenmpi", "mpirun.openmpi")):
            missing = [n for n in ("locusrun", npexe, own) if not t[n]]
            if missing:
                note("NetPIPE %s: skipped, no %s" % (LAYER_NAMES[layer], ", ".join(missing)))
                continue
            if not _probe(t, t[npexe], ["-u", "8"], layer, note, probes):
                continue
            ids = {}
            for side in ("locus", layer):
                jid = "netpipe_%s@%s" % (layer, side)
                res = os.path.join(raw, jid.replace("@", "--") + ".np")
                argv = [t[npexe], "-u", str(NETPIPE_UPPER), "-n", np_n, "-o", res]
                if side == "locus":
                    cmd = _locus_cmd(t, 2, argv)
                elif layer == "mpich":
                    cmd = [t[own], "-n", "2"] + argv
                else:
                    cmd = _ompi_cmd(t, 2, argv)
                last = NETPIPE_UPPER + 3   # NetPIPE's default perturbation: +-3 B

                def done(s, last=last):
                    return any(int(b) >= last for b in NP_LINE.findall(s))
                jobs.append(Job(jid, side, cmd, lambda out, rf, res=res: parse_netpipe(res),
                                done))
                ids[side] = jid
            name = "NetPIPE %s (%s)" % (npexe, LAYER_NAMES[layer])
            rows.append({"group": "netpipe", "bench": name, "figure": "latency, 1 B (us)",
                         "key": "latency_us", "better": "lower", "locus": ids["locus"],
                         "ref": ids[layer], "ref_name": layer})
            rows.append({"group": "netpipe", "bench": name, "figure": "bandwidth, 1 MiB (Mbps)",
                         "key": "bw_1mib_mbps", "better": "higher", "locus": ids["locus"],
                         "ref": ids[layer], "ref_name": layer})
    if "osu" in args.parts:
        iters = OSU_ITERS_QUICK if args.quick else OSU_ITERS
        if "locus" not in exes:
            note("osu_latency: skipped, no build with Locus's mpicc (its native reference)")
        else:
            for b in ("locus", "mpich", "openmpi"):
                if b not in exes:
                    continue
                if b != "locus" and not _probe(t, exes[b], ["-h"], b, note, probes):
                    exes.pop(b)
                    continue
                for sz in ("small", "large"):
                    n, skip = iters[sz]
                    argv = [exes[b], "-m", "%d:%d" % (OSU_SIZES[sz], OSU_SIZES[sz]),
                            "-i", str(n), "-x", str(skip)]
                    jobs.append(Job("osu_%s@%s" % (sz, b), b, _locus_cmd(t, 2, argv),
                                    lambda out, rf, s=OSU_SIZES[sz]: parse_osu(out, s),
                                    lambda s, z=OSU_SIZES[sz]: re.search(r"^%d\s" % z, s, re.M)))
            for layer in ("mpich", "openmpi"):
                if layer not in exes:
                    note("osu_latency through the %s-ABI layer: skipped (not built)"
                         % LAYER_NAMES[layer])
                    continue
                for sz, fig in (("small", "8 B latency (us)"), ("large", "1 MiB latency (us)")):
                    rows.append({"group": "osu", "bench": "osu_latency, %s-ABI layer vs Locus "
                                 "native" % LAYER_NAMES[layer], "figure": fig, "key": "latency_us",
                                 "better": "lower", "locus": "osu_%s@%s" % (sz, layer),
                                 "ref": "osu_%s@locus" % sz, "ref_name": "locus-native",
                                 "target": 1.05})
    if "lammps" in args.parts:
        missing = [n for n in ("locusrun", "lmp", "mpirun.openmpi") if not t[n]]
        if missing:
            note("LAMMPS: skipped, no %s" % ", ".join(missing))
        elif _probe(t, t["lmp"], ["-h"], "openmpi", note, probes):
            inp = os.path.join(outdir, "lammps_melt_box%d.in" % args.lammps_box)
            with open(inp, "w") as f:
                f.write(MELT.format(box=args.lammps_box, steps=args.lammps_steps))
            argv = [t["lmp"], "-in", inp, "-log", "none"]
            env = {"OMP_NUM_THREADS": "1"}
            for np in args.lammps_np:
                ids = {}
                for side in ("locus", "openmpi"):
                    jid = "lammps_np%d@%s" % (np, side)
                    cmd = (_locus_cmd(t, np, argv) if side == "locus"
                           else _ompi_cmd(t, np, argv, over=True))
                    jobs.append(Job(jid, side, cmd,
                                    lambda out, rf, loc=(side == "locus"): parse_lammps(out, loc),
                                    lambda s: "Total wall time" in s, env))
                    ids[side] = jid
                rows.append({"group": "lammps", "bench": "LAMMPS melt, %d^3 cells, %d steps, "
                             "%d ranks" % (args.lammps_box, args.lammps_steps, np),
                             "figure": "loop time (s)", "key": "loop_s", "better": "lower",
                             "locus": ids["locus"], "ref": ids["openmpi"],
                             "ref_name": "openmpi"})
    return jobs, rows


def build_osu(locus, srcdir, outdir, note):
    """osu_latency built with Locus's mpicc and with each legacy mpicc
    found: {"locus"|"mpich"|"openmpi": exe}."""
    exes = {}
    for name, cc in (("locus", locus.mpicc if locus else None),
                     ("mpich", shutil.which("mpicc.mpich")),
                     ("openmpi", shutil.which("mpicc.openmpi"))):
        if not cc:
            note("osu_latency: no %s compiler wrapper, not built with it"
                 % ("Locus's mpicc" if name == "locus" else "mpicc." + name))
            continue
        built = mpis.build(mpis.Mpi(name, cc, None), srcdir, os.path.join(outdir, "build", name),
                           ["osu_latency"], note)
        if "osu_latency" in built:
            exes[name] = built["osu_latency"]
    return exes


def measure(args, locus, srcdir):
    """The whole run: the results document (without meta), or ValueError
    when nothing can be measured here."""
    skipped = []

    def note(msg):
        skipped.append(msg)
        runner.log(msg)
    if locus is None:
        raise ValueError("perfboost: no Locus locusrun+mpicc (--locus-bin, "
                         "LOCUS_BENCH_LOCUS_BIN, the install prefix or PATH): nothing to measure")
    os.makedirs(args.out, exist_ok=True)
    t = tools(locus)
    exes = build_osu(locus, srcdir, args.out, note) if "osu" in args.parts else {}
    probes = {}
    jobs, rows = plan(args, t, exes, args.out, note, probes)
    if not rows:
        raise ValueError("perfboost: nothing to measure here (%s)" % "; ".join(skipped))
    results = run(args, jobs, args.out)
    return {"rows": rows, "results": results, "skipped": skipped, "tools": t,
            "osu_exes": exes, "probes": probes,
            "params": {"parts": list(args.parts), "netpipe_n": args.netpipe_n,
                       "netpipe_upper": NETPIPE_UPPER,
                       "osu_iters": OSU_ITERS_QUICK if args.quick else OSU_ITERS,
                       "lammps_box": args.lammps_box, "lammps_steps": args.lammps_steps,
                       "lammps_np": list(args.lammps_np), "timeout_s": args.timeout,
                       "exit_grace_s": EXIT_GRACE, "cores": os.cpu_count()}}


def _shm_locus():
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("locus")}
    except OSError:
        return set()


def _kill_our_jobs():
    """Kills the process group of every child of this process (a launcher
    run_watched started in its own session): what an interrupt leaves."""
    me = str(os.getpid())
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[3] == pid:   # ppid is us, it leads its group
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(int(pid), sig)
                except ProcessLookupError:
                    break
                time.sleep(1.0)


def run(args, jobs, outdir):
    """Runs every job args.repeats times, the order rotated each repeat;
    returns {job id: {"side", "cmd", "runs": [figures or {"failed"}]}}."""
    raw = os.path.join(outdir, "raw")
    os.makedirs(raw, exist_ok=True)
    results = {j.id: {"side": j.side, "cmd": j.cmd, "runs": []} for j in jobs}
    shm_start = _shm_locus()
    total, step = args.repeats * len(jobs), 0
    try:
        for rep in range(args.repeats):
            k = rep % len(jobs)
            for j in jobs[k:] + jobs[:k]:
                step += 1
                env = dict(os.environ, **j.env)
                shm_before = _shm_locus()
                rc, out, err, secs, hung = runner.run_watched(j.cmd, env, args.timeout,
                                                              j.complete, EXIT_GRACE)
                rawfile = os.path.join(raw, "%s--r%d.txt" % (j.id.replace("@", "--"), rep + 1))
                with open(rawfile, "w") as f:
                    f.write("$ %s\n%s" % (" ".join(j.cmd), out))
                    if err:
                        f.write("\n--- stderr ---\n%s" % err)
                if rc is None or hung:
                    congestion.clean_shm(shm_before)
                status = "ok"
                if rc is None:
                    status = "TIMEOUT after %.0f s" % secs
                elif rc != 0:
                    status = "FAILED rc=%d: %s" % (rc, ((err or out).strip().splitlines()
                                                        or ["no output"])[-1][:200])
                else:
                    try:
                        res = j.parse(out, rawfile)
                        res["wall_s"] = round(secs, 3)
                        if hung:
                            res["hung_at_exit"] = True
                            status = "ok, hung at exit: killed %.0f s after its output" % EXIT_GRACE
                        results[j.id]["runs"].append(res)
                    except (OSError, ValueError) as exc:
                        status = "UNPARSABLE: %s" % exc
                if not status.startswith("ok"):
                    results[j.id]["runs"].append({"failed": status})
                runner.log("[%d/%d] %-24s repeat %d/%d %5.1f s %s"
                           % (step, total, j.id, rep + 1, args.repeats, secs, status))
    except BaseException:
        _kill_our_jobs()
        time.sleep(0.5)
        congestion.clean_shm(shm_start)
        raise
    return results


def summarize(doc):
    """[row + {"locus_v", "ref_v", "ratio", "n_locus", "n_ref"}]: the
    medians over the runs that worked and their ratio (Locus over the
    reference)."""
    out = []
    for row in doc["rows"]:
        s = dict(row)
        for side in ("locus", "ref"):
            runs = [r[row["key"]] for r in doc["results"][row[side]]["runs"] if "failed" not in r]
            s[side + "_v"] = runner.median(runs)
            s["n_" + side] = "%d/%d" % (len(runs), len(doc["results"][row[side]]["runs"]))
        s["ratio"] = (s["locus_v"] / s["ref_v"] if s["locus_v"] and s["ref_v"] else None)
        out.append(s)
    return out


def _fig(v):
    if v is None:
        return "—"
    return "%.0f" % v if v >= 1000 else "%.1f" % v if v >= 10 else "%.3g" % v


def _ratio(s):
    if s["ratio"] is None:
        return "—"
    text = "%.3f" % s["ratio"]
    if s.get("target"):
        text += " (%s)" % ("within %.0f %%" % ((s["target"] - 1) * 100)
                           if s["ratio"] <= s["target"] else "over the %.0f %% target"
                           % ((s["target"] - 1) * 100))
    return text


def markdown(doc, summary):
    p = doc["params"]
    reps = doc["repeats"]
    lines = ["# PerfBoost: binaries built for Open MPI and MPICH, on Locus and on their own MPI",
             "", "Median of %d repeat%s, runs interleaved; ratio = Locus / reference (time: "
             "lower is better, bandwidth: higher is better). NetPIPE -n %d, osu_latency -i %s, "
             "LAMMPS %d^3 cells x %d steps. %d cores." % (
                 reps, "s" if reps > 1 else "", p["netpipe_n"],
                 "/".join(str(v[0]) for v in p["osu_iters"].values()),
                 p["lammps_box"], p["lammps_steps"], p.get("cores") or 0), ""]
    own = [s for s in summary if s["group"] != "osu"]
    if own:
        lines += ["## Locus (through its ABI layers) against each binary's own MPI", "",
                  "| benchmark | figure | Locus | own MPI | own is | ratio | better | runs |",
                  "|---|---|---|---|---|---|---|---|"]
        for s in own:
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s, %s |" % (
                s["bench"], s["figure"], _fig(s["locus_v"]), _fig(s["ref_v"]), s["ref_name"],
                _ratio(s), s["better"], s["n_locus"], s["n_ref"]))
        lines.append("")
    lay = [s for s in summary if s["group"] == "osu"]
    if lay:
        lines += ["## Per-call cost of the layers: osu_latency under locusrun, built with the "
                  "legacy mpicc (through the layer) and with Locus's (native)", "",
                  "| layer | figure | through the layer | Locus native | ratio | runs |",
                  "|---|---|---|---|---|---|"]
        for s in lay:
            lines.append("| %s | %s | %s | %s | %s | %s, %s |" % (
                s["bench"].split(",")[1].split(" vs")[0].strip(), s["figure"],
                _fig(s["locus_v"]), _fig(s["ref_v"]), _ratio(s), s["n_locus"], s["n_ref"]))
        lines.append("")
    if doc.get("skipped"):
        lines += ["## Not measured", ""] + ["- " + n for n in doc["skipped"]] + [""]
    failed = ["- %s: %s" % (jid, r["failed"]) for jid, j in doc["results"].items()
              for r in j["runs"] if "failed" in r]
    if failed:
        lines += ["## Failed runs", ""] + failed + [""]
    return "\n".join(lines)


def plot(doc, summary, path):
    """Bars of every ratio, each turned so that above 1 is Locus ahead."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [s for s in summary if s["ratio"]]
    if not rows:
        return False
    vals = [1.0 / s["ratio"] if s["better"] == "lower" else s["ratio"] for s in rows]
    names = ["%s\n%s" % (s["bench"], s["figure"]) for s in rows]
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(rows) + 1.5))
    ax.barh(range(len(rows)), vals, color=["tab:green" if v >= 1 else "tab:red" for v in vals])
    ax.axvline(1.0, color="gray", linewidth=0.8)
    ax.axvline(1 / 1.05, color="gray", linewidth=0.6, linestyle="--")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("speed of Locus relative to the reference (>1: Locus faster; dashed: -5 %)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
