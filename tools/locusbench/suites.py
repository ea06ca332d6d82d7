"""What each suite runs: cases (program, ranks, arguments) and how to read a
number per message size out of each program's output."""
from . import parsers


class Case:
    """One measured curve: a program run on np ranks, one metric per x."""

    def __init__(self, cid, program, np, args, quick_args, fmt, extract, metric, better,
                 title, xlabel="message size (bytes)", categorical=False, env=None,
                 loglog=True, rails=None, ppn=1):
        self.id = cid
        self.program = program
        self.np = np
        self.args = args
        self.quick_args = quick_args
        self.fmt = fmt
        self.extract = extract
        self.metric = metric
        self.better = better          # "lower" or "higher"
        self.title = title
        self.xlabel = xlabel
        self.categorical = categorical
        self.env = dict(env or {})    # set for every run of this case
        self.loglog = loglog
        self.rails = rails            # multi-node cases: network rails per rank
        self.ppn = ppn                # multi-node cases: ranks per node

    def argv(self, quick):
        return list(self.quick_args if quick else self.args)

    def measure(self, text):
        """Parses the program's output; returns ({x: value}, {extra: value})."""
        return self.extract(parsers.PARSERS[self.fmt](text))

    def complete(self, text, quick):
        """True once text (the output so far) holds the whole result: IMB's
        closing line, or the OSU row of the largest size asked for (-m)."""
        if self.program == "imb":
            return "All processes entering MPI_Finalize" in text
        argv = self.argv(quick)
        if not self.program.startswith("osu_") or "-m" not in argv:
            return False
        try:
            rows = parsers.parse_osu(text)["rows"]
        except parsers.ParseError:
            return False
        return rows[-1]["bytes"] == int(argv[argv.index("-m") + 1].split(":")[-1])

    def describe(self):
        d = {"id": self.id, "program": self.program, "np": self.np, "metric": self.metric,
             "better": self.better, "title": self.title, "xlabel": self.xlabel,
             "categorical": self.categorical, "loglog": self.loglog}
        if self.rails:
            d["rails"] = self.rails
        if self.ppn > 1:
            d["ppn"] = self.ppn
        return d


def _osu(key):
    def extract(p):
        return {r["bytes"]: r[key] for r in p["rows"]}, {}
    return extract


def _imb(bench, np, key):
    def extract(tables):
        for t in tables:
            if t["benchmark"].lower() == bench.lower() and t["processes"] == np:
                # Barrier has no #bytes column: one row, named after the operation.
                return {r.get("bytes", bench.lower()): r[key] for r in t["rows"]}, {}
        raise parsers.ParseError("no %s table for %d processes" % (bench, np))
    return extract


def _pingpong(p):
    last = p["iterations"][-1]
    series = {pt["bytes"]: pt["time_us"] for pt in last["points"]}
    return series, {"latency_us (a)": last["latency_us"],
                    "bandwidth_mb_s (1/b)": last["bandwidth_mb_s"]}


def _stream(p):
    return {r["function"]: r["best_rate_mb_s"] for r in p["rows"]}, {}


def p2p():
    return [
        Case("osu_latency", "osu_latency", 2, [], ["-m", "0:4096", "-i", "20", "-x", "2"], "osu",
             _osu("latency_us"), "latency (us)", "lower", "Ping-pong latency (osu_latency)"),
        Case("osu_bw", "osu_bw", 2, [], ["-m", "1:4096", "-i", "2", "-x", "1"], "osu",
             _osu("bandwidth_mb_s"), "bandwidth (MB/s)", "higher",
             "Streaming bandwidth, window 64 (osu_bw)"),
    ]


def mr():
    return [
        Case("osu_bibw", "osu_bibw", 2, [], ["-m", "1:4096", "-i", "2", "-x", "1"], "osu",
             _osu("bandwidth_mb_s"), "bandwidth (MB/s)", "higher",
             "Bidirectional bandwidth, window 64 (osu_bibw)"),
        Case("osu_mbw_mr", "osu_mbw_mr", 2, [], ["-m", "1:256", "-i", "2", "-x", "1"], "osu",
             _osu("messages_per_s"), "messages/s", "higher",
             "Message rate, 1 pair, window 64 (osu_mbw_mr)"),
    ]


def coll(nps=(2, 4, 8), quick_nps=(2, 4)):
    cases = []
    for bench in ("Barrier", "Bcast", "Allreduce", "Reduce", "Reduce_scatter", "Allgather",
                  "Alltoall", "Gather", "Scatter"):
        for np in nps:
            quick = ["-npmin", str(np), "-msglog", "6", "-iter", "5", bench]
            sync = bench == "Barrier"
            cases.append(Case("imb_%s_np%d" % (bench, np), "imb", np,
                              ["-npmin", str(np), "-msglog", "22", "-time", "2", bench],
                              quick, "imb", _imb(bench, np, "t_avg_us"), "t_avg (us)", "lower",
                              "IMB %s, %d ranks" % (bench, np), categorical=sync,
                              xlabel="operation" if sync else "message size (bytes)"))
            cases[-1].quick_np_ok = np in quick_nps
    return cases


