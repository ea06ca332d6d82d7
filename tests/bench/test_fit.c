/* bench_fit_linear against data whose least-squares line is known. */
#include <math.h>
#include <stdio.h>

#include "bench_util.h"

static int failures;

static void check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "FAIL: %s\n", what);
        failures++;
    }
}

static int close_to(double got, double want, double tol)
{
    return fabs(got - want) <= tol * (fabs(want) > 1 ? fabs(want) : 1);
}

int main(void)
{
    double a, b;

    /* Points on a line give the line back. */
    double x1[] = {1000, 2000, 3000, 4000, 5000};
    double y1[5];
    for (int i = 0; i < 5; i++)
        y1[i] = 1.5e-6 + 2.5e-10 * x1[i];
    check(bench_fit_linear(x1, y1, 5, &a, &b) == 0, "exact line fits");
    check(close_to(a, 1.5e-6, 1e-9) && close_to(b * 1e10, 2.5, 1e-9), "exact line: a, b");

    /* Worked by hand: mean x 2.5, mean y 7, Sxx 5, Sxy 7 -> b 1.4, a 3.5. */
    double x2[] = {1, 2, 3, 4}, y2[] = {6, 5, 7, 10};
    check(bench_fit_linear(x2, y2, 4, &a, &b) == 0, "noisy data fits");
    check(close_to(a, 3.5, 1e-12) && close_to(b, 1.4, 1e-12), "noisy data: a 3.5, b 1.4");

    /* The classic program's scale: lengths 1e3..1e4 bytes, times ~1e-6 s.
     * The textbook formula loses digits here; the centred one must not. */
    double x3[10], y3[10];
    for (int i = 0; i < 10; i++) {
        x3[i] = 1000.0 * (i + 1);
        y3[i] = 0.8e-6 + 1.0e-10 * x3[i] + ((i % 2) ? 1e-9 : -1e-9);
    }
    check(bench_fit_linear(x3, y3, 10, &a, &b) == 0, "classic-scale data fits");
    /* Alternating +-1 ns noise over an even count: slope shifts by a known
     * amount; recompute the expected values directly. */
    double mx = 5500, sxx = 0, sxy = 0, my = 0;
    for (int i = 0; i < 10; i++)
        my += y3[i] / 10;
    for (int i = 0; i < 10; i++) {
        sxx += (x3[i] - mx) * (x3[i] - mx);
        sxy += (x3[i] - mx) * (y3[i] - my);
    }
    check(close_to(b, sxy / sxx, 1e-9) && close_to(a, my - sxy / sxx * mx, 1e-9),
          "classic-scale data: a, b");
    check(fabs(a * 1e6 - 0.8) < 0.01 && fabs(b * 1e6 - 1e-4) < 1e-6, "classic-scale: a ~0.8us");

    /* Undefined fits are refused, not answered with NaN. */
    double x4[] = {5, 5, 5}, y4[] = {1, 2, 3};
    check(bench_fit_linear(x4, y4, 3, &a, &b) == -1, "all x equal is refused");
    check(bench_fit_linear(x2, y2, 1, &a, &b) == -1, "one point is refused");

    if (failures)
        return 1;
    printf("test_fit: all checks passed\n");
    return 0;
}
