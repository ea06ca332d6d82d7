#!/usr/bin/env python3
"""Runs every benchmark program briefly under one MPI (tiny sizes, few
repetitions) and checks what it prints: tables parse, sizes and columns are
the expected ones, the JSON forms load, bad input exits with status 2.

  run_programs.py --mpi mpich --work DIR             build with mpicc.mpich, run
  run_programs.py --mpi locus --prebuilt BENCH_DIR --locus-bin BIN_DIR
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from locusbench import congestion, fit, mpis, parsers, runner  # noqa: E402

TIMEOUT = 180


class Checker:
    def __init__(self, mpi, exes):
        self.mpi = mpi
        self.exes = exes
        self.failed = 0

    def run(self, prog, np, args, env=None, extra=()):
        e = dict(os.environ)
        e.update(self.mpi.local_env())
        e.update(env or {})
        cmd = self.mpi.launch_cmd(np, self.exes[prog], args, extra=extra)
        rc, out, err, secs = runner.run_one(cmd, e, TIMEOUT)
        return cmd, rc, out, err

    def check(self, name, fn):
        try:
            fn()
            print("ok    %s" % name)
        except Exception as exc:  # report every failure, keep going
            self.failed += 1
            print("FAIL  %s: %s" % (name, exc))

    def ok_run(self, prog, np, args, env=None, extra=()):
        cmd, rc, out, err = self.run(prog, np, args, env, extra)
        if rc != 0:
            raise AssertionError("%s exited %s; stderr: %s" % (" ".join(cmd), rc, err[-800:]))
        return out


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def pow2(lo, hi):
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s = s * 2 if s else 1
    return out


def checks(c):
    def pingpong():
        p = parsers.parse_pingpong(c.ok_run("pingpong", 2, ["--start", "1000", "--end", "3000",
                                                            "--step", "1000", "--reps", "10",
                                                            "--iter", "2"]))
        expect(len(p["iterations"]) == 2, "two iterations")
        for it in p["iterations"]:
            expect([q["bytes"] for q in it["points"]] == [1000, 2000, 3000], "lengths")
            a, b = fit.linear_fit([q["bytes"] for q in it["points"]],
                                  [q["time_us"] for q in it["points"]])
            expect(abs(a - it["latency_us"]) < 0.02 + 1e-3 * abs(a), "C fit a == Python fit a")
        j = json.loads(c.ok_run("pingpong", 2, ["--end", "2000", "--reps", "5", "--iter", "1",
                                                "--json"]))
        expect(j["benchmark"] == "pingpong" and len(j["iterations"][0]["points"]) == 2, "json")

    def imb():
        tables = parsers.parse_imb(c.ok_run("imb", 2, ["-msglog", "3", "-iter", "5"]))
        got = [t["benchmark"] for t in tables]
        expect(got == ["PingPong", "PingPing", "Sendrecv", "Exchange", "Barrier", "Bcast",
                       "Allreduce", "Reduce", "Reduce_scatter", "Allgather", "Alltoall",
                       "Scatter", "Gather"], "benchmarks: %s" % got)
        for t in tables:
            sizes = [r.get("bytes") for r in t["rows"]]
            want = {"Barrier": [None], "Allreduce": [0, 4, 8], "Reduce": [0, 4, 8],
                    "Reduce_scatter": [0, 4, 8]}.get(t["benchmark"], [0, 1, 2, 4, 8])
            expect(sizes == want, "%s sizes %s" % (t["benchmark"], sizes))

    def imb_groups():
        out = c.ok_run("imb", 3, ["-msglog", "1", "-iter", "3", "PingPong", "Allreduce"])
        expect("( 1 additional processes waiting in MPI_Barrier)" in out, "idle-rank line")
        got = [(t["benchmark"], t["processes"]) for t in parsers.parse_imb(out)]
        expect(got == [("PingPong", 2), ("Allreduce", 2), ("Allreduce", 3)], str(got))
        j = json.loads(c.ok_run("imb", 2, ["-msglog", "1", "-iter", "2", "-json", "Bcast"]))
        expect([r["bytes"] for r in j["results"][0]["rows"]] == [0, 1, 2], "imb json rows")

    def osu(prog, np, lo, hi, key, iters=3):
        def f():
            p = parsers.parse_osu(c.ok_run(prog, np, ["-m", "%d:%d" % (lo, hi), "-i",
                                                      str(iters), "-x", "1"]))
            expect(p["benchmark"] == prog, "title names %s" % prog)
            expect([r["bytes"] for r in p["rows"]] == pow2(lo, hi), "sizes")
            zero = [(r["bytes"], r[key]) for r in p["rows"] if not r[key] > 0]
            expect(not zero, "positive %s; not in rows %s" % (key, zero))
        return f

    def osu_json():
        j = json.loads(c.ok_run("osu_latency", 2, ["-m", "8", "-i", "3", "--json"]))
        expect([r["bytes"] for r in j["rows"]] == [0, 1, 2, 4, 8], "json sizes")

    def stream():
        # locusrun sets OMP_NUM_THREADS from --cpus-per-rank; the others
        # pass the environment on.
        extra = ["--cpus-per-rank", "2"] if c.mpi.name == "locus" else []
        p = parsers.parse_stream(c.ok_run("stream", 1, ["-n", "50k", "-t", "3"],
                                          {"OMP_NUM_THREADS": "2"}, extra))
        expect(p["validates"] is True, "solution validates")
        expect(len(p["placement"]) == 1 and "2 threads" in p["placement"][0],
               "placement line with 2 OpenMP threads: %s" % p["placement"])

    def congestion_one_node():
        # One node: two victims and two sinks, no congestor (the cluster
        # run, bench_congestion_quick, has them): the phases, the victims'
        # tests and the STOP/END protocol end cleanly, the lines parse.
        out = c.ok_run("congestion", 4, ["--quick"])
        r = congestion.parse_run(out)
        expect(r is not None, "congestion: incomplete output: %s" % out[-600:])
        expect((r["config"]["nodes"], r["config"]["victims"], r["config"]["sinks"],
                r["config"]["congestors"]) == (1, 2, 2, 0), "roles: %s" % r["config"])
        for t, _, _ in congestion.TESTS:
            for ph in congestion.PHASES:
                expect(r["tests"][t][ph]["n"] > 0 and r["tests"][t][ph]["avg"] > 0,
                       "%s %s: %s" % (t, ph, r["tests"][t][ph]))

    def io_bench():
        # Uneven blocks (3 ranks: a 1 x 3 grid, pieces under a page: two-phase)
        # and 2 ranks with pieces of 4 KiB and more (reads in place), both
        # directions, a hint; the program checks every value, and its file
        # is gone after.
        d = tempfile.mkdtemp(prefix="locus-io-bench-")
        try:
            # The small sizes as JSON (every digit): their MB/s in the
            # table's two decimals reads 0.00 when a loaded machine (a peer
            # busy-polling with more ranks than cores) takes a second.
            for np, sizes, want, js in ((3, "4k:64k", [4096, 16384, 65536], True),
                                        (2, "1M:4M", [1 << 20, 4 << 20], False)):
                for t in ("write", "read"):
                    out = c.ok_run("io_bench", np, [
                        "-d", d, "-t", t, "-m", sizes, "-i", "2", "-H", "cb_nodes=1"] +
                        (["--json"] if js else []))
                    p = json.loads(out) if js else parsers.parse_osu(out)
                    expect(p["benchmark"] == "io_bench", "title names io_bench")
                    expect([r["bytes"] for r in p["rows"]] == want, "sizes")
                    expect(all(r["bandwidth_mb_s"] > 0 for r in p["rows"]), "positive MB/s")
            expect(os.listdir(d) == [], "io_bench left %s" % os.listdir(d))
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def mt_rate():
        p = parsers.parse_osu(c.ok_run("mt_rate", 2, ["-t", "1,2", "-i", "5", "-x", "1"]))
        expect(p["benchmark"] == "mt_rate" and p["pairs"] == 1 and p["window"] == 64,
               "title, pairs and window: %s" % p)
        expect([r["bytes"] for r in p["rows"]] == [1, 2], "thread counts")
        expect(all(r["messages_per_s"] > 0 for r in p["rows"]), "positive rates")

    def bad_input():
        for prog, np, args, msg in (("pingpong", 2, ["--end", "5"], "pingpong: --end"),
                                    ("imb", 2, ["NoSuchBench"], "unknown benchmark"),
                                    ("osu_bw", 2, ["-m", "x"], "bad -m"),
                                    ("stream", 1, ["-n", "12"], "bad array size"),
                                    ("congestion", 2, ["--window", "0"], "usage: congestion"),
                                    ("congestion", 1, [], "the victim tests need 2"),
                                    ("io_bench", 2, ["-t", "append"], "bad -t"),
                                    ("io_bench", 2, ["-d", "/no/such/dir"], "cannot write"),
                                    ("mt_rate", 2, ["-t", "0"], "bad -t"),
                                    ("mt_rate", 3, [], "even number of ranks")):
            cmd, rc, out, err = c.run(prog, np, args)
            expect(rc == 2, "%s exit status %s, want 2" % (" ".join(cmd), rc))
            expect(msg in err, "%s: stderr lacks %r: %s" % (prog, msg, err[-300:]))

    c.check("pingpong: two fits, C fit equals Python fit, --json", pingpong)
    c.check("imb: all thirteen benchmarks, IMB sizes", imb)
    c.check("imb: groups 2 and 3, idle rank, -json", imb_groups)
    c.check("osu_latency 0..1K", osu("osu_latency", 2, 0, 1024, "latency_us"))
    # MB/s prints with two decimals, as OMB's does: 3 windows of 1-byte
    # messages print 0.00 once a peer that busy-polls loses its core for
    # 40 ms under a loaded ctest -j (MPICH did, in CI). From 8 bytes and 10
    # iterations a row must take over a second to print zero.
    c.check("osu_bw 8..1K", osu("osu_bw", 2, 8, 1024, "bandwidth_mb_s", 10))
    c.check("osu_bibw 8..1K", osu("osu_bibw", 2, 8, 1024, "bandwidth_mb_s", 10))
    c.check("osu_mbw_mr 1..64", osu("osu_mbw_mr", 2, 1, 64, "messages_per_s"))
    c.check("osu_latency --json", osu_json)
    c.check("stream: validates, OpenMP threads, placement", stream)
    c.check("congestion --quick on one node", congestion_one_node)
    c.check("io_bench: write and read, 2 and 3 ranks, checked, nothing left", io_bench)
    c.check("mt_rate: 1 and 2 threads per rank", mt_rate)
    c.check("bad input: exit 2 with the program's message", bad_input)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpi", required=True, choices=mpis.KNOWN)
    ap.add_argument("--work", help="build folder (when not --prebuilt)")
    ap.add_argument("--prebuilt", help="folder holding already built programs")
    ap.add_argument("--locus-bin", help="folder with locusrun and mpicc")
    a = ap.parse_args()
    m = mpis.find(a.mpi, a.locus_bin)
    if m is None:
        print("FAIL  %s not found" % a.mpi)
        return 1
    if a.prebuilt:
        exes = {p: os.path.join(a.prebuilt, p) for p in mpis.PROGRAMS}
        missing = [p for p, e in exes.items() if not os.access(e, os.X_OK)]
        if missing:
            print("FAIL  not built: %s" % ", ".join(missing))
            return 1
    else:
        exes = mpis.build(m, os.path.join(ROOT, "bench"), a.work, list(mpis.PROGRAMS),
                          lambda s: print("FAIL  " + s))
        if len(exes) != len(mpis.PROGRAMS):
            return 1
    c = Checker(m, exes)
    checks(c)
    print("%d failed" % c.failed)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
