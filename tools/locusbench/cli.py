"""`locus bench` subcommands: compare, sweep, startup, congestion, perfboost, report, list."""
import argparse
import datetime
import json
import os
import platform
import re
import signal
import sys

from . import mpis as mpimod
from . import cluster, congestion, report, runner, suites, tunables

HERE = os.path.dirname(os.path.abspath(__file__))


class UsageError(Exception):
    """Bad input: reported as one line, exit status 2."""


def bench_srcdir():
    """bench/ sources: <prefix>/share/locus/bench when installed, else the
    source tree's bench/."""
    # installed: <prefix>/share/locus/tools/locusbench -> <prefix>/share/locus/bench
    # source tree: <src>/tools/locusbench -> <src>/bench
    d = os.path.normpath(os.path.join(HERE, "..", "..", "bench"))
    if os.path.isfile(os.path.join(d, "pingpong.c")):
        return d
    raise UsageError("cannot find the benchmark sources (bench/pingpong.c) next to %s" % HERE)


def _csv(s):
    return [t.strip() for t in s.split(",") if t.strip()]


def _find_mpis(names, explicit, locus_bin):
    found = []
    for n in names:
        if n not in mpimod.KNOWN:
            raise UsageError("unknown MPI '%s' (known: %s)" % (n, ", ".join(mpimod.KNOWN)))
        m = mpimod.find(n, locus_bin)
        if m is None:
            msg = "MPI '%s' not found" % n
            if n == "locus":
                msg += " (no locusrun+mpicc via --locus-bin, LOCUS_BENCH_LOCUS_BIN, the install prefix or PATH)"
            if explicit:
                raise UsageError(msg)
            runner.log(msg + "; skipped")
            continue
        found.append(m)
    if not found:
        raise UsageError("no MPI to run (asked for %s)" % ",".join(names))
    return found


def _build_all(found, programs, outdir):
    """Builds the programs with every MPI; returns ({mpi: {prog: exe}},
    {mpi: [failure lines]})."""
    src = bench_srcdir()
    builds, failures = {}, {}
    for m in found:
        runner.log("building %s with %s" % (" ".join(sorted(programs)), m.mpicc))
        errs = failures.setdefault(m.name, [])

        def note(msg, errs=errs):
            errs.append(msg)
            runner.log(msg)
        builds[m.name] = mpimod.build(m, src, os.path.join(outdir, "build", m.name),
                                      sorted(programs), note)
    return builds, {k: v for k, v in failures.items() if v}


def _meta(title, args, found, variants):
    return {
        "title": title,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "host": platform.node(),
        "cores": os.cpu_count(),
        "repeats": args.repeats,
        "stat": getattr(args, "stat", "median"),
        "quick": bool(args.quick),
        "placement": "one rank per core, bound (Open MPI --bind-to core, MPICH -bind-to core, "
                     "Locus default); more ranks than cores: bound round-robin over the cores "
                     "(Open MPI --bind-to core:overload-allowed, Locus --bind-to core)",
        "mpis": [m.describe() for m in found],
        "variants": variants,
        "command": " ".join(["locus", "bench"] + sys.argv[1:]),
    }


def _common(p):
    p.add_argument("--quick", action="store_true", help="tiny sizes and few repetitions")
    p.add_argument("--repeats", type=int, default=None,
                   help="interleaved runs per config (default LOCUS_BENCH_REPEATS, 3; quick: 1)")
    p.add_argument("--out", default=None, help="output folder (default ./locus-bench-DATE)")
    p.add_argument("--locus-bin", default=None,
                   help="folder with Locus's locusrun and mpicc (default LOCUS_BENCH_LOCUS_BIN, "
                        "the install prefix, PATH)")
    p.add_argument("--timeout", type=int, default=None,
                   help="seconds per run before it is killed (default LOCUS_BENCH_TIMEOUT)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")


def _finish_common(args):
    if getattr(args, "stat", "median") is None:
        args.stat = tunables.get("LOCUS_BENCH_STAT")
    if getattr(args, "stat", "median") not in ("median", "best"):
        raise UsageError("--stat/LOCUS_BENCH_STAT must be median or best, not '%s'" % args.stat)
    if args.repeats is None:
        args.repeats = 1 if args.quick else tunables.get_int("LOCUS_BENCH_REPEATS")
    if args.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if args.timeout is None:
        args.timeout = tunables.get_int("LOCUS_BENCH_TIMEOUT")
    if args.locus_bin is None:
        args.locus_bin = tunables.get("LOCUS_BENCH_LOCUS_BIN") or None
    if args.out is None:
        args.out = "locus-bench-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def _plots_ok(args):
    if args.no_plots:
        return False
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        runner.log("matplotlib is not importable by %s: no plots (install python3-matplotlib)"
                   % sys.executable)
        return False


