/* Least-squares line fit, kept free of MPI so it can be unit-tested alone. */
#include "bench_util.h"

#include <math.h>

int bench_fit_linear(const double *x, const double *y, int n, double *a, double *b)
{
    if (n < 2)
        return -1;
    /* Centre the data first: the textbook sums (Σx², Σxy) lose digits when
     * lengths are ~1e4 and times ~1e-6, the centred form does not. */
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (!(sxx > 0) || !isfinite(sxx) || !isfinite(sxy))
        return -1;
    *b = sxy / sxx;
    *a = my - *b * mx;
    return 0;
}
