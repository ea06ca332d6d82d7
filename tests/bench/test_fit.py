"""The runner's least-squares fit against known data and against the C
program's own fit in a recorded ping_pong output."""
import os
import unittest

from locusbench import fit, parsers

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


class FitTest(unittest.TestCase):
    def test_exact_line(self):
        xs = [1000.0 * i for i in range(1, 11)]
        ys = [1.25 + 0.0004 * x for x in xs]
        a, b = fit.linear_fit(xs, ys)
        self.assertAlmostEqual(a, 1.25, places=9)
        self.assertAlmostEqual(b, 0.0004, places=12)
        self.assertLess(fit.max_relative_residual(xs, ys, a, b), 1e-9)

    def test_worked_example(self):
        # mean x 2.5, mean y 7, Sxx 5, Sxy 7 -> b = 1.4, a = 3.5
        a, b = fit.linear_fit([1, 2, 3, 4], [6, 5, 7, 10])
        self.assertAlmostEqual(a, 3.5)
        self.assertAlmostEqual(b, 1.4)

    def test_undefined(self):
        with self.assertRaises(ValueError):
            fit.linear_fit([3, 3, 3], [1, 2, 3])
        with self.assertRaises(ValueError):
            fit.linear_fit([1], [1])

    def test_matches_recorded_pingpong(self):
        """pingpong prints a and b from its own C fit; refitting the printed
        table must give the same line (to the printed rounding)."""
        with open(os.path.join(DATA, "pingpong.txt")) as f:
            parsed = parsers.parse_pingpong(f.read())
        for it in parsed["iterations"]:
            xs = [p["bytes"] for p in it["points"]]
            ys = [p["time_us"] for p in it["points"]]
            a, b = fit.linear_fit(xs, ys)
            # Observed times are printed with 2 decimals: allow that rounding.
            self.assertAlmostEqual(a, it["latency_us"], delta=0.02)
            self.assertAlmostEqual(b, it["inv_bandwidth_s_per_mb"], delta=1e-5)
            for p in it["points"]:
                self.assertAlmostEqual(a + b * p["bytes"], p["fit_us"], delta=0.03)


if __name__ == "__main__":
    unittest.main()