def imb_p2p():
    cases = []
    for bench, key, metric, better in (("PingPong", "t_us", "t (us)", "lower"),
                                       ("PingPing", "t_us", "t (us)", "lower"),
                                       ("Sendrecv", "mbytes_per_sec", "Mbytes/sec", "higher"),
                                       ("Exchange", "mbytes_per_sec", "Mbytes/sec", "higher")):
        cases.append(Case("imb_%s" % bench, "imb", 2, ["-msglog", "22", bench],
                          ["-msglog", "8", "-iter", "10", bench], "imb",
                          _imb(bench, 2, key), metric, better, "IMB %s, 2 ranks" % bench))
    return cases


def pingpong():
    return [Case("pingpong", "pingpong", 2, [],
                 ["--start", "1000", "--end", "4000", "--step", "1000", "--reps", "20",
                  "--iter", "1"], "pingpong", _pingpong, "one-way time (us)", "lower",
                 "Least-squares ping-pong (1000..10000 bytes)", loglog=False)]


def threads():
    """MPI_THREAD_MULTIPLE: 8-byte message rate with 1, 2 and 4 threads per
    rank, one pair of ranks, each thread on its own communicator (mt_rate)."""
    return [Case("mt_rate", "mt_rate", 2, ["-t", "1,2,4"], ["-t", "1,2", "-i", "5", "-x", "1"],
                 "osu", _osu("messages_per_s"), "messages/s", "higher",
                 "Message rate, 8 B, window 64, T threads per rank, 1 pair (mt_rate)",
                 xlabel="threads per rank", loglog=False)]


def _io_case(cid, np, d, t, sizes, quick_sizes, title, hints=(), **kw):
    h = [w for k in hints for w in ("-H", k)]
    return Case(cid, "io_bench", np, ["-d", d, "-t", t, "-m", sizes] + h,
                ["-d", d, "-t", t, "-m", quick_sizes, "-i", "2"] + h, "osu",
                _osu("bandwidth_mb_s"), "bandwidth (MB/s)", "higher", title,
                xlabel="array size (bytes)", **kw)


def io():
    """Collective write and read of a 2-D block-distributed array of
    doubles (io_bench), 2 ranks (a 1 x 2 grid: every rank's part of the
    file is one piece per row), 1 MiB to 1 GiB, on /tmp (the disk's page
    cache) and on /dev/shm (tmpfs), each MPI's MPI-IO with its defaults."""
    cases = []
    for d, where in (("/tmp", "tmp"), ("/dev/shm", "shm")):
        for t in ("write", "read"):
            cases.append(_io_case("io_%s_%s" % (t, where), 2, d, t, "1M:1G", "64k:1M",
                                  "MPI-IO collective %s, 2-D blocks, 2 ranks, %s" % (t, d)))
    return cases


def stream():
    # One rank, one thread: every launcher binds it to one core the same way,
    # so the MPIs see the same memory. Local against remote NUMA memory is a
    # Locus placement question: `locus bench sweep mem-on=0,1 --bench stream`.
    return [Case("stream", "stream", 1, [], ["-n", "100k", "-t", "3"], "stream", _stream,
                 "best rate (MB/s)", "higher", "STREAM, 1 rank, 1 thread", xlabel="kernel",
                 categorical=True, env={"OMP_NUM_THREADS": "1"})]


