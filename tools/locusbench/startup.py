"""`locus bench startup`: how long each MPI takes to start a job of P ranks on
N emulated nodes (network namespaces, scripts/cluster), and, for Locus, what
each address-exchange strategy (LOCUS_ADDR_EXCHANGE) costs; `--model` carries
the measured unit costs to larger machines (startup_model.py).

Every MPI launches the same program (bench/startup.c) the same way: its
launcher on node 0, its daemons started through netns_rsh on every node.
The program stamps the wall clock at the end of MPI_Init, after one
MPI_Alltoall (every pair has talked: connections made lazily are made) and
after MPI_Finalize; this tool stamps it just before it starts the launcher
and when the launcher exits. Runs of all configurations are interleaved, so
a noisy minute hits them alike; each figure is the median of the repeats.
"""
import json
import os
import re
import time

from . import cluster, runner

STRATEGIES = ("simple", "shm", "roots", "lazy", "fabric")
LINE = re.compile(r"startup: ranks (\d+) main_first ([\d.]+) init_done ([\d.]+) "
                  r"connected ([\d.]+)")
FIN = re.compile(r"startup: finalize_done ([\d.]+)")
# Its own cluster name and subnets, apart from the tests' and compare's.
NAME, SUBNET = "locus-su", 160
# Seconds a job may take after its figures are out (MPI_Finalize and the
# launcher's exit; MPICH 4.0's ch4:ucx now and then hangs in MPI_Finalize):
# then it is killed and its run kept without the exit time.
EXIT_GRACE = 3.0
RUN_TIMEOUT = 180


def layouts(nodes, ppns, max_ranks):
    """[(N, ppn)] with N*ppn <= max_ranks, fewest ranks first."""
    out = [(n, k) for n in nodes for k in ppns if n * k <= max_ranks]
    return sorted(out, key=lambda t: (t[0] * t[1], t[0]))


def first_error(text):
    """The first line of a failed run's output that says what went wrong
    (the proxies' served-counts lines come after it), else its end."""
    for line in text.splitlines():
        if ("locus:" in line or "locusrun:" in line) and "served" not in line:
            return line.strip()[:300]
    return text[-300:].strip()


def labels_for(found, strategies, fanouts=("auto",)):
    """[(label, mpi, env)]: Locus once per strategy and launch fanout
    (LOCUS_LAUNCH_FANOUT; "locus-roots-k0" is roots with every proxy started
    by locusrun, the suffix left out when only the default is run), each
    peer once."""
    out = []
    for m in found:
        if m.name == "locus":
            for s in strategies:
                for k in fanouts:
                    label = "locus-" + s + ("" if list(fanouts) == ["auto"] else "-k%s" % k)
                    out.append((label, m, {"LOCUS_ADDR_EXCHANGE": s,
                                           "LOCUS_STARTUP_REPORT": "json",
                                           "LOCUS_LAUNCH_FANOUT": str(k),
                                           "LOCUS_TRANSPORTS": "auto"}))
        else:
            out.append((m.name, m, {}))
    return out


def parse_run(stdout, stderr, t_launch, seconds):
    """The run's figures in seconds from the launch, or None."""
    m = LINE.search(stdout)
    if not m:
        return None
    res = {"ranks": int(m.group(1)),
           "main": float(m.group(2)) - t_launch,
           "init": float(m.group(3)) - t_launch,
           "connected": float(m.group(4)) - t_launch,
           "exit": seconds}
    f = FIN.search(stdout)
    if f:
        res["finalize"] = float(f.group(1)) - t_launch
    for line in stderr.splitlines():
        if line.startswith("locus-startup: "):
            rep = json.loads(line[len("locus-startup: "):])
            ph = rep["phases"]
            # The net phase of the last rank to arrive (the least over the
            # ranks): the exchange itself, without the wait for late ranks
            # that a machine with more ranks than cores adds to the slowest.
            res["locus"] = {
                "exchange_s": ph["net"].get("seconds_min", ph["net"]["seconds_max"]),
                "exchange_max_s": ph["net"]["seconds_max"],
                "init_s": ph["init"]["seconds_max"],
                "gets": ph["net"]["gets_sum"] + ph["run"]["gets_sum"],
                "gets_init": ph["init"]["gets_sum"],
                "puts": ph["net"]["puts_sum"],
                "fences": ph["init"]["fences_max"],
                "put_bytes": ph["init"]["put_bytes_sum"],
                "get_bytes": ph["init"]["get_bytes_sum"] + ph["run"]["get_bytes_sum"],
                "table_bytes": ph["net"]["table_bytes_sum"],
                "shm_s": ph["shm"]["seconds_max"],
                "shm_gets": ph["shm"]["gets_sum"],
                "pmi_s": ph["pmi"]["seconds_max"],
            }
    return res


