"""`locus bench` subcommands: compare, sweep, list."""
import argparse
import datetime
import json
import os
import platform
import re
import sys

from . import mpis as mpimod
from . import report, runner, suites, tunables

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
        "quick": bool(args.quick),
        "placement": "one rank per core, bound (Open MPI --bind-to core, MPICH -bind-to core, "
                     "Locus default)",
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
    _finish_common(args)
    explicit = args.mpi is not None
    names = _csv(args.mpi if explicit else tunables.get("LOCUS_BENCH_MPIS"))
    variants = _csv(args.variants)
    for v in variants:
        if v not in ("shipped", "tuned"):
            raise UsageError("unknown variant '%s' (shipped, tuned)" % v)
    try:
        cases = suites.cases_for(_csv(args.suite), args.quick)
    except ValueError as exc:
        raise UsageError(str(exc))
    found = _find_mpis(names, explicit, args.locus_bin)
    found.sort(key=lambda m: m.name != "locus")   # Locus's column first
    cfgs = mpimod.configs(found, variants)
    builds, build_failures = _build_all(found, {c.program for c in cases}, args.out)
    jobs_by_case = []
    for case in cases:
        jobs = [runner.Job(case, label, m, spec, builds[m.name][case.program])
                for label, m, spec in cfgs if case.program in builds[m.name]]
        jobs_by_case.append((case, jobs))
    labels = [label for label, _, _ in cfgs]
    results, seconds = runner.run_jobs(jobs_by_case, args.repeats, args.quick, args.timeout,
                              os.path.join(args.out, "raw"))
    summary = report.summarize(cases, results, labels, "locus")
    meta = _meta("Locus benchmark comparison", args, found,
                 {label: spec for label, _, spec in cfgs})
    meta["run_seconds"] = seconds
    meta["suites"] = args.suite
    meta["build_failures"] = build_failures
    paths = report.write_all(summary, meta, args.out, "compare", _plots_ok(args))
    with open(paths[0]) as f:
        sys.stdout.write(f.read())
    runner.log("wrote " + ", ".join(paths))
    missing = [(s["case"]["id"], l) for s in summary for l in labels
               if s["runs"].get(l, 0) == 0]
    for cid, l in missing:
        runner.log("no successful run of %s under %s" % (cid, l))
    return 1 if missing else 0


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
    c.add_argument("--suite", default="p2p",
                   help="comma list of %s or all (default p2p)" % ", ".join(suites.SUITES))
    c.add_argument("--mpi", default=None,
                   help="comma list of %s (default LOCUS_BENCH_MPIS)" % ",".join(mpimod.KNOWN))
    c.add_argument("--variants", default="shipped,tuned",
                   help="peer variants: shipped, tuned (default both)")
    _common(c)
    s = sub.add_parser("sweep", help="run one benchmark for each value of a tunable")
    s.add_argument("setting", help="VAR=v1,v2,... for an environment variable (LOCUS_SHM_EAGER_MAX="
                                   "1k,4k,16k) or opt=v1,v2 for a launcher option (bind-to=core,none)")
    s.add_argument("--bench", default="osu_latency", help="case id (see `locus bench list`)")
    s.add_argument("--mpi", default="locus", help="MPI to run under (default locus)")
    s.add_argument("--np", type=int, default=None, help="ranks (default: the case's)")
    _common(s)
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
                "list": cmd_list}[args.cmd](args)
    except UsageError as exc:
        sys.stderr.write("locus bench: %s\n" % exc)
        return 2
    except ValueError as exc:
        sys.stderr.write("locus bench: %s\n" % exc)
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("locus bench: interrupted\n")
        return 130
