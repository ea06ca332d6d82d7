"""`locus bench congestion`: how much bulk traffic from other jobs slows an
application's small messages, collectives and bandwidth, GPCNeT-style
(bench/congestion.c), for Locus with each LOCUS_QOS mode and for the peers.

It runs on its own emulated cluster (scripts/cluster, network namespaces)
whose switch ports toward the nodes are shaped (--rate) strict-priority
ports (--qos: DSCP EF before unmarked before CS1). The first two nodes hold
the victims and the sinks, the others the congestors, whose incast fills the
switch queue toward a victim node. Every MPI launches the program the same
way as in `locus bench startup` (its launcher on node 0, daemons through
netns_rsh, all on TCP). Runs of all labels are interleaved; each figure is
the median over the repeats (nearest rank: one run's own figure) of the
program's figure, its average or 99th percentile over every victim's
samples.

The congestion impact factor (CIF) is GPCNeT's: congested over isolated for
times, isolated over congested for bandwidth; 1 is no impact.
"""
import math
import os
import re
import subprocess
import time

from . import cluster, runner

QOS_MODES = ("off", "static", "adaptive")
# (test, name in the table, lower is better)
TESTS = (("lat", "RR two-sided lat (8 B)", True),
         ("allreduce", "Allreduce (8 B)", True),
         ("bw", "RR two-sided BW+sync (128 KiB)", False))
PHASES = ("isolated", "congested")
# Its own cluster name and subnet, apart from the tests' (100, 110, 120,
# 150, 160) and `compare --nodes`'s (140-141).
NAME, SUBNET = "locus-cg", 170
DEFAULT_RATE = "50mbit"
# This machine's default TCP (BBR) paces to the bottleneck and keeps switch
# queues short by design; a loss-based TCP (Linux's usual CUBIC, or reno)
# fills them as a congested HPC fabric's queues fill. A namespace may only
# pick one of net.ipv4.tcp_allowed_congestion_control (here reno and bbr).
DEFAULT_TCP_CC = "reno"
RUN_TIMEOUT = 180
# Seconds a job may take after its last line (MPICH 4.0's ch4:ucx now and
# then hangs in MPI_Finalize): then it is killed and its figures kept.
EXIT_GRACE = 5.0

RESULT = re.compile(r"congestion: result test (\w+) phase (\w+) n (\d+)(.*) units (\S+)")
BULK = re.compile(r"congestion: bulk role (\w+) ranks (\d+) bytes (\d+) seconds ([\d.]+) "
                  r"rate_MBps ([\d.]+)")
CONFIG = re.compile(r"congestion: config (.*)")
DONE = re.compile(r"congestion: done seconds ([\d.]+)")


def labels_for(found, modes):
    """[(label, mpi, env)]: Locus once per QoS mode, each peer once."""
    out = []
    for m in found:
        if m.name == "locus":
            out += [("locus-" + q, m, {"LOCUS_QOS": q}) for q in modes]
        else:
            out.append((m.name, m, {}))
    return out


def parse_run(stdout):
    """The figures of one run's output, or None when it is incomplete:
    {"config": {...}, "tests": {test: {phase: {n, avg, p50, p99, worst,
    units}}}, "bulk": {role: {ranks, bytes, seconds, MBps}}, "seconds"}."""
    m = CONFIG.search(stdout)
    d = DONE.search(stdout)
    if not m or not d:
        return None
    words = m.group(1).split()
    cfg = {k: (int(v) if v.isdigit() else v) for k, v in zip(words[::2], words[1::2])}
    res = {"config": cfg, "tests": {}, "bulk": {}, "seconds": float(d.group(1))}
    for t, ph, n, rest, units in RESULT.findall(stdout):
        fig = {"n": int(n), "units": units}
        w = rest.split()
        fig.update({k: float(v) for k, v in zip(w[::2], w[1::2])})
        res["tests"].setdefault(t, {})[ph] = fig
    for role, ranks, nbytes, secs, rate in BULK.findall(stdout):
        res["bulk"][role] = {"ranks": int(ranks), "bytes": int(nbytes), "seconds": float(secs),
                             "MBps": float(rate)}
    for t, _, _ in TESTS:
        for ph in PHASES:
            if ph not in res["tests"].get(t, {}):
                return None
    return res


