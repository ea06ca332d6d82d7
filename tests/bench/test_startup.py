"""`locus bench startup`: parsing a run's output, the summary, the model's fit
(it must recover unit costs a synthetic run was made from) and predictions,
and the CLI's checks of bad input (exit 2, one line)."""
import json
import os
import unittest

from benchcli import assert_usage_errors, run_cli
from locusbench import startup, startup_model


REPORT = {"ranks": 4, "nodes": 2, "strategy": "roots", "launch_to_init_s": 0.03,
          "phases": {p: {"%s_%s" % (m, a): 0 for m in ("seconds", "puts", "gets", "fences",
                                                       "put_bytes", "get_bytes", "table_bytes")
                         for a in ("sum", "max")}
                     for p in ("pmi", "nodemap", "shm", "net", "rest", "run", "init")}}


class ParseTest(unittest.TestCase):
    def test_run_lines(self):
        rep = json.loads(json.dumps(REPORT))
        rep["phases"]["net"].update(seconds_max=0.002, gets_sum=2, puts_sum=2,
                                    table_bytes_sum=880)
        rep["phases"]["init"].update(seconds_max=0.005, fences_max=3)
        out = ("startup: ranks 4 main_first 100.010 init_done 100.030 connected 100.031\n"
               "startup: finalize_done 100.040\n")
        err = "noise\nlocus-startup: %s\n" % json.dumps(rep)
        r = startup.parse_run(out, err, 100.0, 0.05)
        self.assertEqual(r["ranks"], 4)
        self.assertAlmostEqual(r["init"], 0.030, places=6)
        self.assertAlmostEqual(r["connected"], 0.031, places=6)
        self.assertAlmostEqual(r["finalize"], 0.040, places=6)
        self.assertEqual(r["exit"], 0.05)
        self.assertEqual(r["locus"]["gets"], 2)
        self.assertEqual(r["locus"]["table_bytes"], 880)
        self.assertAlmostEqual(r["locus"]["exchange_s"], 0.002)
        self.assertIsNone(startup.parse_run("no figures\n", "", 100.0, 1.0))

    def test_layouts(self):
        self.assertEqual(startup.layouts([1, 2], [1, 4], 4), [(1, 1), (2, 1), (1, 4)])
        self.assertEqual(startup.layouts([8], [64], 256), [])


def synthetic(units, grid):
    """A startup document whose Locus exchange times follow the model with
    the given unit costs (what a machine with those costs would measure)."""
    doc = {"grid": [list(g) for g in grid], "repeats": 1, "results": {},
           "labels": ["locus-" + s for s in startup.STRATEGIES]}
    for n, k in grid:
        pr = startup_model.predict(units, n, k)
        p = n * k
        by = {}
        for s in startup.STRATEGIES:
            t = pr[s][0] if n > 1 else 0.0
            if s == "simple" and n > 1:
                # the fit reads simple's proxy share from its queueing term
                t = pr[s][3]["fence"] + k * (p - 1) * units["s_s"]
            tb = n * (216 + 8 * (p + 1) + p * units["card_bytes"])
            by["locus-" + s] = [{"init": 0.02 + t, "connected": 0.021 + t, "exit": 0.03 + t,
                                 "locus": {"exchange_s": t, "gets": 0, "table_bytes": tb,
                                           "put_bytes": 0, "shm_s": 0, "init_s": t}}]
        doc["results"]["%dx%d" % (n, k)] = by
    return doc


class ModelTest(unittest.TestCase):
    UNITS = {"f0_s": 2e-3, "f1_s_per_node": 1e-4, "front_end_bw": 50e6, "g_s": 30e-6,
             "s_s": 10e-6, "card_bytes": 60.0, "points": 0}
    GRID = [(1, 4), (2, 1), (2, 4), (2, 16), (4, 4), (4, 16), (8, 8), (8, 32)]

    def test_fit_recovers_the_costs(self):
        doc = synthetic(self.UNITS, self.GRID)
        got = startup_model.fit(doc, startup.summarize(doc))
        self.assertAlmostEqual(got["card_bytes"], 60.0, delta=0.5)
        for k, tol in (("f0_s", 0.05), ("f1_s_per_node", 0.05), ("front_end_bw", 0.05),
                       ("g_s", 0.05), ("s_s", 0.05)):
            self.assertAlmostEqual(got[k] / self.UNITS[k], 1.0, delta=tol, msg=k)

    def test_predictions_grow_as_designed(self):
        small = startup_model.predict(self.UNITS, 2, 64)
        big = startup_model.predict(self.UNITS, 256, 64)
        for s in ("simple", "shm", "roots", "lazy", "fabric"):
            self.assertGreater(big[s][0], small[s][0], s)
        # one table a node against one a rank
        self.assertEqual(big["simple"][1], 64 * big["shm"][1])
        self.assertEqual(big["shm"][1], big["roots"][1])
        # gets: simple's queue at the proxy dominates at scale; shm and roots
        # cut them; fabric removes the front end's broadcast of the ranks' cards
        self.assertLess(big["roots"][3]["gets"], big["shm"][3]["gets"])
        self.assertLess(big["shm"][3]["gets"], big["simple"][3]["gets"])
        self.assertLess(big["fabric"][3]["fence"], big["roots"][3]["fence"] / 20)
        self.assertIn("10000 x 64", startup_model.markdown(
            self.UNITS, synthetic(self.UNITS, self.GRID),
            startup.summarize(synthetic(self.UNITS, self.GRID))))

    def test_fit_needs_the_strategies(self):
        doc = synthetic(self.UNITS, self.GRID)
        for by in doc["results"].values():
            del by["locus-shm"]
        doc["labels"].remove("locus-shm")
        with self.assertRaises(ValueError):
            startup_model.fit(doc, startup.summarize(doc))