def cluster(nodes=4, rails=2, shaped=True):
    """Multi-node cases (`compare --nodes N`), one rank per node, every MPI
    on TCP over `rails` rails: {suite: [Case]}. Point-to-point runs use two
    nodes, message rate and collectives all N (message rate: an even count).
    Sizes and counts keep a run to seconds on links shaped to a few hundred
    Mbit/s (window 8 of 1 MiB is 8 MiB in flight, far above the links'
    bandwidth-delay product). Unshaped links (`--rate ''`) move a window
    in microseconds: there 2 windows a size would measure the first
    messages' set-up, so bandwidth runs 200 windows a size."""
    def nr(r):
        return "%d rail%s" % (r, "s" if r > 1 else "")
    where = "%d nodes, %s" % (nodes, nr(rails))
    bw = ["-m", "1:1048576", "-i", "2", "-x", "1", "-W", "8"] if shaped else \
        ["-m", "1:1048576", "-i", "200", "-x", "10", "-W", "8"]
    bw_quick = ["-m", "1:65536", "-i", "2", "-x", "1", "-W", "4"]

    def bw_case(r):
        return Case("osu_bw_%drail" % r, "osu_bw", 2, bw, bw_quick, "osu", _osu("bandwidth_mb_s"),
                    "bandwidth (MB/s)", "higher",
                    "Bandwidth, window 8 (osu_bw), 2 nodes, %s" % nr(r), rails=r)
    p2p_cases = [
        Case("osu_latency", "osu_latency", 2, ["-m", "0:4096", "-i", "200", "-x", "20"],
             ["-m", "0:1024", "-i", "20", "-x", "2"], "osu", _osu("latency_us"), "latency (us)",
             "lower", "Ping-pong latency (osu_latency), 2 nodes, %s" % nr(rails), rails=rails),
        bw_case(rails)] + ([bw_case(1)] if rails > 1 else [])
    pairs = nodes - nodes % 2
    mr_cases = [
        Case("osu_bibw", "osu_bibw", 2, bw, bw_quick, "osu", _osu("bandwidth_mb_s"),
             "bandwidth (MB/s)", "higher",
             "Bidirectional bandwidth, window 8 (osu_bibw), 2 nodes, %s" % nr(rails),
             rails=rails),
        Case("osu_mbw_mr_np%d" % pairs, "osu_mbw_mr", pairs,
             ["-m", "1:4096", "-i", "10", "-x", "2"], ["-m", "1:256", "-i", "5", "-x", "1"],
             "osu", _osu("messages_per_s"), "messages/s", "higher",
             "Message rate, window 64 (osu_mbw_mr), %d nodes in %d pairs, %s"
             % (pairs, pairs // 2, nr(rails)), rails=rails)]
    coll_cases = []
    for bench in ("Allreduce", "Alltoall"):
        coll_cases.append(Case(
            "imb_%s_np%d" % (bench, nodes), "imb", nodes,
            ["-npmin", str(nodes), "-msglog", "20", "-iter", "20", "-time", "0.05", bench],
            ["-npmin", str(nodes), "-msglog", "10", "-iter", "5", "-time", "0.2", bench], "imb",
            _imb(bench, nodes, "t_avg_us"), "t_avg (us)", "lower",
            "IMB %s, %s" % (bench, where), rails=rails))
    # MPI-IO across nodes: 2 ranks on each of 2 nodes (a 2 x 2 grid, each
    # node's ranks holding half the rows), the file on the nodes' shared
    # /tmp; with each MPI's default aggregators, then with one for the job
    # (cb_nodes=1), whose file domain draws half the data over the network.
    io_cases = []
    for hints, tag, what in (((), "", "default aggregators"),
                             (("cb_nodes=1",), "_1agg", "one aggregator (cb_nodes=1)")):
        for t in ("write", "read"):
            io_cases.append(_io_case(
                "io_%s%s_2x2" % (t, tag), 4, "/tmp", t, "1M:64M", "64k:1M",
                "MPI-IO collective %s, 2 nodes x 2 ranks, %s, %s" % (t, what, nr(rails)),
                hints, rails=rails, ppn=2))
    return {"p2p": p2p_cases, "mr": mr_cases, "coll": coll_cases, "io": io_cases}


# Not in "all": only when named. MPICH's MPI-IO reads over its UCX TCP path
# took over 120 s here at 1 MiB and more, so `all` would fail for want of
# MPICH's numbers.
CLUSTER_OPT_IN = ("io",)


def cluster_cases_for(names, nodes, rails, shaped=True):
    """The multi-node cases of the named suites (p2p, mr, coll, io; all:
    every one but io)."""
    by_suite = cluster(nodes, rails, shaped)
    if "all" in names:
        names = [n for n in by_suite if n not in CLUSTER_OPT_IN] + \
                [n for n in names if n in CLUSTER_OPT_IN]
    out = []
    for n in names:
        if n not in by_suite:
            raise ValueError("unknown suite '%s' with --nodes (choose from %s, all)"
                             % (n, ", ".join(by_suite)))
        out += by_suite[n]
    return out


SUITES = {
    "p2p": p2p,
    "mr": mr,
    "coll": coll,
    "imb": imb_p2p,
    "pingpong": pingpong,
    "stream": stream,
    "io": io,
    "threads": threads,
}


def cases_for(names, quick):
    """The cases of the named suites ("all" = every suite), in order. Quick
    mode drops collective runs above 4 ranks."""
    if "all" in names:
        names = list(SUITES)
    out = []
    for n in names:
        if n not in SUITES:
            raise ValueError("unknown suite '%s' (choose from %s, all)" % (n, ", ".join(SUITES)))
        for c in SUITES[n]():
            if quick and not getattr(c, "quick_np_ok", True):
                continue
            out.append(c)
    return out