def cmd_compare(args):
    user_timeout = args.timeout is not None or bool(os.environ.get("LOCUS_BENCH_TIMEOUT"))
    _finish_common(args)
    explicit = args.mpi is not None
    names = _csv(args.mpi if explicit else tunables.get("LOCUS_BENCH_MPIS"))
    if args.nodes is not None:
        if not user_timeout:
            args.timeout = CLUSTER_TIMEOUT
        return _compare_cluster(args, names, explicit)
    variants = _csv(args.variants)
    for v in variants:
        if v not in ("shipped", "tuned"):
            raise UsageError("unknown variant '%s' (shipped, tuned)" % v)
    args.suite = args.suite or "p2p"
    try:
        cases = suites.cases_for(_csv(args.suite), args.quick)
    except ValueError as exc:
        raise UsageError(str(exc))
    if args.np:
        try:
            nps = {int(x) for x in _csv(args.np)}
        except ValueError:
            raise UsageError("--np wants a comma list of rank counts, not '%s'" % args.np)
        cases = [c for c in cases if c.np in nps]
        if not cases:
            raise UsageError("no case of suite %s runs on %s ranks" % (args.suite, args.np))
    found = _find_mpis(names, explicit, args.locus_bin)
    found.sort(key=lambda m: m.name != "locus")   # Locus's column first
    cfgs = mpimod.configs(found, variants)
    meta = _meta("Locus benchmark comparison", args, found,
                 {label: spec for label, _, spec in cfgs})
    return _compare_run(args, cases, found, cfgs, meta)


def _compare_run(args, cases, found, cfgs, meta, launch=None, grace=None, finish=None):
    """Builds, runs every case under every config, writes the report.
    finish(summary, meta, results) may add to meta before it is written."""
    builds, build_failures = _build_all(found, {c.program for c in cases}, args.out)
    jobs_by_case = []
    for case in cases:
        jobs = [runner.Job(case, label, m, spec, builds[m.name][case.program])
                for label, m, spec in cfgs if case.program in builds[m.name]]
        jobs_by_case.append((case, jobs))
    labels = [label for label, _, _ in cfgs]
    results, seconds = runner.run_jobs(jobs_by_case, args.repeats, args.quick, args.timeout,
                                       os.path.join(args.out, "raw"), launch, grace)
    summary = report.summarize(cases, results, labels, "locus", args.stat)
    meta["stat"] = args.stat
    meta["run_seconds"] = seconds
    meta["suites"] = args.suite
    meta["build_failures"] = build_failures
    if finish:
        finish(summary, meta, results)
    paths = report.write_all(summary, meta, args.out, "compare", _plots_ok(args))
    with open(paths[0]) as f:
        sys.stdout.write(f.read())
    runner.log("wrote " + ", ".join(paths))
    missing = [(s["case"]["id"], l) for s in summary for l in labels
               if s["runs"].get(l, 0) == 0]
    for cid, l in missing:
        runner.log("no successful run of %s under %s" % (cid, l))
    return 1 if missing else 0


# Multi-node mode: a run normally takes seconds, so a hung one is cut short
# sooner than LOCUS_BENCH_TIMEOUT's default; a job that printed its whole
# result but does not end is killed after EXIT_GRACE seconds and kept (noted).
CLUSTER_TIMEOUT = 120
EXIT_GRACE = 3.0