class LaunchModelTest(unittest.TestCase):
    """Launch to the end of MPI_Init, fitted per LOCUS_LAUNCH_FANOUT."""
    COSTS = {"0": (0.004, 0.0015, 2e-5), "4": (0.0035, 0.0015, 1e-5)}
    GRID = [(8, 1), (8, 4), (16, 1), (16, 4), (32, 1), (32, 4)]

    def doc(self):
        labels = ["locus-fabric-k0", "locus-fabric-k4", "mpich"]
        doc = {"grid": [list(g) for g in self.GRID], "repeats": 1, "labels": labels,
               "results": {}}
        for n, l in self.GRID:
            by = {}
            for k, (b, r, q) in self.COSTS.items():
                t = b * n + r * n * l + q * (n * l) ** 2
                by["locus-fabric-k" + k] = [{"init": t, "connected": t, "exit": t}]
            by["mpich"] = [{"init": 1.0, "connected": 1.0, "exit": 1.0}]
            doc["results"]["%dx%d" % (n, l)] = by
        return doc

    def test_labels_per_fanout(self):
        class M:
            name = "locus"
        got = [l for l, _, env in startup.labels_for([M()], ["fabric"], ["0", "4"])]
        self.assertEqual(got, ["locus-fabric-k0", "locus-fabric-k4"])
        got = startup.labels_for([M()], ["roots"])
        self.assertEqual([l for l, _, _ in got], ["locus-roots"])
        self.assertEqual(got[0][2]["LOCUS_LAUNCH_FANOUT"], "auto")

    def test_fit_recovers_the_costs(self):
        doc = self.doc()
        fits = startup_model.fit_launch(doc, startup.summarize(doc))
        self.assertEqual(sorted(fits), ["0", "4"])
        for k, (b, r, q) in self.COSTS.items():
            f = fits[k]
            for name, want in (("b", b), ("r", r), ("q", q)):
                self.assertAlmostEqual(f[name] / want, 1.0, delta=0.01, msg=(k, name))
            self.assertLess(f["worst"], 0.01)

    def test_tree_projection_beats_the_star_at_scale(self):
        doc = self.doc()
        fits = startup_model.fit_launch(doc, startup.summarize(doc))
        star = startup_model.predict_launch(fits["0"], None, 10000, 64, 0)
        tree = startup_model.predict_launch(fits["4"], None, 10000, 64, 4)
        # the star starts 10,000 proxies from one process, the tree 4 a level
        self.assertGreater(star["proxy launch"], 100 * tree["proxy launch"])
        self.assertGreater(star["fences"], 100 * tree["fences"])
        self.assertIn("10000 x 64, fanout 4", startup_model.launch_markdown(fits, None))


class CliTest(unittest.TestCase):
    def test_bad_input_exits_2_with_one_line(self):
        assert_usage_errors(self, *(["startup"] + a for a in (
            ["--fanouts", "1"], ["--fanouts", "x"],
            ["--nodes", "0"], ["--nodes", "a,b"], ["--ppn", "0"], ["--strategies", "fast"],
            ["--max-ranks", "0"], ["--from", "/nonexistent.json"], ["--mpi", "lam"])))

    def test_from_json_redraws_and_models(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "startup.json")
            with open(path, "w") as f:
                json.dump(synthetic(ModelTest.UNITS, ModelTest.GRID), f)
            p = run_cli("startup", "--from", path, "--model", "--no-plots")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("| 8x32 |", p.stdout)
            self.assertIn("256 x 64", p.stdout)
            for name in ("startup.md", "startup-model.md", "startup-model.json"):
                self.assertTrue(os.path.exists(os.path.join(d, name)), name)


if __name__ == "__main__":
    unittest.main()
