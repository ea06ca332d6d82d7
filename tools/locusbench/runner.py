"""Runs cases for several MPI configs, interleaved so machine noise hits all
of them alike, and collects one {x: value} series per run."""
import os
import signal
import subprocess
import sys
import time


def log(msg):
    """Progress and warnings: one line on stderr."""
    sys.stderr.write("locus bench: %s\n" % msg)
    sys.stderr.flush()


def _env_for(spec, all_specs, extra_env):
    env = dict(os.environ)
    # A variant's settings must not leak into its siblings' runs.
    for s in all_specs:
        for k in s.get("env", {}):
            env.pop(k, None)
    env.update(spec.get("env", {}))
    env.update(extra_env or {})
    env.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    return env


def run_one(cmd, env, timeout):
    """Runs cmd in its own session; returns (rc, stdout, stderr, seconds).
    On timeout the whole process group is killed and rc is None."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            out, err = p.communicate(timeout=5)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
        rc = None
    return rc, out or "", err or "", time.monotonic() - t0


class Job:
    """One run to do: a case under a config, optionally with a sweep setting."""

    def __init__(self, case, label, mpi, spec, exe, extra_args=(), extra_env=None, series=None):
        self.case = case
        self.label = label          # column name in the report
        self.mpi = mpi
        self.spec = spec
        self.exe = exe
        self.extra_args = list(extra_args)
        self.extra_env = dict(extra_env or {})
        self.series = series or label


def run_jobs(jobs_by_case, repeats, quick, timeout, rawdir):
    """jobs_by_case: [(case, [Job])]. Each repeat runs every case once per
    job, rotating the job order between repeats. Returns (results, seconds):
    {case id: {label: {"runs": [{x: v}], "extras": [{k: v}], "failures": [str]}}}
    and the wall time of all runs."""
    results = {}
    t_start = time.monotonic()
    total = repeats * sum(len(j) for _, j in jobs_by_case)
    step = 0
    for r in range(repeats):
        for case, jobs in jobs_by_case:
            k = r % len(jobs) if jobs else 0
            for job in jobs[k:] + jobs[:k]:
                step += 1
                slot = results.setdefault(case.id, {}).setdefault(
                    job.label, {"runs": [], "extras": [], "failures": []})
                all_specs = [j.spec for j in jobs if j.mpi is job.mpi]
                env = _env_for(job.spec, all_specs, dict(case.env, **job.extra_env))
                cmd = job.mpi.launch_cmd(case.np, job.exe, case.argv(quick),
                                         extra=list(job.spec.get("args", [])) + job.extra_args)
                rc, out, err, secs = run_one(cmd, env, timeout)
                status = "ok"
                if rawdir:
                    os.makedirs(rawdir, exist_ok=True)
                    name = "%s--%s--r%d.txt" % (case.id, job.label.replace("/", "_"), r + 1)
                    with open(os.path.join(rawdir, name), "w") as f:
                        f.write("$ %s\n%s" % (" ".join(cmd), out))
                        if err:
                            f.write("\n--- stderr ---\n%s" % err)
                if rc is None:
                    status = "TIMEOUT after %.0f s" % secs
                elif rc != 0:
                    tail = (err.strip().splitlines() or ["(no stderr)"])[-1]
                    status = "FAILED rc=%d: %s" % (rc, tail[:200])
                else:
                    try:
                        series, extras = case.measure(out)
                        slot["runs"].append(series)
                        slot["extras"].append(extras)
                    except ValueError as exc:
                        status = "UNPARSABLE: %s" % exc
                if status != "ok":
                    slot["failures"].append(status)
                log("[%d/%d] %-22s %-16s np=%d repeat %d/%d %5.1f s %s"
                    % (step, total, case.id, job.label, case.np, r + 1, repeats, secs, status))
    return results, round(time.monotonic() - t_start, 1)


def median(values):
    v = sorted(values)
    n = len(v)
    if n == 0:
        return None
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def aggregate(slot):
    """Median over repeats per x (and per extra); None where no run succeeded."""
    xs = []
    for run in slot["runs"]:
        for x in run:
            if x not in xs:
                xs.append(x)
    med = {x: median([run[x] for run in slot["runs"] if x in run]) for x in xs}
    keys = []
    for e in slot["extras"]:
        for k in e:
            if k not in keys:
                keys.append(k)
    extras = {k: median([e[k] for e in slot["extras"] if k in e]) for k in keys}
    return med, extras