def _compare_cluster(args, names, explicit):
    """`compare --nodes N`: the multi-node cases on an emulated cluster of
    network namespaces (scripts/cluster), one rank per node, every MPI on TCP
    over the same shaped rails (docs/bench.md, "Multi-node")."""
    if args.nodes < 2:
        raise UsageError("--nodes %d: a multi-node run needs at least 2 nodes" % args.nodes)
    if not 1 <= args.rails <= 8:
        raise UsageError("--rails %d: 1 to 8" % args.rails)
    try:
        cluster.check_name(args.cluster_name, args.subnet, args.rails)
    except ValueError as exc:
        raise UsageError(str(exc))
    if args.variants != "shipped,tuned":
        runner.log("--variants does not apply with --nodes (each MPI runs as shipped, on TCP)")
    args.suite = args.suite or "all"
    try:
        cases = suites.cluster_cases_for(_csv(args.suite), args.nodes, args.rails,
                                           shaped=bool(args.rate))
    except ValueError as exc:
        raise UsageError(str(exc))
    why = cluster.usable()
    if why:
        raise UsageError("--nodes needs an emulated cluster, which cannot be built here: " + why)
    found = _find_mpis(names, explicit, args.locus_bin)
    found.sort(key=lambda m: m.name != "locus")
    if args.fi_lib and (args.transport != "ofi" or
                        not os.path.exists(os.path.join(args.fi_lib, "libfabric.so.1"))):
        raise UsageError("--fi-lib %s: needs --transport ofi and a folder holding libfabric.so.1"
                         % args.fi_lib)
    if args.transport == "ofi":
        kept = [m for m in found if not cluster.ofi_unable(m.name, args.fi_provider)]
        for m in found:
            if m not in kept:
                runner.log("%s: left out of --transport ofi --fi-provider %s (%s)"
                           % (m.name, args.fi_provider,
                              cluster.ofi_unable(m.name, args.fi_provider)))
        found = kept
    cfgs = mpimod.configs(found, ["shipped"])
    settings = {}
    for label, m, spec in cfgs:
        if args.transport == "ofi":
            targs, env = cluster.ofi_only(m.name, args.fi_provider, args.fi_lib)
        else:
            targs, env = cluster.tcp_only(m.name, ["eth%d" % r for r in range(args.rails)])
        settings[label] = {"args": (["--rails", str(args.rails)] if m.name == "locus" else [])
                           + targs + spec.get("args", []), "env": dict(spec.get("env", {}), **env)}
    meta = _meta("Locus multi-node comparison (%d nodes, %d rail%s, %s per link, %s)"
                 % (args.nodes, args.rails, "s" if args.rails > 1 else "", args.rate or "unshaped",
                    "libfabric's %s provider%s" % (args.fi_provider, " (libfabric from %s)"
                                                   % args.fi_lib if args.fi_lib else "")
                    if args.transport == "ofi"
                    else "TCP"),
                 args, found, settings)
    meta["placement"] = ("one rank per node (network namespace); launchers do not bind, "
                         "pin_rank puts rank r on CPU r mod %d for every MPI; each launcher runs "
                         "on node 0 and starts its daemons through netns_rsh; jobs with more "
                         "ranks than CPUs yield when idle (Locus LOCUS_YIELD=always, Open MPI "
                         "mpi_yield_when_idle 1; MPICH has no such setting)"
                         % (os.cpu_count() or 1))
    meta["exit_grace_s"] = EXIT_GRACE
    meta["plot_groups"] = [
        ["cluster_p2p", [c.id for c in cases if c.program in ("osu_latency", "osu_bw")]],
        ["cluster_mr_coll", [c.id for c in cases if c.program in ("osu_bibw", "osu_mbw_mr",
                                                                   "imb")]]]
    with cluster.Cluster(args.cluster_name, args.nodes, args.rails, args.rate,
                         args.subnet) as cl:
        meta["cluster"] = cl.describe()

        def finish(summary, meta, results):
            meta["targets"] = cluster.targets(summary, args.rails, results)
        nodes = cl.nodes()
        nodes.transport = (args.transport, args.fi_provider, args.fi_lib)
        return _compare_run(args, cases, found, cfgs, meta, cluster.Launch(nodes),
                            EXIT_GRACE, finish)


def _load_doc(args, keys, what):
    """--from FILE: the JSON of an earlier run, and the folder to write to."""
    try:
        with open(args.from_json) as f:
            doc = json.load(f)
    except (OSError, ValueError) as exc:
        raise UsageError("--from %s: %s" % (args.from_json, exc))
    if not isinstance(doc, dict) or not all(k in doc for k in keys):
        raise UsageError("--from %s: not a %s" % (args.from_json, what))
    out = args.out or os.path.dirname(os.path.abspath(args.from_json))
    os.makedirs(out, exist_ok=True)
    return doc, out


def _cluster_program(args, prog):
    """For a benchmark on an emulated cluster: the MPIs (Locus first), prog
    built with each ({name: exe}), and the build failures."""
    why = cluster.usable()
    if why:
        raise UsageError("%s runs on an emulated cluster, which cannot be built here: %s"
                         % (prog, why))
    explicit = args.mpi is not None
    found = _find_mpis(_csv(args.mpi if explicit else tunables.get("LOCUS_BENCH_MPIS")),
                       explicit, args.locus_bin)
    found.sort(key=lambda m: m.name != "locus")
    os.makedirs(args.out, exist_ok=True)
    builds, failures = _build_all(found, {prog}, args.out)
    found = [m for m in found if prog in builds.get(m.name, {})]
    if not found:
        raise UsageError("the %s program built with no MPI" % prog)
    return found, {m.name: builds[m.name][prog] for m in found}, failures


