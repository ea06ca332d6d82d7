"""`locus bench congestion`: parsing the program's lines, the percentile and
CIF rules, the summary over repeats, the tables, and the CLI's checks of bad
input (exit 2, one line) and --from, on synthetic runs."""
import json
import os
import tempfile
import unittest

from benchcli import assert_usage_errors, run_cli
from locusbench import congestion


def output(lat=(20.0, 40.0, 2000.0, 9000.0), ar=(15.0, 30.0, 3000.0, 12000.0),
           bw=(5.9, 5.5, 1.2, 0.9), congestors=5.95):
    """What congestion.c prints: (isolated avg, isolated p99, congested avg,
    congested p99) per test."""
    lines = ["congestion: config ranks 8 nodes 4 victim_nodes 2 hot_nodes 1 victims 2 sinks 2 "
             "congestors 4 bulk 131072 window 4 pattern incast seed 1"]
    for test, figs, units in (("lat", lat, "usec"), ("allreduce", ar, "usec"),
                              ("bw", bw, "MB/s")):
        for ph, (avg, p99) in (("isolated", figs[:2]), ("congested", figs[2:])):
            lines.append("congestion: result test %s phase %s n 100 avg %.3f p50 %.3f p99 %.3f "
                         "worst %.3f units %s" % (test, ph, avg, avg, p99, p99, units))
    lines += ["congestion: bulk role congestor ranks 4 bytes 61000000 seconds 10.000 "
              "rate_MBps %.3f" % congestors,
              "congestion: bulk role sink ranks 2 bytes 0 seconds 10.000 rate_MBps 0.000",
              "congestion: done seconds 15.000"]
    return "\n".join(lines) + "\n"


def document(runs_by_label):
    return {"labels": list(runs_by_label), "results": runs_by_label, "repeats": 3,
            "params": {"nodes": 4, "ppn": 2, "rate": "50mbit", "tcp_cc": "reno",
                       "qos_modes": ["off", "static"]}}


class ParseTest(unittest.TestCase):
    def test_lines(self):
        r = congestion.parse_run("noise\n" + output())
        self.assertEqual(r["config"]["victims"], 2)
        self.assertEqual(r["config"]["pattern"], "incast")
        self.assertEqual(r["tests"]["lat"]["isolated"]["avg"], 20.0)
        self.assertEqual(r["tests"]["lat"]["congested"]["p99"], 9000.0)
        self.assertEqual(r["tests"]["bw"]["congested"]["units"], "MB/s")
        self.assertEqual(r["tests"]["allreduce"]["isolated"]["n"], 100)
        self.assertEqual(r["bulk"]["congestor"]["MBps"], 5.95)
        self.assertEqual(r["bulk"]["congestor"]["ranks"], 4)
        self.assertEqual(r["seconds"], 15.0)

    def test_incomplete_runs_are_none(self):
        text = output()
        self.assertIsNone(congestion.parse_run(text.replace("congestion: done seconds 15.000",
                                                            "")))
        self.assertIsNone(congestion.parse_run(
            "\n".join(l for l in text.splitlines() if "test bw phase congested" not in l)))
        # a test with no samples prints n 0 and no figures: the run is kept,
        # its figures are missing
        r = congestion.parse_run(text.replace(
            "test bw phase congested n 100 avg 1.200 p50 1.200 p99 0.900 worst 0.900",
            "test bw phase congested n 0"))
        self.assertEqual(r["tests"]["bw"]["congested"], {"n": 0, "units": "MB/s"})


class RulesTest(unittest.TestCase):
    def test_percentile_nearest_rank(self):
        vals = list(range(1, 101))
        self.assertEqual(congestion.percentile(vals, 99), 99)
        self.assertEqual(congestion.percentile(vals, 100), 100)
        self.assertEqual(congestion.percentile(vals, 1), 1)
        self.assertEqual(congestion.percentile(list(reversed(vals)), 50), 50)
        self.assertEqual(congestion.percentile([7.0], 99), 7.0)
        self.assertEqual(congestion.percentile([3, None, 1, 2], 50), 2)
        self.assertIsNone(congestion.percentile([], 50))
        self.assertIsNone(congestion.percentile([None], 50))
        # the median of repeats is one run's own figure
        self.assertEqual(congestion.median([4.0, 1.0]), 1.0)
        self.assertEqual(congestion.median([4.0, 1.0, 9.0]), 4.0)

    def test_cif(self):
        self.assertAlmostEqual(congestion.cif(True, 20.0, 2000.0), 100.0)
        self.assertAlmostEqual(congestion.cif(False, 6.0, 1.5), 4.0)
        self.assertAlmostEqual(congestion.cif(True, 20.0, 20.0), 1.0)
        for iso, cong in ((None, 1.0), (1.0, None), (0.0, 1.0), (1.0, 0.0)):
            self.assertIsNone(congestion.cif(True, iso, cong))

    def test_labels(self):
        class M:
            def __init__(self, name):
                self.name = name
        got = congestion.labels_for([M("locus"), M("openmpi")], ["off", "static"])
        self.assertEqual([(l, e) for l, _, e in got],
                         [("locus-off", {"LOCUS_QOS": "off"}),
                          ("locus-static", {"LOCUS_QOS": "static"}), ("openmpi", {})])