def run(args, found, out_dir):
    """Runs the grid; returns the results document."""
    nodes = sorted({int(n) for n in args.nodes})
    grid = layouts(nodes, sorted({int(k) for k in args.ppn}), args.max_ranks)
    if not grid:
        raise ValueError("no layout with at most %d ranks" % args.max_ranks)
    labels = labels_for(found, args.strategies, getattr(args, "fanouts", None) or ("auto",))
    exes = args.exes
    results = {"%dx%d" % g: {l: [] for l, _, _ in labels} for g in grid}
    with cluster.Cluster(NAME, max(nodes), 1, None, SUBNET) as cl:
        nd = cl.nodes()
        for rep in range(args.repeats):
            for n, ppn in grid:
                key = "%dx%d" % (n, ppn)
                for label, m, env in labels:
                    argv, env2 = nd.command(m, n * ppn, 1, exes[m.name], [], ppn=ppn, pin=False)
                    e = dict(os.environ)
                    e.update(env2)
                    e.update(env)
                    t_launch = time.time()
                    rc, out, err, secs, hung = runner.run_watched(
                        argv, e, args.timeout, complete=lambda s: "init_done" in s,
                        grace=EXIT_GRACE)
                    res = parse_run(out, err, t_launch, secs) if rc == 0 else None
                    if rc is None or hung:
                        nd.kill_strays()
                    if res is None:
                        runner.log("%s %s: failed (rc %s): %s" % (key, label, rc,
                                                                  first_error(err or out)))
                        res = {"failed": True, "rc": rc}
                    elif hung:
                        res["hung_at_exit"] = True
                        res.pop("exit", None)
                    results[key][label].append(res)
                    runner.log("%s %-12s rep %d: init %.3f s, connected %.3f s, exit %.3f s%s"
                               % (key, label, rep + 1, res.get("init", -1),
                                  res.get("connected", -1), res.get("exit", -1),
                                  " (exchange %.4f s, %d gets)"
                                  % (res["locus"]["exchange_s"], res["locus"]["gets"])
                                  if "locus" in res else ""))
        meta_cluster = cl.describe()
    return {"grid": [list(g) for g in grid], "labels": [l for l, _, _ in labels],
            "results": results, "cluster": meta_cluster}


def median(vals):
    """The median of the values that are not None (None when none are)."""
    return runner.median([v for v in vals if v is not None])


def summarize(doc):
    """{layout: {label: {metric: median}}} over the repeats that worked."""
    out = {}
    for key, by_label in doc["results"].items():
        out[key] = {}
        for label, runs in by_label.items():
            ok = [r for r in runs if not r.get("failed")]
            s = {"runs": len(runs), "ok": len(ok)}
            for k in ("init", "connected", "finalize", "exit"):
                s[k] = median([r.get(k) for r in ok])
            for k in ("exchange_s", "gets", "table_bytes", "put_bytes", "shm_s", "init_s"):
                s[k] = median([r["locus"][k] for r in ok if "locus" in r])
            out[key][label] = s
    return out


def _ms(v):
    return "—" if v is None else ("%.0f" % (v * 1e3) if v >= 0.1 else "%.1f" % (v * 1e3))


