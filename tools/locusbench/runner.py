"""Runs cases for several MPI configs, interleaved so machine noise hits all
of them alike, and collects one {x: value} series per run."""
import os
import signal
import subprocess
import sys
import threading
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


def _drain(f, into):
    for line in iter(f.readline, ""):
        into.append(line)


def _kill_group(p):
    """SIGTERM to p's process group, SIGKILL 5 s later if it is still there."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            pass


def run_watched(cmd, env, timeout, complete=None, grace=5.0):
    """Runs cmd in its own session; returns (rc, stdout, stderr, seconds,
    hung). On timeout the whole process group is killed and rc is None.
    With complete(stdout) -> bool: once it holds, a job still running grace
    seconds later is killed the same way, rc is 0 and hung is True (an MPI
    that hangs in MPI_Finalize after printing its whole result)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True, stdin=subprocess.DEVNULL)
    out, err = [], []
    readers = [threading.Thread(target=_drain, args=(p.stdout, out), daemon=True),
               threading.Thread(target=_drain, args=(p.stderr, err), daemon=True)]
    for t in readers:
        t.start()
    rc, hung, seen, done_at, done_len = None, False, 0, None, 0
    while True:
        try:
            rc = p.wait(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if now - t0 > timeout:
            _kill_group(p)
            rc = None
            break
        if complete and done_at is None and len(out) != seen:
            lines = out[:]   # the readers go on appending
            seen = len(lines)
            if complete("".join(lines)):
                done_at, done_len = now, seen
        if done_at is not None and now - done_at > grace:
            _kill_group(p)
            rc, hung = 0, True
            break
    # Processes outside the group (a launcher's remote daemons) may hold the
    # pipes open: do not wait for them longer than a moment.
    for t, f in zip(readers, (p.stdout, p.stderr)):
        t.join(timeout=5)
        if not t.is_alive():
            f.close()
    if hung:
        # What the launcher printed once killed (a "BAD TERMINATION" banner)
        # is not the program's result: stdout ends where the result did.
        err.append("--- stdout after the kill ---\n" + "".join(out[done_len:]))
        out = out[:done_len]
    return rc, "".join(out), "".join(err), time.monotonic() - t0, hung


def run_one(cmd, env, timeout):
    """Runs cmd in its own session; returns (rc, stdout, stderr, seconds).
    On timeout the whole process group is killed and rc is None."""
    return run_watched(cmd, env, timeout)[:4]


class LocalLaunch:
    """How runs start on this machine: each MPI's own launcher, one rank per
    core (mpis.Mpi.launch_cmd). cluster.Launch is the multi-node one."""

    def command(self, job, case, quick):
        # What the variant or the case sets wins over the one-node defaults.
        mine = dict(job.spec.get("env", {}), **case.env)
        local = {k: v for k, v in job.mpi.local_env().items() if k not in mine}
        return job.mpi.launch_cmd(case.np, job.exe, case.argv(quick),
                                  extra=list(job.spec.get("args", [])) + job.extra_args), local

    def before(self):
        return None

    def after(self, before, killed):
        return {}


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


def run_jobs(jobs_by_case, repeats, quick, timeout, rawdir, launch=None, grace=None):
    """jobs_by_case: [(case, [Job])]. Each repeat runs every case once per
    job, rotating the job order between repeats. launch (default LocalLaunch)
    makes each command; with grace, a run that has printed its whole result
    (case.complete) and not ended grace seconds later is killed and kept,
    noted as hung at exit. Returns (results, seconds):
    {case id: {label: {"runs": [{x: v}], "extras": [{k: v}], "failures": [str],
    "notes": [str]}}} and the wall time of all runs."""
    launch = launch or LocalLaunch()
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
                    job.label, {"runs": [], "extras": [], "failures": [], "notes": []})
                all_specs = [j.spec for j in jobs if j.mpi is job.mpi]
                cmd, launch_env = launch.command(job, case, quick)
                extra_env = dict(case.env)
                extra_env.update(launch_env)
                extra_env.update(job.extra_env)
                env = _env_for(job.spec, all_specs, extra_env)
                mark = launch.before()
                done = (lambda text, c=case: c.complete(text, quick)) if grace else None
                rc, out, err, secs, hung = run_watched(cmd, env, timeout, done, grace or 0)
                more = launch.after(mark, rc is None or hung)
                status = "ok"
                if rawdir:
                    os.makedirs(rawdir, exist_ok=True)
                    name = "%s--%s--r%d.txt" % (case.id, job.label.replace("/", "_"), r + 1)
                    with open(os.path.join(rawdir, name), "w") as f:
                        if launch_env:
                            f.write("# environment: %s\n" % " ".join(
                                "%s=%s" % kv for kv in sorted(launch_env.items())))
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
                        slot["extras"].append(dict(extras, **more))
                        if hung:
                            note = "hung at exit: killed %.0f s after its output" % grace
                            slot["notes"].append(note)
                            status = "ok, but " + note
                    except ValueError as exc:
                        status = "UNPARSABLE: %s" % exc
                if not status.startswith("ok"):
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


def best(values, better="lower"):
    """The best of the repeats: the least disturbed run's figure."""
    if not values:
        return None
    return min(values) if better == "lower" else max(values)


def aggregate(slot, stat="median", better="lower"):
    """Median (stat "median") or best (stat "best", in the case's sense of
    better) over repeats per x; the extras' medians; None where no run
    succeeded."""
    pick = median if stat == "median" else (lambda v: best(v, better))
    xs = []
    for run in slot["runs"]:
        for x in run:
            if x not in xs:
                xs.append(x)
    med = {x: pick([run[x] for run in slot["runs"] if x in run]) for x in xs}
    keys = []
    for e in slot["extras"]:
        for k in e:
            if k not in keys:
                keys.append(k)
    extras = {k: median([e[k] for e in slot["extras"] if k in e]) for k in keys}
    return med, extras
