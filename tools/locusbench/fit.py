"""Least-squares line fit, the same arithmetic as bench/bench_fit.c."""


def linear_fit(xs, ys):
    """Fits y = a + b*x; returns (a, b). Raises ValueError when undefined."""
    n = len(xs)
    if n != len(ys) or n < 2:
        raise ValueError("need at least two (x, y) points of equal count")
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx <= 0:
        raise ValueError("all x values are equal: the slope is undefined")
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx
    return my - b * mx, b


def max_relative_residual(xs, ys, a, b):
    """Largest |fit - observed| / observed over the points (observed > 0)."""
    worst = 0.0
    for x, y in zip(xs, ys):
        if y > 0:
            worst = max(worst, abs(a + b * x - y) / y)
    return worst
