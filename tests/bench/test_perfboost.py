"""`locus bench perfboost`: reading NetPIPE's output file, osu_latency's
table and LAMMPS's log, the medians and ratios, the tables, and the CLI's
checks of bad input (exit 2, one line) and --from, on synthetic runs."""
import json
import os
import tempfile
import unittest

from benchcli import assert_usage_errors, run_cli
from locusbench import perfboost

LAMMPS_LOCUS = """Loop time of 2.26 on 2 procs for 100 steps with 32000 atoms
MPI version: Locus MPI 0.1.0 (MPI 5.0; transports: self, shm) (through its Open MPI ABI layer)
Total wall time: 0:00:02
"""
LAMMPS_OMPI = """Loop time of 2.09 on 2 procs for 100 steps with 32000 atoms
MPI version: Open MPI v4.1.4, package: Debian OpenMPI
"""


def document():
    rows = [{"group": "netpipe", "bench": "NetPIPE NPmpich2 (MPICH)", "figure": "latency, 1 B (us)",
             "key": "latency_us", "better": "lower", "locus": "np@locus", "ref": "np@mpich",
             "ref_name": "mpich"},
            {"group": "osu", "bench": "osu_latency, MPICH-ABI layer vs Locus native",
             "figure": "8 B latency (us)", "key": "latency_us", "better": "lower",
             "locus": "osu@mpich", "ref": "osu@locus", "ref_name": "locus-native",
             "target": 1.05}]
    res = {"np@locus": [0.4, 0.3, 0.5], "np@mpich": [0.5, 0.6, 0.5],
           "osu@mpich": [1.1, 1.0, 9.0], "osu@locus": [1.0, 1.0, 1.0]}
    results = {jid: {"side": jid.split("@")[1], "cmd": ["x"],
                     "runs": [{"latency_us": v} for v in vals]} for jid, vals in res.items()}
    results["np@mpich"]["runs"].append({"failed": "TIMEOUT after 120 s"})
    return {"rows": rows, "results": results, "repeats": 3, "skipped": ["LAMMPS: skipped, no lmp"],
            "params": {"netpipe_n": 200, "osu_iters": {"small": [100000, 1000]},
                       "lammps_box": 20, "lammps_steps": 100, "cores": 2}}


class ParseTest(unittest.TestCase):
    def test_netpipe_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".np", delete=False) as f:
            f.write("       1 20.000000   0.00000040\n       2 40.000000   0.00000040\n"
                    " 1048573 60000.000000   0.00013981\n 1048576 50000.000000   0.00016777\n")
        try:
            r = perfboost.parse_netpipe(f.name)
        finally:
            os.unlink(f.name)
        # 1 B at 20 Mbps: 8 bits / 20e6 bit/s = 0.4 us, from the Mbps column.
        self.assertAlmostEqual(r["latency_us"], 0.4)
        self.assertEqual(r["bw_1mib_mbps"], 50000.0)

    def test_netpipe_without_1mib(self):
        with tempfile.NamedTemporaryFile("w", suffix=".np", delete=False) as f:
            f.write("       1 20.000000   0.00000040\n")
        try:
            with self.assertRaises(ValueError):
                perfboost.parse_netpipe(f.name)
        finally:
            os.unlink(f.name)

    def test_osu(self):
        text = "# OSU MPI Latency Test\n# Size            Latency (us)\n8    0.83\n"
        self.assertEqual(perfboost.parse_osu(text, 8), {"latency_us": 0.83})
        with self.assertRaises(ValueError):
            perfboost.parse_osu(text, 1048576)

    def test_lammps_names_the_library(self):
        self.assertEqual(perfboost.parse_lammps(LAMMPS_LOCUS, True)["loop_s"], 2.26)
        self.assertEqual(perfboost.parse_lammps(LAMMPS_OMPI, False)["procs"], 2)
        # Locus's side must have run Locus, Open MPI's Open MPI.
        with self.assertRaises(ValueError):
            perfboost.parse_lammps(LAMMPS_OMPI, True)
        with self.assertRaises(ValueError):
            perfboost.parse_lammps(LAMMPS_LOCUS, False)


class SummaryTest(unittest.TestCase):
    def test_medians_ratios_and_tables(self):
        doc = document()
        s = perfboost.summarize(doc)
        self.assertAlmostEqual(s[0]["locus_v"], 0.4)
        self.assertAlmostEqual(s[0]["ref_v"], 0.5)
        self.assertAlmostEqual(s[0]["ratio"], 0.8)
        self.assertEqual(s[0]["n_ref"], "3/4")
        self.assertAlmostEqual(s[1]["ratio"], 1.1)
        text = perfboost.markdown(doc, s)
        self.assertIn("| NetPIPE NPmpich2 (MPICH) | latency, 1 B (us) | 0.4 | 0.5 | mpich | 0.800",
                      text)
        self.assertIn("1.100 (over the 5 % target)", text)
        self.assertIn("- LAMMPS: skipped, no lmp", text)
        self.assertIn("np@mpich: TIMEOUT after 120 s", text)


class CliTest(unittest.TestCase):
    def test_bad_input(self):
        assert_usage_errors(self, *(["perfboost"] + a for a in (
            ["--parts", "foo"], ["--parts", ""], ["--lammps-np", "two"], ["--netpipe-n", "-1"],
            ["--lammps-box", "0"], ["--from", "/nonexistent.json"])))

    def test_from_json_redraws(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "perfboost.json")
            with open(path, "w") as f:
                json.dump(document(), f)
            p = run_cli("perfboost", "--from", path, "--no-plots")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("Per-call cost of the layers", p.stdout)
            self.assertTrue(os.path.isfile(os.path.join(d, "perfboost.md")))


if __name__ == "__main__":
    unittest.main()