class SummaryTest(unittest.TestCase):
    def doc(self):
        p = congestion.parse_run
        off = [p(output(lat=(20, 40, l, 4 * l))) for l in (1000.0, 3000.0, 2000.0)]
        static = [p(output(lat=(20, 40, 40, 80), ar=(15, 30, 30, 60), bw=(5.9, 5.5, 3.0, 2.75)))
                  for _ in range(2)] + [{"failed": True, "rc": 1}]
        return document({"locus-off": off, "locus-static": static,
                         "mpich": [{"failed": True, "rc": None}]})

    def test_medians_and_cif(self):
        s = congestion.summarize(self.doc())
        off = s["locus-off"]
        self.assertEqual((off["runs"], off["ok"]), (3, 3))
        self.assertEqual(off["tests"]["lat"]["congested"]["avg"], 2000.0)
        self.assertEqual(off["tests"]["lat"]["congested"]["p99"], 8000.0)
        self.assertAlmostEqual(off["tests"]["lat"]["cif_avg"], 100.0)
        self.assertAlmostEqual(off["tests"]["lat"]["cif_p99"], 200.0)
        self.assertAlmostEqual(off["tests"]["bw"]["cif_avg"], 5.9 / 1.2)
        self.assertAlmostEqual(off["congestor_MBps"], 5.95)
        st = s["locus-static"]
        self.assertEqual((st["runs"], st["ok"]), (3, 2))
        self.assertAlmostEqual(st["tests"]["lat"]["cif_avg"], 2.0)
        self.assertAlmostEqual(st["tests"]["bw"]["cif_p99"], 2.0)
        none = s["mpich"]
        self.assertEqual(none["ok"], 0)
        self.assertIsNone(none["tests"]["lat"]["cif_avg"])
        self.assertIsNone(none["congestor_MBps"])

    def test_markdown(self):
        doc = self.doc()
        text = congestion.markdown(doc, congestion.summarize(doc))
        self.assertIn("4 nodes x 2 ranks", text)
        self.assertIn("incast into 1 of them", text)
        self.assertIn("| locus-off | 100.0X | 200.0X |", text)
        self.assertIn("| locus-static | 2.0X | 2.0X |", text)
        self.assertIn("| mpich | — | — |", text)
        self.assertIn("| locus-off | RR two-sided lat (8 B) | 20.0 | 40.0 | 2000 | 8000 | "
                      "100.0X | 200.0X | 3/3 |", text)
        self.assertIn("| locus-static | RR two-sided BW+sync (128 KiB) | 5.90 | 5.50 | 3.00 | "
                      "2.75 | 2.0X | 2.0X | 2/3 |", text)
        # every table row has as many cells as its header
        for table in text.split("\n\n"):
            rows = [l for l in table.splitlines() if l.startswith("|")]
            if rows:
                self.assertEqual({r.count("|") for r in rows}, {rows[0].count("|")}, table)


class CliTest(unittest.TestCase):
    def test_bad_input_exits_2_with_one_line(self):
        assert_usage_errors(self, *(["congestion"] + a for a in (
            ["--nodes", "2"], ["--nodes", "x"], ["--ppn", "1"], ["--rate", "fast"],
            ["--qos-modes", "off,fast"], ["--qos-modes", "off,off"], ["--tcp-cc", "no such"],
            ["--from", "/nonexistent.json"], ["--mpi", "lam"])))

    def test_from_json_redraws(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "congestion.json")
            with open(path, "w") as f:
                json.dump(SummaryTest().doc(), f)
            p = run_cli("congestion", "--from", path, "--no-plots")
            self.assertEqual(p.returncode, 1, p.stderr)   # mpich: no run worked
            self.assertIn("no successful run under mpich", p.stderr)
            self.assertIn("| locus-off | 100.0X | 200.0X |", p.stdout)
            self.assertTrue(os.path.exists(os.path.join(d, "congestion.md")))
            with open(path, "w") as f:
                json.dump({"grid": []}, f)
            p = run_cli("congestion", "--from", path)
            self.assertEqual(p.returncode, 2)
            self.assertIn("not a congestion.json", p.stderr)


if __name__ == "__main__":
    unittest.main()