def _render(args, doc, mod, out, base):
    """Writes and prints base.md, draws base.png: mod's summary of doc."""
    doc.setdefault("repeats", 1)
    summary = mod.summarize(doc)
    text = mod.markdown(doc, summary)
    with open(os.path.join(out, base + ".md"), "w") as f:
        f.write(text)
    print(text)
    png = os.path.join(out, base + ".png")
    if not getattr(args, "no_plots", False) and mod.plot(doc, summary, png):
        runner.log("plot: %s" % png)
    return summary


def cmd_startup(args):
    """`startup`: launch times on an emulated cluster, each Locus strategy
    against the peers; `--model` the fitted model (also from --from FILE)."""
    from . import startup, startup_model
    if args.from_json:
        doc, out = _load_doc(args, ("results", "grid"), "startup.json")
    else:
        user_timeout = args.timeout is not None or bool(os.environ.get("LOCUS_BENCH_TIMEOUT"))
        _finish_common(args)
        if not user_timeout:
            args.timeout = startup.RUN_TIMEOUT
        if args.quick:
            args.nodes, args.ppn = args.nodes or "1,2", args.ppn or "1,2"
        try:
            args.nodes = [int(v) for v in _csv(args.nodes or "1,2,4,8")]
            args.ppn = [int(v) for v in _csv(args.ppn or "1,4,16,32")]
        except ValueError:
            raise UsageError("--nodes and --ppn take comma-separated integers")
        if not args.nodes or min(args.nodes) < 1 or max(args.nodes) > 64:
            raise UsageError("--nodes: 1 to 64 nodes")
        if not args.ppn or min(args.ppn) < 1 or max(args.ppn) > 256:
            raise UsageError("--ppn: 1 to 256 ranks per node")
        if args.max_ranks < 1:
            raise UsageError("--max-ranks must be at least 1")
        args.fanouts = _csv(args.fanouts)
        if not args.fanouts or not all(f == "auto" or (f.isdigit() and int(f) != 1)
                                       for f in args.fanouts):
            raise UsageError("--fanouts: comma-separated LOCUS_LAUNCH_FANOUT values (0, a "
                             "fanout of 2 or more, auto), got %r" % ",".join(args.fanouts))
        args.strategies = _csv(args.strategies)
        bad = [t for t in args.strategies if t not in startup.STRATEGIES]
        if bad or not args.strategies:
            raise UsageError("--strategies: expected some of %s, got %s"
                             % (",".join(startup.STRATEGIES), ",".join(bad) or "none"))
        found, args.exes, failures = _cluster_program(args, "startup")
        out = args.out
        doc = startup.run(args, found, out)
        doc["repeats"] = args.repeats
        doc["meta"] = _meta("Locus start-up: launch to MPI_Init, each address-exchange "
                            "strategy against the peers", args, found, {})
        doc["meta"]["build_failures"] = failures
        with open(os.path.join(out, "startup.json"), "w") as f:
            json.dump(doc, f, indent=1)
    summary = _render(args, doc, startup, out, "startup")
    if args.model:
        launch = startup_model.fit_launch(doc, summary)
        try:
            units = startup_model.fit(doc, summary)
        except ValueError as exc:
            if not launch:
                raise UsageError("--model: %s" % exc)
            units, why = None, str(exc)
        assumed = dict(startup_model.ASSUMED)
        if args.front_end_bw is not None:
            if not args.front_end_bw > 0:
                raise UsageError("--front-end-bw must be a positive number of MB/s")
            assumed["front_end_bw"] = args.front_end_bw * 1e6
        text = (startup_model.markdown(units, doc, summary, assumed=assumed) if units else
                "# Start-up model\n\nNo exchange model from these runs (%s).\n" % why)
        text += startup_model.launch_markdown(launch, units)
        with open(os.path.join(out, "startup-model.md"), "w") as f:
            f.write(text)
        with open(os.path.join(out, "startup-model.json"), "w") as f:
            model = startup_model.to_json(units, assumed=assumed) if units else {}
            model["launch"] = {k: {x: v for x, v in f.items() if x != "rows"}
                               for k, f in launch.items()}
            model["launch_assumed"] = startup_model.LAUNCH_ASSUMED
            json.dump(model, f, indent=1)
        print(text)
    runner.log("results in %s" % out)
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def cmd_congestion(args):
    """`congestion`: the victim tests alone and under congestion on an
    emulated cluster with strict-priority switch ports, Locus with each
    LOCUS_QOS mode against the peers (also from --from FILE)."""
    if args.from_json:
        doc, out = _load_doc(args, ("labels", "results", "params"), "congestion.json")
    else:
        user_timeout = args.timeout is not None or bool(os.environ.get("LOCUS_BENCH_TIMEOUT"))
        _finish_common(args)
        if not user_timeout:
            args.timeout = congestion.RUN_TIMEOUT
        if not 3 <= args.nodes <= 64:
            raise UsageError("--nodes %d: 3 to 64 (2 victim nodes and at least one of "
                             "congestors)" % args.nodes)
        if not 2 <= args.ppn <= 64:
            raise UsageError("--ppn %d: 2 to 64 (a victim node holds victims and sinks)"
                             % args.ppn)
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?([kmg]?bit|[kmg]?bps)", args.rate):
            raise UsageError("--rate %s: like 50mbit, 1gbit" % args.rate)
        args.qos_modes = _csv(args.qos_modes)
        bad = [q for q in args.qos_modes if q not in congestion.QOS_MODES]
        if bad or not args.qos_modes or len(set(args.qos_modes)) != len(args.qos_modes):
            raise UsageError("--qos-modes: expected some of %s, got %s"
                             % (",".join(congestion.QOS_MODES), ",".join(bad or args.qos_modes)
                                or "none"))
        if args.tcp_cc in ("", "default"):
            args.tcp_cc = None
        elif not re.fullmatch(r"[a-z0-9_]+", args.tcp_cc):
            raise UsageError("--tcp-cc %s: an algorithm name (reno, bbr) or default"
                             % args.tcp_cc)
        # A SIGTERM (a batch system's, a test's timeout) unwinds like ^C, so
        # the job and the emulated cluster go as on any other way out.
        signal.signal(signal.SIGTERM, _interrupt)
        found, exes, failures = _cluster_program(args, "congestion")
        out = args.out
        doc = congestion.run(args, found, exes)
        doc["repeats"] = args.repeats
        doc["meta"] = _meta("Locus congestion: victim tests alone and under congestion, each "
                            "LOCUS_QOS mode against the peers", args, found,
                            {l: {"env": {"LOCUS_QOS": l[6:]}} for l in doc["labels"]
                             if l.startswith("locus-")})
        doc["meta"]["placement"] = ("%d ranks per node (network namespace); launchers do not "
                                    "bind; each launcher runs on node 0 and starts its daemons "
                                    "through netns_rsh; all MPIs on TCP" % args.ppn)
        doc["meta"]["build_failures"] = failures
        with open(os.path.join(out, "congestion.json"), "w") as f:
            json.dump(doc, f, indent=1)
    summary = _render(args, doc, congestion, out, "congestion")
    runner.log("results in %s" % out)
    missing = [l for l in doc["labels"] if summary[l]["ok"] == 0]
    for l in missing:
        runner.log("no successful run under %s" % l)
    return 1 if missing else 0


