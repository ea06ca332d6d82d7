"""Parsers on recorded outputs of every benchmark program (tests/bench/data)."""
import json
import os
import unittest

from locusbench import parsers

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def read(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


class ParserTest(unittest.TestCase):
    def test_osu_latency(self):
        p = parsers.parse_osu(read("osu_latency.txt"))
        self.assertEqual(p["benchmark"], "osu_latency")
        self.assertEqual(p["columns"], ["latency_us"])
        sizes = [r["bytes"] for r in p["rows"]]
        self.assertEqual(sizes, [0] + [1 << i for i in range(17)])
        self.assertTrue(all(r["latency_us"] > 0 for r in p["rows"]))

    def test_osu_bw_bibw(self):
        for name in ("osu_bw", "osu_bibw"):
            p = parsers.parse_osu(read(name + ".txt"))
            self.assertEqual(p["benchmark"], name)
            self.assertEqual([r["bytes"] for r in p["rows"]], [1 << i for i in range(17)])
            self.assertTrue(all(r["bandwidth_mb_s"] > 0 for r in p["rows"]))

    def test_osu_mbw_mr(self):
        p = parsers.parse_osu(read("osu_mbw_mr.txt"))
        self.assertEqual(p["benchmark"], "osu_mbw_mr")
        self.assertEqual((p["pairs"], p["window"]), (1, 64))
        self.assertEqual(p["columns"], ["bandwidth_mb_s", "messages_per_s"])
        for r in p["rows"]:
            # MB/s is the message rate times the size (both printed rounded).
            self.assertAlmostEqual(r["bandwidth_mb_s"], r["messages_per_s"] * r["bytes"] / 1e6,
                                   delta=0.01 + 1e-3 * r["bandwidth_mb_s"])

    def test_imb(self):
        tables = parsers.parse_imb(read("imb.txt"))
        names = {(t["benchmark"], t["processes"]) for t in tables}
        for b in ("PingPong", "PingPing"):
            self.assertIn((b, 2), names)
            self.assertNotIn((b, 3), names)
        for b in ("Sendrecv", "Exchange", "Barrier", "Bcast", "Allreduce", "Reduce",
                  "Allgather", "Alltoall"):
            self.assertIn((b, 2), names)
            self.assertIn((b, 3), names)
        by = {(t["benchmark"], t["processes"]): t for t in tables}
        self.assertEqual(by[("PingPong", 2)]["columns"],
                         ["bytes", "repetitions", "t_us", "mbytes_per_sec"])
        self.assertEqual(by[("Barrier", 3)]["columns"],
                         ["repetitions", "t_min_us", "t_max_us", "t_avg_us"])
        self.assertEqual(len(by[("Barrier", 3)]["rows"]), 1)
        self.assertEqual([r["bytes"] for r in by[("Allreduce", 2)]["rows"]], [0, 4, 8, 16])
        self.assertEqual([r["bytes"] for r in by[("Bcast", 2)]["rows"]], [0, 1, 2, 4, 8, 16])
        for t in tables:
            for r in t["rows"]:
                if "t_min_us" in r:
                    self.assertLessEqual(r["t_min_us"], r["t_avg_us"] + 0.01)
                    self.assertLessEqual(r["t_avg_us"], r["t_max_us"] + 0.01)
        # PingPong's Mbytes/sec is bytes / t[usec] (t printed to 0.01 us).
        for r in by[("PingPong", 2)]["rows"][1:]:
            lo = r["bytes"] / (r["t_us"] + 0.005) - 0.01
            hi = r["bytes"] / max(r["t_us"] - 0.005, 1e-9) + 0.01
            self.assertTrue(lo <= r["mbytes_per_sec"] <= hi, r)

    def test_imb_layout(self):
        """13-character columns and a rule of 13 x columns, as IMB prints."""
        text = read("imb.txt")
        lines = text.splitlines()
        i = lines.index("# Benchmarking PingPong ")
        self.assertEqual(lines[i - 1], "#" + "-" * 51)
        self.assertTrue(lines[i + 2].startswith("# ( 1 additional processes waiting"))
        head = lines[i + 4]
        self.assertEqual(head, "%13s%13s%13s%13s" % ("#bytes", "#repetitions", "t[usec]",
                                                      "Mbytes/sec"))
        self.assertIn("# All processes entering MPI_Finalize", text)

    def test_pingpong(self):
        p = parsers.parse_pingpong(read("pingpong.txt"))
        self.assertEqual([it["iter"] for it in p["iterations"]], [1, 2])
        it = p["iterations"][0]
        self.assertEqual([pt["bytes"] for pt in it["points"]], list(range(1000, 10001, 1000)))
        # 1/b is printed next to b.
        self.assertAlmostEqual(it["bandwidth_mb_s"], 1 / it["inv_bandwidth_s_per_mb"],
                               delta=0.02 * abs(it["bandwidth_mb_s"]))

    def test_pingpong_layout(self):
        """The classic Fortran layout: f8.0 lengths, f12.2 times."""
        lines = read("pingpong.txt").splitlines()
        self.assertIn("  least squares fit:  time = a + b * (msg length)", lines)
        self.assertIn("     message         observed          fitted", lines)
        self.assertIn("  length(bytes)     time(usec)       time(usec)", lines)
        rows = [l for l in lines if l.strip().endswith(tuple("0123456789")) and "." in l[:11]]
        self.assertTrue(rows)
        for l in rows:
            self.assertEqual(len(l), 3 + 8 + 5 + 12 + 5 + 12)
            self.assertEqual(l[10], ".")

    def test_pingpong_json(self):
        j = json.loads(read("pingpong.json"))
        self.assertEqual(j["benchmark"], "pingpong")
        self.assertEqual(len(j["iterations"][0]["points"]), 10)

    def test_stream(self):
        p = parsers.parse_stream(read("stream.txt"))
        self.assertEqual([r["function"] for r in p["rows"]], ["copy", "scale", "add", "triad"])
        self.assertTrue(p["validates"])
        self.assertEqual(len(p["placement"]), 1)
        for r in p["rows"]:
            self.assertLessEqual(r["min_time_s"], r["avg_time_s"])
            self.assertLessEqual(r["avg_time_s"], r["max_time_s"])

    def test_detect_and_errors(self):
        for name, kind in (("imb.txt", "imb"), ("pingpong.txt", "pingpong"),
                           ("stream.txt", "stream"), ("osu_bw.txt", "osu")):
            self.assertEqual(parsers.detect(read(name)), kind)
        with self.assertRaises(parsers.ParseError):
            parsers.parse_any("hello\n")
        with self.assertRaises(parsers.ParseError):
            parsers.parse_osu("# OSU MPI Latency Test\n# Size Latency (us)\n")
        truncated = read("osu_bw.txt").splitlines()
        truncated[-1] = truncated[-1].split()[0]   # a row cut in half
        with self.assertRaises(parsers.ParseError):
            parsers.parse_osu("\n".join(truncated))
        with self.assertRaises(parsers.ParseError):
            parsers.parse_stream(read("stream.txt").replace("Triad:", "Tri:"))


if __name__ == "__main__":
    unittest.main()
