"""What each suite runs: cases (program, ranks, arguments) and how to read a
number per message size out of each program's output."""
from . import parsers


class Case:
    """One measured curve: a program run on np ranks, one metric per x."""

    def __init__(self, cid, program, np, args, quick_args, fmt, extract, metric, better,
                 title, xlabel="message size (bytes)", categorical=False, env=None,
                 loglog=True):
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

    def argv(self, quick):
        return list(self.quick_args if quick else self.args)

    def measure(self, text):
        """Parses the program's output; returns ({x: value}, {extra: value})."""
        return self.extract(parsers.PARSERS[self.fmt](text))

    def describe(self):
        return {"id": self.id, "program": self.program, "np": self.np, "metric": self.metric,
                "better": self.better, "title": self.title, "xlabel": self.xlabel,
                "categorical": self.categorical, "loglog": self.loglog}


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
    for bench in ("Barrier", "Bcast", "Allreduce", "Alltoall"):
        for np in nps:
            quick = ["-npmin", str(np), "-msglog", "6", "-iter", "5", bench]
            sync = bench == "Barrier"
            cases.append(Case("imb_%s_np%d" % (bench, np), "imb", np,
                              ["-npmin", str(np), "-msglog", "20", "-time", "2", bench],
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


def stream():
    # One rank, one thread: every launcher binds it to one core the same way,
    # so the MPIs see the same memory. Local against remote NUMA memory is a
    # Locus placement question: `locus bench sweep mem-on=0,1 --bench stream`.
    return [Case("stream", "stream", 1, [], ["-n", "100k", "-t", "3"], "stream", _stream,
                 "best rate (MB/s)", "higher", "STREAM, 1 rank, 1 thread", xlabel="kernel",
                 categorical=True, env={"OMP_NUM_THREADS": "1"})]


SUITES = {
    "p2p": p2p,
    "mr": mr,
    "coll": coll,
    "imb": imb_p2p,
    "pingpong": pingpong,
    "stream": stream,
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
