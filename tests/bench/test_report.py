"""Report writer (Markdown, JSON, PNG) and runner helpers on recorded outputs."""
import json
import os
import shutil
import tempfile
import time
import unittest

from locusbench import report, runner, suites

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def read(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


def slot(runs, failures=()):
    return {"runs": runs, "extras": [{} for _ in runs], "failures": list(failures)}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="locus-bench-test-")
        cases = {c.id: c for c in suites.p2p()}
        self.lat, self.bw = cases["osu_latency"], cases["osu_bw"]
        # The recorded runs as "locus"; peers are that series scaled, so every
        # ratio in the report is known exactly.
        lat, _ = self.lat.measure(read("osu_latency.txt"))
        bw, _ = self.bw.measure(read("osu_bw.txt"))
        scale = lambda s, k: {x: v * k for x, v in s.items()}
        self.results = {
            "osu_latency": {"locus": slot([lat, scale(lat, 3.0), scale(lat, 1.0)]),
                            "slowpeer": slot([scale(lat, 2.0)]),
                            "fastpeer": slot([scale(lat, 0.5)], ["TIMEOUT after 9 s"])},
            "osu_bw": {"locus": slot([bw]), "slowpeer": slot([scale(bw, 0.25)]),
                       "fastpeer": slot([scale(bw, 4.0)])},
        }
        self.lat_series = lat
        self.labels = ["locus", "slowpeer", "fastpeer"]

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_median_over_repeats(self):
        med, _ = runner.aggregate(self.results["osu_latency"]["locus"])
        # runs are x1, x3, x1: the median is x1
        self.assertEqual(med, self.lat_series)
        self.assertEqual(runner.median([4, 1, 3, 2]), 2.5)
        self.assertIsNone(runner.median([]))

    def test_best_over_repeats(self):
        # runs are x1, x3, x1 of a latency: the best is x1 (the median too);
        # as a rate the best is x3 (the median x1)
        runs = self.results["osu_latency"]["locus"]
        best, _ = runner.aggregate(runs, "best", "lower")
        self.assertEqual(best, self.lat_series)
        most, _ = runner.aggregate(runs, "best", "higher")
        self.assertEqual(most, {x: 3.0 * v for x, v in self.lat_series.items()})
        med, _ = runner.aggregate(runs, "median", "higher")
        self.assertEqual(med, self.lat_series)
        self.assertEqual(runner.best([4, 1, 3], "higher"), 4)
        self.assertEqual(runner.best([4, 1, 3], "lower"), 1)
        self.assertIsNone(runner.best([]))
        s = report.summarize([self.lat], self.results, self.labels, "locus", "best")
        self.assertTrue(all(r["values"]["locus"] == self.lat_series[r["x"]] for r in s[0]["rows"]))

    def test_summary_ratios(self):
        s = report.summarize([self.lat, self.bw], self.results, self.labels, "locus")
        lat, bw = s
        for r in lat["rows"]:
            if r["values"]["locus"] > 0:
                self.assertAlmostEqual(r["advantage"]["slowpeer"], 2.0)
                self.assertAlmostEqual(r["advantage"]["fastpeer"], 0.5)
                self.assertEqual(r["best_peer"], "fastpeer")
                self.assertAlmostEqual(r["advantage_best"], 0.5)
        for r in bw["rows"]:
            self.assertAlmostEqual(r["advantage"]["slowpeer"], 4.0)
            self.assertAlmostEqual(r["advantage"]["fastpeer"], 0.25)
            self.assertEqual(r["best_peer"], "fastpeer")
        self.assertEqual(lat["failures"]["fastpeer"], ["TIMEOUT after 9 s"])

    def test_markdown_json_plots(self):
        s = report.summarize([self.lat, self.bw], self.results, self.labels, "locus")
        meta = {"title": "t", "repeats": 3, "mpis": [], "variants": {}}
        paths = report.write_all(s, meta, self.tmp, "compare", want_plots=True)
        with open(paths[0]) as f:
            md = f.read()
        self.assertIn("| message size | locus | slowpeer | fastpeer | best peer | Locus ×slowpeer"
                      " | Locus ×fastpeer | Locus ×best |", md)
        self.assertIn("| 4K |", md)
        self.assertIn("| 2.00 | 0.50 | 0.50 |", md)
        self.assertIn("fastpeer: 1 failed run(s): TIMEOUT after 9 s", md)
        with open(paths[1]) as f:
            doc = json.load(f)
        self.assertEqual([c["case"]["id"] for c in doc["cases"]], ["osu_latency", "osu_bw"])
        self.assertEqual(doc["cases"][0]["successful_runs"], {"locus": 3, "slowpeer": 1,
                                                              "fastpeer": 1})
        pngs = [p for p in paths if p.endswith(".png")]
        self.assertEqual(sorted(os.path.basename(p) for p in pngs),
                         ["osu_bw.png", "osu_latency.png", "p2p.png"])
        for p in pngs:
            with open(p, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_json_round_trip(self):
        """`locus bench report` redraws from the JSON: the same table comes back."""
        s = report.summarize([self.lat, self.bw], self.results, self.labels, "locus")
        meta = {"title": "t", "repeats": 3}
        paths = report.write_all(s, meta, self.tmp, "compare", want_plots=False)
        with open(paths[1]) as f:
            s2, meta2 = report.from_json(json.load(f))
        self.assertEqual(report.markdown(s2, meta2), report.markdown(s, meta))

    def test_without_reference(self):
        res = {"osu_bw": {k: v for k, v in self.results["osu_bw"].items() if k != "locus"}}
        s = report.summarize([self.bw], res, self.labels, "locus")
        self.assertIsNone(s[0]["reference"])
        md = report.markdown(s, {"title": "t"})
        self.assertNotIn("Locus ×", md.split("## ")[1])
        self.assertIn("best peer", md)

    def test_size_format(self):
        self.assertEqual([report.fmt_size(x) for x in (0, 1000, 1024, 65536, 4194304)],
                         ["0", "1000", "1K", "64K", "4M"])


class RunOneTest(unittest.TestCase):
    def test_timeout_kills_the_group(self):
        t0 = time.monotonic()
        rc, out, err, secs = runner.run_one(["sh", "-c", "sleep 30 & sleep 30"], None, 1)
        self.assertIsNone(rc)
        self.assertLess(time.monotonic() - t0, 10)

    def test_exit_status(self):
        rc, out, err, _ = runner.run_one(["sh", "-c", "echo hi; echo oops >&2; exit 3"], None, 10)
        self.assertEqual((rc, out, err), (3, "hi\n", "oops\n"))


if __name__ == "__main__":
    unittest.main()
