#!/usr/bin/env python3
"""`locus bench ...` runs this: builds the benchmark suite against Locus and
every other MPI found, runs it side by side, writes tables, JSON and plots.
See docs/bench.md, or `locus bench --help`."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Plots need matplotlib, which Debian installs for /usr/bin/python3; a
# python3 earlier on PATH (pyenv, a venv) may lack it. Hand over once to the
# system interpreter when it has matplotlib; otherwise run without plots.
_GUARD = "LOCUSBENCH_REEXEC"


def _maybe_reexec():
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    system = "/usr/bin/python3"
    if os.environ.get(_GUARD) or os.path.realpath(sys.executable) == os.path.realpath(system) \
            or not os.access(system, os.X_OK):
        return
    probe = subprocess.run([system, "-c", "import matplotlib"], capture_output=True)
    if probe.returncode == 0:
        env = dict(os.environ)
        env[_GUARD] = "1"
        os.execve(system, [system, os.path.abspath(__file__)] + sys.argv[1:], env)


if __name__ == "__main__":
    _maybe_reexec()
    from locusbench.cli import main
    sys.exit(main(sys.argv[1:]))