def cmd_perfboost(args):
    """`perfboost`: binaries built for Open MPI and MPICH (NetPIPE, LAMMPS,
    osu_latency) on Locus through its ABI layers and on their own MPI
    (also from --from FILE)."""
    from . import perfboost
    if args.from_json:
        doc, out = _load_doc(args, ("rows", "results", "params"), "perfboost.json")
    else:
        user_timeout = args.timeout is not None or bool(os.environ.get("LOCUS_BENCH_TIMEOUT"))
        _finish_common(args)
        if not user_timeout:
            args.timeout = perfboost.RUN_TIMEOUT
        args.parts = _csv(args.parts)
        bad = [x for x in args.parts if x not in perfboost.PARTS]
        if bad or not args.parts:
            raise UsageError("--parts: expected some of %s, got %s"
                             % (",".join(perfboost.PARTS), ",".join(bad) or "none"))
        try:
            args.lammps_np = [int(v) for v in _csv(args.lammps_np)]
        except ValueError:
            raise UsageError("--lammps-np wants a comma list of rank counts, not '%s'"
                             % args.lammps_np)
        given = [v for v in (args.netpipe_n, args.lammps_box, args.lammps_steps) if v is not None]
        if min(given + args.lammps_np + [1]) < 1 or not args.lammps_np:
            raise UsageError("--netpipe-n, --lammps-box, --lammps-steps and --lammps-np must be "
                             "positive")
        for opt, full, quick in (("netpipe_n", 200, 20), ("lammps_box", 20, 10),
                                 ("lammps_steps", 100, 50)):
            if getattr(args, opt) is None:
                setattr(args, opt, quick if args.quick else full)
        signal.signal(signal.SIGTERM, _interrupt)
        locus = mpimod.find("locus", args.locus_bin)
        try:
            doc = perfboost.measure(args, locus, bench_srcdir())
        except ValueError as exc:
            raise UsageError(str(exc))
        out = args.out
        doc["repeats"] = args.repeats
        doc["meta"] = _meta("Locus PerfBoost: Open MPI and MPICH binaries on Locus through its "
                            "ABI layers and on their own MPI", args,
                            [m for m in (locus,) if m], {})
        doc["meta"]["placement"] = ("each launcher's default placement, as a user would start "
                                    "the binary; --oversubscribe past the cores (Open MPI's "
                                    "mpirun: always for LAMMPS)")
        with open(os.path.join(out, "perfboost.json"), "w") as f:
            json.dump(doc, f, indent=1)
    summary = _render(args, doc, perfboost, out, "perfboost")
    runner.log("results in %s" % out)
    failed = [s["bench"] + ", " + s["figure"] for s in summary
              if s["locus_v"] is None or s["ref_v"] is None]
    for f in failed:
        runner.log("no successful run for %s" % f)
    return 1 if failed else 0


