"""The runner's LOCUS_BENCH_* defaults equal the rows of tunables_bench.def
(the table `locus info` prints), and the CLI rejects bad input with status 2."""
import os
import re
import subprocess
import sys
import unittest

from locusbench import tunables

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class TunablesTest(unittest.TestCase):
    def test_same_as_def_file(self):
        with open(os.path.join(ROOT, "src", "util", "tunables_bench.def")) as f:
            rows = re.findall(r'^LOCUS_TUNABLE\("([^"]+)",\s*"([^"]*)"', f.read(), re.M)
        self.assertEqual(dict(rows), tunables.DEFAULTS)

    def test_env_overrides(self):
        os.environ["LOCUS_BENCH_REPEATS"] = "7"
        try:
            self.assertEqual(tunables.get_int("LOCUS_BENCH_REPEATS"), 7)
            os.environ["LOCUS_BENCH_REPEATS"] = "x"
            with self.assertRaises(ValueError):
                tunables.get_int("LOCUS_BENCH_REPEATS")
        finally:
            del os.environ["LOCUS_BENCH_REPEATS"]


class CliTest(unittest.TestCase):
    def run_cli(self, *args):
        return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "locus_bench.py")]
                              + list(args), capture_output=True, text=True, timeout=60)

    def test_bad_input_exits_2_with_one_line(self):
        for args in (["compare", "--suite", "nope"], ["compare", "--mpi", "lam"],
                     ["compare", "--variants", "fast"], ["sweep", "NOEQUALS"],
                     ["sweep", "LOCUS_SHM_EAGER_MAX=1k", "--bench", "nope"], ["frobnicate"],
                     ["compare", "--repeats", "0", "--mpi", "mpich"],
                     ["compare", "--suite", "coll", "--np", "two", "--mpi", "mpich"],
                     ["compare", "--suite", "coll", "--np", "3", "--mpi", "mpich"]):
            r = self.run_cli(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, (args, r.stderr))
            self.assertTrue(r.stderr.startswith("locus bench: "), r.stderr)

    def test_list(self):
        r = self.run_cli("list")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("p2p       osu_latency, osu_bw", r.stdout)


if __name__ == "__main__":
    unittest.main()
