"""The LOCUS_BENCH_* tunables the runner reads. Their rows (and defaults)
live in src/util/tunables_bench.def so `locus info` lists them; a test keeps
this copy equal to that table."""
import os

DEFAULTS = {
    "LOCUS_BENCH_MPIS": "locus,openmpi,mpich,mpich5",
    "LOCUS_BENCH_REPEATS": "3",
    "LOCUS_BENCH_STAT": "median",
    "LOCUS_BENCH_TIMEOUT": "900",
    "LOCUS_BENCH_LOCUS_BIN": "",
    "LOCUS_BENCH_MPICH5": "/opt/locus-peers/mpich-5",
}


def get(name):
    """The value in force: the environment's when set and non-empty, else the default."""
    v = os.environ.get(name, "")
    return v if v else DEFAULTS[name]


def get_int(name):
    """The value as a positive integer; raises ValueError naming the variable."""
    v = get(name)
    try:
        n = int(v)
    except ValueError:
        n = 0
    if n <= 0:
        raise ValueError("%s=%r is not a positive integer" % (name, v))
    return n
