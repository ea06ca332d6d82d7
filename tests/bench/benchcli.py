"""What the bench tests share: running `locus bench` (tools/locus_bench.py)
as a user would, the check that bad input gets one line and exit 2, and the
end-to-end quick checks' run-and-read of a subcommand's JSON."""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def run_cli(*args, tools=None, timeout=60):
    """`locus bench ARGS...` as a CompletedProcess with text output."""
    script = os.path.join(tools or os.path.join(ROOT, "tools"), "locus_bench.py")
    return subprocess.run([sys.executable, script] + list(args), capture_output=True,
                          text=True, timeout=timeout)


def assert_usage_errors(test, *argsets):
    """Each ARGS of argsets: exit 2 and one line starting "locus bench: "."""
    for args in argsets:
        p = run_cli(*args)
        test.assertEqual(p.returncode, 2, (args, p.stderr))
        test.assertEqual(len(p.stderr.strip().splitlines()), 1, (args, p.stderr))
        test.assertTrue(p.stderr.startswith("locus bench: "), p.stderr)


def skip_without_cluster():
    """Exits 77 (ctest's skip) where an emulated cluster cannot be made."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("SKIPPED: the emulated cluster needs root and iproute2")
        sys.exit(77)


def run_quick(tools, sub, args, out, json_name):
    """Runs `locus bench SUB ARGS... --out OUT` afresh, prints the tails of
    its output, exits 1 if it failed; else OUT/JSON_NAME's document."""
    shutil.rmtree(out, ignore_errors=True)
    p = run_cli(sub, *args, "--out", out, tools=tools, timeout=560)
    print(p.stdout[-3000:])
    print(p.stderr[-3000:])
    if p.returncode != 0:
        print("FAIL: locus bench %s exited %d" % (sub, p.returncode))
        sys.exit(1)
    with open(os.path.join(out, json_name)) as f:
        return json.load(f)