def _sweep_setting(spec):
    if "=" not in spec:
        raise UsageError("sweep wants VAR=v1,v2,... (got '%s')" % spec)
    var, vals = spec.split("=", 1)
    values = _csv(vals)
    if not var or not values:
        raise UsageError("sweep wants VAR=v1,v2,... (got '%s')" % spec)
    if re.fullmatch(r"[A-Z_][A-Z0-9_]*", var):
        # An environment variable: LOCUS_* tunables, or a peer's own
        # (MPIR_CVAR_*, OMPI_MCA_*, UCX_*) with --mpi.
        return var, values, lambda v: ([], {var: v})
    opt = "--" + var.lstrip("-")
    return opt, values, lambda v: ([opt, v], {})


def cmd_sweep(args):
    _finish_common(args)
    var, values, apply = _sweep_setting(args.setting)
    all_cases = {c.id: c for c in suites.cases_for(["all"], False)}
    if args.bench not in all_cases:
        raise UsageError("unknown benchmark '%s' (choose from %s)"
                         % (args.bench, ", ".join(sorted(all_cases))))
    case = all_cases[args.bench]
    if args.np:
        if case.program == "imb":
            raise UsageError("IMB cases fix their rank count: pick imb_<Benchmark>_np<N>")
        case.np = args.np
    found = _find_mpis([args.mpi], True, args.locus_bin)
    m = found[0]
    spec = mpimod.VARIANTS[m.name]["shipped"]
    builds, _ = _build_all(found, {case.program}, args.out)
    if case.program not in builds[m.name]:
        runner.log("could not build %s with %s" % (case.program, m.name))
        return 1
    jobs = []
    for v in values:
        extra_args, extra_env = apply(v)
        jobs.append(runner.Job(case, v, m, spec, builds[m.name][case.program],
                               extra_args, extra_env))
    labels = [j.label for j in jobs]
    if len(set(labels)) != len(labels):
        raise UsageError("sweep values repeat: %s" % ",".join(values))
    results, seconds = runner.run_jobs([(case, jobs)], args.repeats, args.quick, args.timeout,
                              os.path.join(args.out, "raw"))
    summary = report.summarize([case], results, labels, None)
    meta = _meta("Locus sweep of %s (%s, %s)" % (var, case.id, m.name), args, found,
                 {l: {"args": j.extra_args, "env": j.extra_env} for l, j in zip(labels, jobs)})
    meta["run_seconds"] = seconds
    meta["sweep_variable"] = var
    paths = report.write_all(summary, meta, args.out, "sweep", _plots_ok(args))
    with open(paths[0]) as f:
        sys.stdout.write(f.read())
    runner.log("wrote " + ", ".join(paths))
    return 0 if all(summary[0]["runs"].get(l, 0) for l in labels) else 1


def cmd_report(args):
    try:
        with open(args.json) as f:
            summary, meta = report.from_json(json.load(f))
    except (OSError, ValueError, KeyError) as exc:
        raise UsageError("cannot read report %s: %s" % (args.json, exc))
    out = args.out or os.path.dirname(os.path.abspath(args.json))
    stem = os.path.splitext(os.path.basename(args.json))[0]
    ref = "Locus" if not meta.get("sweep_variable") else None
    paths = report.write_all(summary, meta, out, stem, _plots_ok(args), ref_name=ref or "Locus")
    runner.log("wrote " + ", ".join(paths))
    return 0


