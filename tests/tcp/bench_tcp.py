#!/usr/bin/env python3
"""bench_tcp.py --build BUILD [--out DIR] [--repeats N] [--scenarios LIST]
                [--rate RATE] [--mpis LIST] [--quick]

osu_latency and osu_bw over TCP, Locus against Open MPI and MPICH on the
same path, every MPI forced onto TCP (tools/locusbench/cluster.py tcp_only):
  Locus    LOCUS_TRANSPORTS=self,tcp (rails: locusrun --rails)
  Open MPI --mca btl tcp,self, btl_tcp_if_include = the same interfaces
  MPICH    (ch4:ucx) MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self, UCX_NET_DEVICES

Scenarios:
  loopback  2 ranks on this host (traffic to the host's own address)
  veth1     one rank in each of two network namespaces, one veth rail,
            started as on a two-node cluster (the launch of `locus bench
            compare --nodes`: each launcher on node a, its daemons through
            tools/locusbench/netns_rsh; ranks pinned to distinct cores)
  veth2     the same with two rails (striping)
The veth rails are shaped with HTB at RATE (default 200mbit) each way, so
the wire is the bottleneck, not the CPU (on the 2-core VM, 1gbit rails with
GSO off moved only 35-40 MB/s for every MPI: the kernel, not the wire, was
the limit). Every rank has a core of its own (loopback: locusrun's
default, --bind-to core, -bind-to core; veth: pin_rank): unbound ranks that
spin may share one core and then each waits out the other's time slice.

The MPIs run interleaved, N repeats each; tables show medians. Writes
OUT/results.json (every run, per-size values, interface byte counters) and
OUT/README.md. Namespaces are always deleted; every run has a timeout.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import netns  # noqa: E402
from locusbench import cluster  # noqa: E402
from locusbench.mpis import Mpi  # noqa: E402
from locusbench.runner import run_watched  # noqa: E402

BENCH = os.path.join(ROOT, "bench")


def die(msg):
    print("bench_tcp: " + msg, file=sys.stderr)
    sys.exit(2)


def build(mpi, mpicc, prog, outdir):
    exe = os.path.join(outdir, "%s_%s" % (prog, mpi))
    src = [os.path.join(BENCH, f) for f in (prog + ".c", "osu_common.c", "bench_util.c")]
    r = subprocess.run([mpicc, "-O2", "-o", exe] + src, capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        die("cannot build %s with %s: %s" % (prog, mpicc, r.stderr.strip()[:300]))
    return exe


EXIT_GRACE = 3.0


def _has_json(text):
    return any(l.startswith("{") and l.rstrip().endswith("}") for l in text.splitlines())


def plain_iface():
    out = netns.sh(["ip", "-o", "-4", "addr", "show", "up"]).stdout
    for line in out.splitlines():
        name = line.split()[1].split("@")[0]
        if name != "lo":
            return name
    return "lo"


class Runner:
    def __init__(self, args, tmp):
        self.a = args
        self.tmp = tmp
        self.net = None
        self.nodes = None
        self.mpis = {"locus": Mpi("locus", "", os.path.join(args.build, "bin", "locusrun")),
                     "openmpi": Mpi("openmpi", "", "mpirun.openmpi"),
                     "mpich": Mpi("mpich", "", "mpiexec.mpich")}

    def set_net(self, net):
        # The two namespaces as a two-node cluster: the launch across them is
        # `locus bench compare --nodes`'s (tools/locusbench/cluster.py).
        self.net = net
        self.nodes = cluster.Nodes([net.ns["a"], net.ns["b"]], net.addr("a", 0),
                                   net.addr("a", 0).rsplit(".", 1)[0] + ".0/24")

    def command(self, mpi, scen, exe, opts):
        """(argv, env) of one run."""
        env = dict(os.environ)
        if scen != "loopback":
            argv, extra = self.nodes.command(self.mpis[mpi], 2, {"veth1": 1, "veth2": 2}[scen],
                                             exe, opts)
            env.update(extra)
            return argv, env
        args, extra = cluster.tcp_only(mpi, [self.a.iface])
        env.update(extra)
        if mpi == "locus":
            return [self.mpis[mpi].launcher, "-n", "2", exe] + opts, env
        if mpi == "openmpi":
            return ["mpirun.openmpi", "--allow-run-as-root", "-np", "2", "--bind-to", "core"] + \
                args + [exe] + opts, env
        return ["mpiexec.mpich", "-bind-to", "core", "-n", "2", exe] + opts, env

    def run(self, mpi, scen, exe, opts):
        argv, env = self.command(mpi, scen, exe, opts + ["--json"])
        before = self.net.counters() if self.net else None
        # The runner of `locus bench`: its own process group, killed on a
        # timeout; a job that printed its JSON result and then hangs at exit
        # (MPICH over UCX/TCP, now and then, in MPI_Finalize) is killed after
        # a grace and kept.
        rc, out, err, _, hung = run_watched(argv, env, self.a.timeout, _has_json, EXIT_GRACE)
        if rc is None or hung:
            if self.nodes:
                self.nodes.kill_strays()  # daemons and ranks in other process groups
        if rc is None:
            out, rc, err = "", -1, "timeout after %d s" % self.a.timeout
        res = {"mpi": mpi, "scenario": scen, "argv": argv, "rc": rc}
        js = [l for l in out.splitlines() if l.startswith("{")]
        if rc != 0 or not js:
            res["error"] = (err or out)[-500:]
            print("  %s %s: FAILED (%s)" % (mpi, scen, res["error"].strip()[-200:]), flush=True)
            return res
        res["result"] = json.loads(js[-1])
        if hung:
            res["hung_at_exit"] = "killed %.0f s after its output" % EXIT_GRACE
            print("  %s %s: hung at exit, %s" % (mpi, scen, res["hung_at_exit"]), flush=True)
        if before:
            after = self.net.counters()
            res["tx_bytes"] = {"%s/eth%d" % k: after[k] - before[k] for k in after}
        return res


def per_size(runs, key, pick):
    by = {}
    for r in runs:
        for row in r.get("result", {}).get("rows", []):
            by.setdefault(row["bytes"], []).append(row[key])
    return {b: pick(v) for b, v in sorted(by.items())}


def ratio_summary(vals, mpis, better):
    """Median over sizes of the per-size ratio Locus vs each peer."""
    out = {}
    for p in mpis:
        if p == "locus":
            continue
        xs = [(vals[p][s] / vals["locus"][s] if better == "low" else vals["locus"][s] / vals[p][s])
              for s in vals.get("locus", {}) if s in vals[p] and vals["locus"][s] and vals[p][s]]
        if xs:
            out[p] = statistics.median(xs)
    return out


def table(scen, bench, key, better, allruns, mpis):
    runs = [r for r in allruns if r["scenario"] == scen and r.get("bench") == bench]
    med = {m: per_size([r for r in runs if r["mpi"] == m], key, statistics.median) for m in mpis}
    best = {m: per_size([r for r in runs if r["mpi"] == m], key, min if better == "low" else max)
            for m in mpis}
    sizes = sorted(set().union(*[set(v) for v in med.values()]))
    peers = [m for m in mpis if m != "locus"]
    unit = "us, lower is better" if better == "low" else "MB/s, higher is better"
    lines = ["### %s, %s (%s)" % (scen, bench, unit), "",
             "| bytes | " + " | ".join(mpis) + "".join(" | Locus x%s" % p for p in peers) + " |",
             "|---" * (1 + len(mpis) + len(peers)) + "|"]
    ratios = {p: [] for p in peers}
    for s in sizes:
        row = ["%d" % s] + ["%.2f" % med[m][s] if s in med[m] else "-" for m in mpis]
        for p in peers:
            loc, peer = med.get("locus", {}).get(s), med[p].get(s)
            if loc and peer:
                x = peer / loc if better == "low" else loc / peer
                ratios[p].append(x)
                row.append("%.2f" % x)
            else:
                row.append("-")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    summary = {p: statistics.median(v) for p, v in ratios.items() if v}
    return lines, med, summary, ratio_summary(best, mpis, better)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="Locus build folder (bin/locusrun, bin/mpicc)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "bench", "tcp"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scenarios", default="loopback,veth1,veth2")
    ap.add_argument("--rate", default="200mbit")
    ap.add_argument("--mpis", default="locus,openmpi,mpich")
    ap.add_argument("--timeout", type=int, default=150, help="seconds per run")
    ap.add_argument("--quick", action="store_true", help="few sizes and iterations (a smoke run)")
    ap.add_argument("--note", default="")
    ap.add_argument("--report", metavar="RESULTS_JSON",
                    help="only rewrite README.md in --out from an earlier results.json")
    a = ap.parse_args()
    if a.report:
        with open(a.report) as f:
            d = json.load(f)
        a.rate, a.opts, a.repeats = d["rate"], d["opts"], d["repeats"]
        a.iface, a.note = d["iface"], d["note"]
        sys.argv = d["argv"]
        runs = d["runs"]
        scens = [s for s in ("loopback", "veth1", "veth2") if any(r["scenario"] == s for r in runs)]
        write(a, d["mpis"], scens, runs, d["started"], d["load"][0], d["load"][1])
        return 0
    mpis = a.mpis.split(",")
    scens = a.scenarios.split(",")
    for s in scens:
        if s not in ("loopback", "veth1", "veth2"):
            die("unknown scenario '%s' (loopback, veth1, veth2)" % s)
    if a.repeats < 1:
        die("--repeats must be at least 1")
    if any(s.startswith("veth") for s in scens) and netns.usable():
        die("veth scenarios need network namespaces: %s" % netns.usable())
    a.build = os.path.abspath(a.build)
    a.iface = plain_iface()
    compilers = {"locus": os.path.join(a.build, "bin", "mpicc"), "openmpi": "mpicc.openmpi",
                 "mpich": "mpicc.mpich"}
    tmp = tempfile.mkdtemp(prefix="bench_tcp.")
    try:
        exes = {(m, p): build(m, compilers[m], p, tmp) for m in mpis
                for p in ("osu_latency", "osu_bw")}
        runner = Runner(a, tmp)
        a.opts = None
        opts = {
            "loopback": {"osu_latency": ["-m", "0:4194304"], "osu_bw": ["-m", "1:4194304"]},
            "veth": {"osu_latency": ["-m", "0:1048576", "-i", "20", "-x", "2"],
                     "osu_bw": ["-m", "1:1048576", "-i", "4", "-x", "1", "-W", "32"]},
        }
        if a.quick:
            for o in opts.values():
                o["osu_latency"] = ["-m", "0:65536", "-i", "50", "-x", "5"]
                o["osu_bw"] = ["-m", "1:65536", "-i", "5", "-x", "1"]
        a.opts = opts
        started = datetime.datetime.now().isoformat(timespec="seconds")
        load0 = os.getloadavg()
        allruns = []

        def sweep(scen):
            for rep in range(a.repeats):
                for bench in ("osu_latency", "osu_bw"):
                    for m in mpis:
                        o = opts["loopback" if scen == "loopback" else "veth"][bench]
                        print("%s rep %d %s %s" % (scen, rep + 1, bench, m), flush=True)
                        r = runner.run(m, scen, exes[(m, bench)], o)
                        r.update(bench=bench, repeat=rep)
                        allruns.append(r)
                        # Written after every run: a long sweep cut short keeps its data.
                        write(a, mpis, scens, allruns, started, load0, os.getloadavg())

        if "loopback" in scens:
            sweep("loopback")
        if any(s.startswith("veth") for s in scens):
            with netns.NsPair(rails=2, rate=a.rate) as net:
                runner.set_net(net)
                for s in scens:
                    if s.startswith("veth"):
                        sweep(s)
        write(a, mpis, scens, allruns, started, load0, os.getloadavg())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def write(a, mpis, scens, allruns, started, load0, load1):
    os.makedirs(a.out, exist_ok=True)
    md = ["# TCP transport: Locus vs Open MPI vs MPICH", "",
          "- date: %s; host: %s, %d CPUs; load average %.1f at start, %.1f at end%s" %
          (started, os.uname().nodename, os.cpu_count(), load0[0], load1[0],
           "; " + a.note if a.note else ""),
          "- command: `tests/tcp/bench_tcp.py %s`" % " ".join(sys.argv[1:]),
          "- repeats: %d, interleaved; values are medians; veth rails shaped to %s each way"
          % (a.repeats, a.rate),
          "- options: loopback %s; veth %s" % (
              " / ".join(" ".join(v) for v in a.opts["loopback"].values()),
              " / ".join(" ".join(v) for v in a.opts["veth"].values())),
          "- loopback interface: %s (every MPI told to use it)" % a.iface,
          "- `Locus xX`: how many times better Locus is than X (above 1: Locus better)", ""]
    summary = {}
    for scen in scens:
        for bench, key, better in (("osu_latency", "latency_us", "low"),
                                   ("osu_bw", "bandwidth_mb_s", "high")):
            lines, med, ratio, best = table(scen, bench, key, better, allruns, mpis)
            md += lines
            summary["%s/%s" % (scen, bench)] = {"medians": med, "median_ratio": ratio,
                                                 "best_of_ratio": best}
        if scen.startswith("veth"):
            md += ["Bytes sent per interface (both namespaces, one osu_bw run each):", ""]
            for r in allruns:
                if r["scenario"] == scen and r.get("bench") == "osu_bw" and r.get("repeat") == 0:
                    tx = sorted(r.get("tx_bytes", {}).items())
                    md.append("- %s: %s" % (r["mpi"], ", ".join(
                        "%s %.0f MB" % (k, v / 1e6) for k, v in tx)))
            md.append("")
    failed = [r for r in allruns if "error" in r]
    if failed:
        md += ["Failed runs: %d (see results.json)" % len(failed), ""]
    hung = [r for r in allruns if r.get("hung_at_exit")]
    if hung:
        md += ["Runs that hung at exit after their whole output (killed, numbers kept): %s"
               % ", ".join(sorted({"%s %s" % (r["mpi"], r["scenario"]) for r in hung})), ""]
    peers = [m for m in mpis if m != "locus"]
    md += ["## Summary", "",
           "Median over message sizes of the per-size ratio, from the medians of the "
           "repeats and from the best of the repeats (the best run is the least "
           "disturbed by the machine's other load).", "",
           "| scenario/benchmark | " + " | ".join("Locus x%s (medians)" % m for m in peers) +
           " | " + " | ".join("Locus x%s (best of %d)" % (m, a.repeats) for m in peers) + " |",
           "|---" * (1 + 2 * len(peers)) + "|"]
    for k, v in summary.items():
        cells = ["%.2f" % v[w][m] if m in v[w] else "-"
                 for w in ("median_ratio", "best_of_ratio") for m in peers]
        md.append("| %s | %s |" % (k, " | ".join(cells)))
    with open(os.path.join(a.out, "README.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"started": started, "load": [load0, load1], "rate": a.rate, "mpis": mpis,
                   "opts": a.opts, "repeats": a.repeats, "iface": a.iface, "note": a.note,
                   "argv": sys.argv, "summary": summary, "runs": allruns}, f, indent=1,
                  default=str)
    print("wrote %s/README.md and results.json" % a.out)


if __name__ == "__main__":
    sys.exit(main())