def cif(lower_better, isolated, congested):
    """GPCNeT's congestion impact factor (1: no impact, higher: worse), or
    None without both figures."""
    if not isolated or not congested or isolated <= 0 or congested <= 0:
        return None
    return congested / isolated if lower_better else isolated / congested


def percentile(vals, q):
    """The q-th percentile by nearest rank (the smallest value with at least
    q% of the values at or below it; the program's own rule), None for no
    values (None values are left out)."""
    v = sorted(x for x in vals if x is not None)
    if not v:
        return None
    return v[max(0, math.ceil(q / 100.0 * len(v)) - 1)]


def median(vals):
    """The repeats' median by nearest rank: always one run's own figure."""
    return percentile(vals, 50)


def summarize(doc):
    """{label: {"runs", "ok", "tests": {test: {"isolated": {"avg", "p99",
    "n"}, "congested": {...}, "cif_avg", "cif_p99"}}, "congestor_MBps",
    "sink_MBps"}}: medians over the runs that worked; the CIFs from them."""
    out = {}
    for label in doc["labels"]:
        runs = doc["results"].get(label, [])
        ok = [r for r in runs if not r.get("failed")]
        s = {"runs": len(runs), "ok": len(ok), "tests": {}}
        for t, _, lower in TESTS:
            st = {}
            for ph in PHASES:
                figs = [r["tests"][t][ph] for r in ok]
                st[ph] = {k: median([f.get(k) for f in figs]) for k in ("avg", "p99", "n")}
            st["cif_avg"] = cif(lower, st["isolated"]["avg"], st["congested"]["avg"])
            st["cif_p99"] = cif(lower, st["isolated"]["p99"], st["congested"]["p99"])
            s["tests"][t] = st
        for role in ("congestor", "sink"):
            s[role + "_MBps"] = median([r["bulk"].get(role, {}).get("MBps") for r in ok])
        out[label] = s
    return out


def _fig(v):
    if v is None:
        return "—"
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v


def _x(v):
    return "—" if v is None else "%.1fX" % v


def markdown(doc, summary):
    p = doc["params"]
    lines = ["# Congestion: victims alone and under congestion", "",
             "%d nodes x %d ranks on an emulated cluster, %s strict-priority switch ports "
             "(DSCP EF > unmarked > CS1), TCP %s; %s victim nodes, congestors' incast into %s "
             "of them. Median of %d repeat%s. CIF (congestion impact factor): congested / "
             "isolated for times, isolated / congested for bandwidth; 1.0X is no impact."
             % (p["nodes"], p["ppn"], p["rate"], p.get("tcp_cc") or "default",
                _cfg(doc, "victim_nodes"), _cfg(doc, "hot_nodes"), doc["repeats"],
                "s" if doc["repeats"] > 1 else ""), "",
             "## Key results: congestion impact factor", "",
             "| MPI | " + " | ".join("%s avg | %s 99%%" % (name, name) for _, name, _ in TESTS)
             + " | congestors MB/s |",
             "|---" * (2 * len(TESTS) + 2) + "|"]
    for label in doc["labels"]:
        s = summary[label]
        cells = []
        for t, _, _ in TESTS:
            cells += [_x(s["tests"][t]["cif_avg"]), _x(s["tests"][t]["cif_p99"])]
        lines.append("| %s | %s | %s |" % (label, " | ".join(cells), _fig(s["congestor_MBps"])))
    lines += ["", "## Isolated and congested (usec; bandwidth MB/s per rank, its 99% the rate "
              "99% of samples reach)", "",
              "| MPI | test | isolated avg | isolated 99% | congested avg | congested 99% "
              "| CIF avg | CIF 99% | runs ok |", "|---" * 9 + "|"]
    for label in doc["labels"]:
        s = summary[label]
        for t, name, _ in TESTS:
            st = s["tests"][t]
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %d/%d |" % (
                label, name, _fig(st["isolated"]["avg"]), _fig(st["isolated"]["p99"]),
                _fig(st["congested"]["avg"]), _fig(st["congested"]["p99"]),
                _x(st["cif_avg"]), _x(st["cif_p99"]), s["ok"], s["runs"]))
    return "\n".join(lines) + "\n"