def cmd_list(args):
    print("suites:")
    for name, fn in suites.SUITES.items():
        print("  %-9s %s" % (name, ", ".join(c.id for c in fn())))
    print("suites with --nodes 4 --rails 2 (multi-node):")
    for name, cases in suites.cluster(4, 2).items():
        print("  %-9s %s" % (name, ", ".join(c.id for c in cases)))
    print("MPIs:")
    for n in mpimod.KNOWN:
        m = mpimod.find(n, args.locus_bin or tunables.get("LOCUS_BENCH_LOCUS_BIN") or None)
        if m:
            print("  %-8s %s  (%s, %s)" % (n, m.version, m.mpicc, m.launcher))
        else:
            print("  %-8s not found" % n)
    print("benchmark sources: %s" % bench_srcdir())
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parser():
    p = _Parser(prog="locus bench",
                description="Build the Locus benchmark suite against every MPI found, run it "
                            "side by side, write tables, JSON and plots.")
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser)
    c = sub.add_parser("compare", help="run suites under Locus, Open MPI and MPICH")
    c.add_argument("--suite", default=None,
                   help="comma list of %s or all (default p2p; with --nodes: p2p, mr, coll or "
                        "all, default all)" % ", ".join(suites.SUITES))
    c.add_argument("--mpi", default=None,
                   help="comma list of %s (default LOCUS_BENCH_MPIS)" % ",".join(mpimod.KNOWN))
    c.add_argument("--variants", default="shipped,tuned",
                   help="peer variants: shipped, tuned (default both)")
    c.add_argument("--np", default=None,
                   help="comma list of rank counts: only the cases that run on them "
                        "(e.g. 2,4 for the collectives; default all)")
    c.add_argument("--stat", default=None, choices=("median", "best"),
                   help="what is reported of the repeats per size: median, or best (each "
                        "MPI's least disturbed run; default LOCUS_BENCH_STAT, median)")
    _common(c)
    c.add_argument("--nodes", type=int, default=None,
                   help="multi-node mode: N nodes of an emulated cluster (network namespaces, "
                        "scripts/cluster; needs root), one rank per node, every MPI on TCP")
    c.add_argument("--transport", default="tcp", choices=("tcp", "ofi"),
                   help="with --nodes: what carries messages between nodes: tcp (every MPI's "
                        "own TCP path) or ofi (libfabric: Locus's ofi transport, Open MPI's "
                        "mtl ofi; default tcp)")
    c.add_argument("--fi-provider", default="tcp",
                   help="with --transport ofi: the libfabric provider (tcp, udp, or shm: "
                        "across the emulated nodes' namespaces, a provider whose messages "
                        "cost less than copies, as a fabric's; Open MPI's mtl cannot run "
                        "on it; default tcp)")
    c.add_argument("--fi-lib", default=None, metavar="DIR",
                   help="with --transport ofi: a folder whose libfabric.so.1 every MPI loads "
                        "(LD_LIBRARY_PATH), so all run the same provider build; e.g. PyPI "
                        "MPICH 5's own, <LOCUS_BENCH_MPICH5>/lib/mpich (libfabric 2.x). "
                        "Default: each MPI's own (Debian's libfabric 1.17 for Locus and "
                        "Open MPI)")
    c.add_argument("--rails", type=int, default=2,
                   help="with --nodes: network rails per node (default 2; osu_bw also runs on 1)")
    c.add_argument("--rate", default=cluster.DEFAULT_RATE,
                   help="with --nodes: HTB rate of every link, each way (default %s; '' for none)"
                        % cluster.DEFAULT_RATE)
    c.add_argument("--cluster-name", default=cluster.DEFAULT_NAME,
                   help="with --nodes: the cluster's name (default %s); one already up with the "
                        "same shape is used and left up" % cluster.DEFAULT_NAME)
    c.add_argument("--subnet", type=int, default=cluster.DEFAULT_SUBNET,
                   help="with --nodes: rail r on 198.18.(K+r).0/24 (default %d)"
                        % cluster.DEFAULT_SUBNET)
    s = sub.add_parser("sweep", help="run one benchmark for each value of a tunable")
    s.add_argument("setting", help="VAR=v1,v2,... for an environment variable (LOCUS_SHM_EAGER_MAX="
                                   "1k,4k,16k) or opt=v1,v2 for a launcher option (bind-to=core,none)")
    s.add_argument("--bench", default="osu_latency", help="case id (see `locus bench list`)")
    s.add_argument("--mpi", default="locus", help="MPI to run under (default locus)")
    s.add_argument("--np", type=int, default=None, help="ranks (default: the case's)")
    _common(s)
    st = sub.add_parser("startup", help="launch-to-MPI_Init times on an emulated cluster: "
                                         "each Locus address-exchange strategy and the peers")
    st.add_argument("--nodes", default=None, help="comma list of node counts (default 1,2,4,8; "
                                                  "quick 1,2)")
    st.add_argument("--ppn", default=None, help="comma list of ranks per node (default "
                                                "1,4,16,32; quick 1,2)")
    st.add_argument("--max-ranks", type=int, default=256,
                    help="skip layouts with more ranks (default 256)")
    st.add_argument("--strategies", default="simple,shm,roots,lazy,fabric",
                    help="Locus's LOCUS_ADDR_EXCHANGE values to run (default all five)")
    st.add_argument("--mpi", default=None,
                    help="comma list of %s (default LOCUS_BENCH_MPIS)" % ",".join(mpimod.KNOWN))
    st.add_argument("--fanouts", default="auto",
                    help="LOCUS_LAUNCH_FANOUT values to run Locus with, comma list (0: every "
                         "proxy started by locusrun; k: a tree of fanout k; default auto); more "
                         "than one labels each run locus-STRATEGY-kK")
    st.add_argument("--model", action="store_true",
                    help="fit the start-up model to the runs and predict up to 10,000 x 64")
    st.add_argument("--front-end-bw", type=float, default=None,
                    help="with --model: predict with the launcher's card broadcast at this many "
                         "MB/s instead of the rate fitted here (a scenario, stated as such)")
    st.add_argument("--from", dest="from_json", default=None,
                    help="no runs: tables, plot and model from an earlier startup.json")
    _common(st)
    cg = sub.add_parser("congestion", help="victim latency, Allreduce and bandwidth alone and "
                                           "under congestion on an emulated cluster with "
                                           "priority switch ports: each LOCUS_QOS mode and the "
                                           "peers (GPCNeT-style)")
    cg.add_argument("--nodes", type=int, default=4,
                    help="nodes of the emulated cluster: 2 of victims and sinks, the rest "
                         "congestors (default 4)")
    cg.add_argument("--ppn", type=int, default=2, help="ranks per node (default 2)")
    cg.add_argument("--rate", default=congestion.DEFAULT_RATE,
                    help="rate of every link, each way (default %s)" % congestion.DEFAULT_RATE)
    cg.add_argument("--qos-modes", default="off,static,adaptive",
                    help="Locus's LOCUS_QOS values to run (default off,static,adaptive)")
    cg.add_argument("--tcp-cc", default=congestion.DEFAULT_TCP_CC,
                    help="TCP congestion control of the nodes (default %s: it fills switch "
                         "queues as CUBIC would; 'default' leaves this machine's)"
                         % congestion.DEFAULT_TCP_CC)
    cg.add_argument("--mpi", default=None,
                    help="comma list of %s (default LOCUS_BENCH_MPIS)" % ",".join(mpimod.KNOWN))
    cg.add_argument("--from", dest="from_json", default=None,
                    help="no runs: table and plot from an earlier congestion.json")
    _common(cg)
    pb = sub.add_parser("perfboost", help="binaries built for Open MPI and MPICH (NetPIPE, "
                                          "osu_latency, LAMMPS) on Locus through its ABI layers "
                                          "and on their own MPI")
    pb.add_argument("--parts", default="netpipe,osu,lammps",
                    help="what to run: some of netpipe, osu, lammps (default all)")
    pb.add_argument("--netpipe-n", type=int, default=None,
                    help="NetPIPE's -n, repetitions per message size (default 200; quick 20)")
    pb.add_argument("--lammps-box", type=int, default=None,
                    help="LAMMPS melt box edge in lattice cells (default 20; quick 10)")
    pb.add_argument("--lammps-steps", type=int, default=None,
                    help="LAMMPS steps per run (default 100; quick 50)")
    pb.add_argument("--lammps-np", default="2,4", help="LAMMPS rank counts (default 2,4)")
    pb.add_argument("--from", dest="from_json", default=None,
                    help="no runs: table and plot from an earlier perfboost.json")
    _common(pb)
    rp = sub.add_parser("report", help="redraw the table and plots from a compare/sweep JSON")
    rp.add_argument("json", help="compare.json or sweep.json")
    rp.add_argument("--out", default=None, help="output folder (default: the JSON's)")
    rp.add_argument("--no-plots", action="store_true")
    ls = sub.add_parser("list", help="suites, cases and the MPIs found")
    ls.add_argument("--locus-bin", default=None)
    return p


def main(argv):
    try:
        args = parser().parse_args(argv)
        if args.cmd is None:
            parser().print_help()
            return 2
        return {"compare": cmd_compare, "sweep": cmd_sweep, "report": cmd_report,
                "list": cmd_list, "startup": cmd_startup,
                "congestion": cmd_congestion,
                "perfboost": cmd_perfboost}[args.cmd](args)
    except UsageError as exc:
        sys.stderr.write("locus bench: %s\n" % exc)
        return 2
    except ValueError as exc:
        sys.stderr.write("locus bench: %s\n" % exc)
        return 2
    except RuntimeError as exc:   # the emulated cluster could not be built
        sys.stderr.write("locus bench: %s\n" % exc)
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("locus bench: interrupted\n")
        return 130