def markdown(doc, summary):
    labels = doc["labels"]
    peers = [l for l in labels if not l.startswith("locus-")]
    mine = [l for l in labels if l.startswith("locus-")]
    lines = ["# Start-up: launch to the end of MPI_Init (ms, median of %d)" % doc["repeats"], "",
             "Layout NxK: N emulated nodes, K ranks each. 'ratio' is the best Locus "
             "strategy's launch-to-Init time over the best peer's (below 1: Locus faster).", "",
             "| layout | ranks | " + " | ".join(labels) + " | ratio |",
             "|---" * (len(labels) + 3) + "|"]
    for n, k in doc["grid"]:
        key = "%dx%d" % (n, k)
        s = summary[key]
        row = [_ms(s[l]["init"]) for l in labels]
        best_mine = min([s[l]["init"] for l in mine if s[l]["init"] is not None] or [None],
                        key=lambda v: v if v is not None else 1e9)
        best_peer = min([s[l]["init"] for l in peers if s[l]["init"] is not None] or [None],
                        key=lambda v: v if v is not None else 1e9)
        ratio = "%.2f" % (best_mine / best_peer) if best_mine and best_peer else "—"
        lines.append("| %s | %d | %s | %s |" % (key, n * k, " | ".join(row), ratio))
    lines += ["", "## Launch to every pair connected (after one MPI_Alltoall), to the end of "
              "MPI_Finalize and to the launcher's exit (ms)", "",
              "| layout | " + " | ".join("%s conn / fin / exit" % l for l in labels) + " |",
              "|---" * (len(labels) + 1) + "|"]
    for n, k in doc["grid"]:
        key = "%dx%d" % (n, k)
        s = summary[key]
        lines.append("| %s | %s |" % (key, " | ".join(
            "%s / %s / %s" % (_ms(s[l]["connected"]), _ms(s[l]["finalize"]), _ms(s[l]["exit"]))
            for l in labels)))
    if mine:
        lines += ["", "## Locus's address exchange (the net phase of MPI_Init as the last rank "
                  "to arrive sees it: the exchange without the wait for late ranks)", "",
                  "| layout | " + " | ".join("%s ms / gets" % l[6:] for l in mine)
                  + " | best / simple |", "|---" * (len(mine) + 2) + "|"]
        for n, k in doc["grid"]:
            key = "%dx%d" % (n, k)
            s = summary[key]
            cells = []
            for l in mine:
                e, g = s[l]["exchange_s"], s[l]["gets"]
                cells.append("%s / %s" % (_ms(e), "—" if g is None else "%d" % g))
            simple = s.get("locus-simple", {}).get("exchange_s")
            others = [s[l]["exchange_s"] for l in mine if l != "locus-simple"
                      and s[l]["exchange_s"] is not None]
            ratio = "%.2f" % (min(others) / simple) if simple and others else "—"
            lines.append("| %s | %s | %s |" % (key, " | ".join(cells), ratio))
    return "\n".join(lines) + "\n"


def plot(doc, summary, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    nodes = sorted({n for n, _ in doc["grid"]})
    styles = ["-", "--", ":", "-.", (0, (5, 1)), (0, (1, 3))]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, metric, title in ((axes[0], "init", "launch to end of MPI_Init"),
                              (axes[1], "connected", "launch to all pairs connected")):
        for li, label in enumerate(doc["labels"]):
            for ni, n in enumerate(nodes):
                pts = [(n * k, summary["%dx%d" % (n, k)][label][metric]) for nn, k in doc["grid"]
                       if nn == n and summary["%dx%d" % (n, k)][label][metric] is not None]
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, marker="o", markersize=3, color=colors[li % len(colors)],
                            linestyle=styles[ni % len(styles)],
                            label=label if ni == 0 else None)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel("seconds")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    for ni, n in enumerate(nodes):
        axes[1].plot([], [], color="gray", linestyle=styles[ni % len(styles)],
                     label="%d node%s" % (n, "s" if n > 1 else ""))
    axes[1].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