def _cfg(doc, key):
    """A config figure of the program, from the first run that printed it."""
    for runs in doc["results"].values():
        for r in runs:
            if key in r.get("config", {}):
                return r["config"][key]
    return "?"


def plot(doc, summary, path):
    """Bar chart of the 99% CIF, per test and label, log scale."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    labels = doc["labels"]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(labels) + 3), 4.5))
    width = 0.8 / len(TESTS)
    for ti, (t, name, _) in enumerate(TESTS):
        ys = [summary[l]["tests"][t]["cif_p99"] or 0 for l in labels]
        xs = [i + (ti - (len(TESTS) - 1) / 2) * width for i in range(len(labels))]
        ax.bar(xs, [y if y > 0 else float("nan") for y in ys], width, label=name)
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=15)
    ax.set_ylabel("99% congestion impact factor (1 = none)")
    ax.set_title("Congestion impact, %s switch ports" % doc["params"]["rate"])
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _sysctl_cc(ns, value=None):
    cmd = ["ip", "netns", "exec", ns, "sysctl", "-n" if value is None else "-qw"]
    cmd.append("net.ipv4.tcp_congestion_control" + ("" if value is None else "=" + value))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    return r.stdout.strip() if r.returncode == 0 else None


def set_tcp_cc(names, cc):
    """Makes cc the TCP congestion control of every node; returns the
    previous settings {namespace: value} (to put back on a cluster that
    was already up)."""
    prev = {ns: _sysctl_cc(ns) for ns in names}
    for ns in names:
        if _sysctl_cc(ns, cc) is None:
            raise RuntimeError("cannot make TCP congestion control '%s' the default of %s "
                               "(allowed in a namespace: %s)" % (cc, ns, _allowed_cc()))
    return prev


def _allowed_cc():
    try:
        with open("/proc/sys/net/ipv4/tcp_allowed_congestion_control") as f:
            return f.read().strip()
    except OSError:
        return "?"


def _shm_locus():
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("locus")}
    except OSError:
        return set()


def in_use(paths):
    """The paths some process has open or mapped."""
    used = set()
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                try:
                    used.add(os.readlink("/proc/%s/fd/%s" % (pid, fd)))
                except OSError:
                    pass
            with open("/proc/%s/maps" % pid) as f:
                for line in f:
                    if "/dev/shm/" in line:
                        used.add(line.split(None, 5)[-1].strip())
        except OSError:
            continue
    return used & set(paths)


def _launcher_alive(name):
    """Whether the launcher of the job a /dev/shm/locus.<pid>-<hex>...
    file belongs to still runs: its files are its to remove then (another
    test's job may be running beside this one)."""
    m = re.match(r"locus\.(\d+)-", name)
    return bool(m) and os.path.exists("/proc/" + m.group(1))


def leftovers(before, settle=5.0):
    """The /dev/shm/locus* files new since `before` that no process uses
    and whose job's launcher is gone, and that are still there `settle`
    seconds on: what a job left behind (a job of another test ending beside
    this one has unmapped its files a moment before it removes them)."""
    def candidates():
        new = ["/dev/shm/" + n for n in _shm_locus() - before if not _launcher_alive(n)]
        busy = in_use(new)
        return [p for p in new if p not in busy]
    stale = candidates()
    deadline = time.monotonic() + settle
    while stale and time.monotonic() < deadline:
        time.sleep(0.25)
        stale = [p for p in candidates() if p in stale]
    return stale


def clean_shm(before):
    """Removes what a killed run left (leftovers since `before`); returns
    how many."""
    n = 0
    for p in leftovers(before):
        try:
            os.unlink(p) if not os.path.isdir(p) else os.rmdir(p)
            n += 1
        except OSError:
            pass
    return n


def program_args(quick):
    return ["--quick"] if quick else []


def run(args, found, exes):
    """Runs every label args.repeats times, interleaved; returns the results
    document (without meta)."""
    labels = labels_for(found, args.qos_modes)
    results = {l: [] for l, _, _ in labels}
    pargs = program_args(args.quick)
    np = args.nodes * args.ppn
    with cluster.Cluster(NAME, args.nodes, 1, args.rate, SUBNET, qos=True) as cl:
        nd = cl.nodes()
        prev = set_tcp_cc(nd.names, args.tcp_cc) if args.tcp_cc else {}
        shm_start = _shm_locus()
        try:
            for rep in range(args.repeats):
                for label, m, env in labels:
                    argv, env2 = nd.command(m, np, 1, exes[m.name], pargs, ppn=args.ppn,
                                            pin=False)
                    e = dict(os.environ)
                    e.pop("LOCUS_QOS", None)   # the label says which
                    e.update(env2)
                    e.update(env)
                    shm_before = _shm_locus()
                    rc, out, err, secs, hung = runner.run_watched(
                        argv, e, args.timeout, complete=lambda s: "congestion: done" in s,
                        grace=EXIT_GRACE)
                    res = parse_run(out) if rc == 0 else None
                    if rc is None or hung:
                        nd.kill_strays()
                        clean_shm(shm_before)
                    if res is None:
                        runner.log("%s rep %d: failed (rc %s): %s" % (
                            label, rep + 1, rc, _first_error(err or out)))
                        res = {"failed": True, "rc": rc}
                    else:
                        res["wall_s"] = round(secs, 3)
                        if hung:
                            res["hung_at_exit"] = True
                        t = res["tests"]
                        runner.log("%-15s rep %d: lat %s -> %s us (99%%), bw %s -> %s MB/s, "
                                   "congestors %.1f MB/s, %.0f s" % (
                                       label, rep + 1, _fig(t["lat"]["isolated"].get("p99")),
                                       _fig(t["lat"]["congested"].get("p99")),
                                       _fig(t["bw"]["isolated"].get("avg")),
                                       _fig(t["bw"]["congested"].get("avg")),
                                       res["bulk"].get("congestor", {}).get("MBps", 0), secs))
                    results[label].append(res)
        except BaseException:
            # Interrupted mid-run: the job goes now (the cluster's `down`
            # would kill it too, but not remove what it left in /dev/shm).
            nd.kill_strays()
            time.sleep(0.5)
            clean_shm(shm_start)
            raise
        finally:
            if not cl.built:
                for ns, v in prev.items():
                    if v:
                        _sysctl_cc(ns, v)
        meta_cluster = cl.describe()
    meta_cluster["tcp_cc"] = args.tcp_cc or "default"
    return {"labels": [l for l, _, _ in labels], "results": results, "cluster": meta_cluster,
            "params": {"nodes": args.nodes, "ppn": args.ppn, "rate": args.rate,
                       "tcp_cc": args.tcp_cc, "qos_modes": list(args.qos_modes),
                       "program_args": pargs, "timeout_s": args.timeout,
                       "exit_grace_s": EXIT_GRACE}}


def _first_error(text):
    for line in text.splitlines():
        if "congestion:" in line or "locus:" in line or "locusrun:" in line or \
                "error" in line.lower():
            return line.strip()[:300]
    return text[-300:].strip()

