"""Multi-node runs on an emulated cluster: network namespaces as nodes (built
by scripts/cluster, or any set of namespaces joined by veth rails), one rank
per node, every MPI on TCP over the same rails and started through the same
exec prefix, netns_rsh (`netns_rsh HOST CMD...` runs `sh -c CMD` on node
HOST: in its network namespace, under its name; an rsh stand-in):

  Locus    locusrun --host n0:1,n1:1 --launcher exec --launcher-exec netns_rsh
           --rails R   (LOCUS_TRANSPORTS=self,tcp)
  Open MPI mpirun --host n0,n1 --mca plm_rsh_agent netns_rsh --mca btl tcp,self
           --mca btl_tcp_if_include eth0,...  --mca oob_tcp_if_include <rail-0 subnet>
  MPICH    mpiexec -hosts n0,n1 -launcher rsh -launcher-exec netns_rsh
           -localhost <node 0's rail-0 address>
           (UCX_TLS=tcp,self UCX_NET_DEVICES=eth0,... UCX_MAX_RNDV_RAILS=R)

Every launcher runs on node 0 (netns_node), as mpirun runs on a cluster's
first node; the daemons (orted, hydra_pmi_proxy) reach it over rail 0. The
launchers do not bind (all "nodes" share this machine's cores, and each would
put its rank on its first core); pin_rank puts rank r on the (r mod n)-th CPU
for every MPI alike. When a job has more ranks than the machine has CPUs, no
node is oversubscribed but the machine is: busy-polling ranks are then told
to yield, as on one node (Locus LOCUS_YIELD=always, Open MPI
mpi_yield_when_idle; Debian's MPICH 4.0 ch4:ucx has no such setting).
"""
import json
import os
import re
import signal
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.join(HERE, "netns_rsh")
NODE = os.path.join(HERE, "netns_node")
PIN = os.path.join(HERE, "pin_rank")

# The emulated cluster `locus bench compare --nodes N` builds unless told
# otherwise: its own name and subnets (198.18.140.0/24 and up), apart from
# the tests' clusters (locus-lt: 100, locus-bc: 150) and scripts/cluster's
# default (0).
DEFAULT_NAME = "locus-bench"
DEFAULT_SUBNET = 140
DEFAULT_RATE = "200mbit"


def _sh(cmd, timeout=60):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def tcp_only(mpi_name, devs):
    """(launcher args, environment) that put all of a job's messages on TCP
    over the interfaces devs (the rails, in order). Locus's rails come from
    its launcher (locusrun --rails, or LOCUS_NET_IFACES); here it only gets
    the transport list."""
    devs = ",".join(devs)
    if mpi_name == "locus":
        return [], {"LOCUS_TRANSPORTS": "self,tcp"}
    if mpi_name == "openmpi":
        return ["--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", devs], {}
    if mpi_name in ("mpich", "mpich5"):
        # Debian's MPICH is ch4:ucx: NOLOCAL keeps ranks that Hydra puts on one
        # node off the POSIX shm module; UCX_TLS keeps UCX off its own shared
        # memory (UCX takes every namespace of this machine for the same host).
        return [], {"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp,self", "UCX_NET_DEVICES": devs,
                    "UCX_MAX_RNDV_RAILS": str(devs.count(",") + 1)}
    raise ValueError("unknown MPI '%s'" % mpi_name)


def ofi_unable(mpi_name, provider):
    """Why mpi_name cannot run on libfabric's provider for --transport ofi,
    or None when it can."""
    if mpi_name not in ("locus", "openmpi", "mpich5"):
        return "no libfabric path in this build"
    if mpi_name == "openmpi" and provider == "shm":
        # Its mtl asks fi_getinfo for FI_REMOTE_COMM, which shm lacks.
        return "its mtl ofi asks for FI_REMOTE_COMM, which the shm provider lacks"
    return None


def ofi_only(mpi_name, provider, fi_lib=None):
    """(launcher args, environment) that put a job's messages between nodes
    on libfabric's `provider` (tcp: tcp;ofi_rxm, udp: udp;ofi_rxd), for
    --transport ofi; None for an MPI that cannot (Debian's MPICH is built
    with UCX only). fi_lib: a folder whose libfabric.so.1 every MPI loads
    instead of its own (LD_LIBRARY_PATH), so all run the same provider."""
    if ofi_unable(mpi_name, provider):
        return None
    env = {"FI_PROVIDER": provider}
    if fi_lib:
        env["LD_LIBRARY_PATH"] = fi_lib
    if mpi_name == "locus":
        return [], dict(env, LOCUS_TRANSPORTS="self,ofi")
    if mpi_name == "openmpi":
        return ["--mca", "pml", "cm", "--mca", "mtl", "ofi", "--mca",
                "mtl_ofi_provider_include", provider], env
    if mpi_name == "mpich5":
        # The wheel's ch4 takes ucx unless told; its own libfabric 2.x
        # serves the provider (Hydra passes the environment on).
        return [], dict(env, MPIR_CVAR_CH4_NETMOD="ofi")


class Nodes:
    """Where a multi-node job runs: the nodes' namespaces (also their host
    names), rail r being eth<r> in each; node 0's rail-0 address and the
    rail-0 subnet (CIDR), over which the launchers' daemons reach node 0."""

    # ("tcp", None, None), or ("ofi", provider, libfabric folder or None)
    # for compare --transport ofi.
    transport = ("tcp", None, None)

    def __init__(self, names, launcher_addr, subnet0, keep=None):
        self.names = list(names)
        self.launcher_addr = launcher_addr
        self.subnet0 = subnet0
        self.keep = keep or (lambda: set())   # pids to spare in the namespaces (sshd)

    def command(self, mpi, np, rails, exe, args, extra=(), ppn=1, pin=True):
        """(argv, environment) that run `exe args` as np ranks, ppn on each
        of the first nodes, under mpi (a mpis.Mpi) over `rails` rails;
        pin_rank binds each rank unless pin is False."""
        nnodes = -(-np // ppn)
        if nnodes > len(self.names):
            raise ValueError("%d ranks, %d a node, but only %d nodes"
                             % (np, ppn, len(self.names)))
        hosts = ["%s:%d" % (h, ppn) for h in self.names[:nnodes]]
        transport, provider, fi_lib = getattr(self, "transport", ("tcp", None, None))
        if transport == "ofi":
            targs, env = ofi_only(mpi.name, provider, fi_lib)
            passed = ["FI_PROVIDER"] + (["LD_LIBRARY_PATH"] if fi_lib else [])
            if mpi.name == "locus":
                env["LOCUS_OFI_RAILS"] = str(rails)
                passed.append("LOCUS_OFI_RAILS")
            if mpi.name in ("locus", "openmpi"):
                targs = targs + [w for v in passed for w in ("-x", v)]
        else:
            targs, env = tcp_only(mpi.name, ["eth%d" % r for r in range(rails)])
        cpus = os.cpu_count() or 1
        shared = np > cpus
        if mpi.name == "locus":
            cmd = [mpi.launcher, "--host", ",".join(hosts),
                   "--launcher", "exec", "--launcher-exec", AGENT,
                   "--bind-to", "none", "--rails", str(rails), "-x", "LOCUS_TRANSPORTS"]
            if ppn > cpus:
                cmd += ["--oversubscribe"]
            if shared:
                cmd += ["-x", "LOCUS_YIELD=always"]
        elif mpi.name == "openmpi":
            cmd = [mpi.launcher] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
            cmd += ["-n", str(np), "--host", ",".join(hosts), "--bind-to", "none",
                    "--mca", "plm_rsh_agent", AGENT, "--mca", "oob_tcp_if_include", self.subnet0]
            if shared:
                cmd += ["--mca", "mpi_yield_when_idle", "1"]
        elif mpi.name in ("mpich", "mpich5"):
            cmd = [mpi.launcher, "-n", str(np), "-hosts", ",".join(hosts),
                   "-launcher", "rsh", "-launcher-exec", AGENT,
                   "-localhost", self.launcher_addr, "-bind-to", "none"]
        else:
            raise ValueError("unknown MPI '%s'" % mpi.name)
        argv = [NODE, self.names[0]] + cmd + targs + list(extra)
        return argv + ([PIN] if pin else []) + [exe] + list(args), env

    def tx_bytes(self):
        """{(node index, interface): bytes sent so far} for every eth* of every node."""
        out = {}
        for i, ns in enumerate(self.names):
            r = _sh(["ip", "-j", "-n", ns, "-s", "link", "show"], timeout=10)
            if r.returncode != 0:
                continue
            for link in json.loads(r.stdout or "[]"):
                if link.get("ifname", "").startswith("eth"):
                    out[(i, link["ifname"])] = link.get("stats64", link.get("stats", {})) \
                        .get("tx", {}).get("bytes", 0)
        return out

    def kill_strays(self):
        """Kills what a killed job left in the nodes (daemons and ranks in
        process groups of their own): every process in the namespaces but
        the kept ones (the nodes' sshd) and their descendants (ssh sessions).
        Returns how many."""
        keep = self.keep()
        n = 0
        for ns in self.names:
            r = _sh(["ip", "netns", "pids", ns], timeout=10)
            for pid in (int(t) for t in r.stdout.split()):
                if pid == os.getpid() or _descends(pid, keep):
                    continue
                try:
                    os.kill(pid, signal.SIGKILL)
                    n += 1
                except ProcessLookupError:
                    pass
        return n


def _descends(pid, ancestors):
    """True when pid is one of ancestors or below one of them."""
    for _ in range(64):
        if pid in ancestors:
            return True
        try:
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid <= 1:
            return False
    return False


class Launch:
    """The runner's hook for multi-node runs: the command of each run, bytes
    sent per rail, and clean-up after a killed run."""

    def __init__(self, nodes):
        self.nodes = nodes

    def command(self, job, case, quick):
        argv, env = self.nodes.command(job.mpi, case.np, case.rails, job.exe, case.argv(quick),
                                       extra=list(job.spec.get("args", [])) + job.extra_args,
                                       ppn=case.ppn)
        return argv, env

    def before(self):
        return self.nodes.tx_bytes()

    def after(self, before, killed):
        """Extras for the run: MB sent on each rail, all nodes together."""
        if killed:
            self.nodes.kill_strays()
        after = self.nodes.tx_bytes()
        per = {}
        for k, v in after.items():
            per[k[1]] = per.get(k[1], 0) + v - before.get(k, v)
        return {"MB sent on %s" % dev: per[dev] / 1e6 for dev in sorted(per)}


def script_path():
    """scripts/cluster: <src>/scripts next to <src>/tools/locusbench, and
    likewise <prefix>/share/locus/scripts after an install."""
    p = os.path.normpath(os.path.join(HERE, "..", "..", "scripts", "cluster"))
    return p if os.access(p, os.X_OK) else None


class Cluster:
    """An emulated cluster from scripts/cluster for the length of a `with`:
    built (or found already up with the same shape, then left up), taken
    down on the way out whatever happened, if this built it. With qos the
    switch ports toward the nodes are strict-priority ports (--qos)."""

    def __init__(self, name, nodes, rails, rate, subnet, script=None, qos=False):
        self.name, self.n, self.rails, self.rate, self.subnet = name, nodes, rails, rate, subnet
        self.qos = qos
        self.script = script or script_path()
        self.built = False
        self.state = "/run/locus-cluster/" + name

    def _run(self, *args, timeout=120):
        return _sh([self.script] + list(args) + ["--name", self.name], timeout=timeout)

    def __enter__(self):
        if not self.script:
            raise RuntimeError("cannot find scripts/cluster (it builds the emulated cluster)")
        args = ["--nodes", str(self.n), "--rails", str(self.rails), "--subnet", str(self.subnet)]
        if self.rate:
            args += ["--rate", self.rate]
        if self.qos:
            args += ["--qos"]
        r = self._run("up", *args)
        if r.returncode != 0:
            raise RuntimeError("scripts/cluster up failed: %s" % (r.stderr or r.stdout).strip())
        self.built = "already up" not in r.stdout
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.built:
            self._run("down", timeout=60)
            self.built = False

    def _sshd_pids(self):
        pids = set()
        for i in range(self.n):
            try:
                with open(os.path.join(self.state, "n%d" % i, "sshd.pid")) as f:
                    pids.add(int(f.read().strip()))
            except (OSError, ValueError):
                pass
        return pids

    def nodes(self):
        return Nodes(["%s-n%d" % (self.name, i) for i in range(self.n)],
                     "198.18.%d.1" % self.subnet, "198.18.%d.0/24" % self.subnet,
                     keep=self._sshd_pids)

    def describe(self):
        return {"name": self.name, "nodes": self.n, "rails": self.rails, "rate": self.rate,
                "qos": self.qos,
                "subnets": "198.18.%d-%d.0/24" % (self.subnet, self.subnet + self.rails - 1),
                "exec_prefix": AGENT, "launcher_on": NODE + " " + self.name + "-n0",
                "rank_pinning": PIN}


def usable():
    """None when an emulated cluster can be built here, else why not."""
    if os.geteuid() != 0:
        return "not root (network namespaces need root)"
    try:
        if _sh(["ip", "netns", "list"], timeout=10).returncode != 0:
            return "ip netns does not work here"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "no ip netns: %s" % exc
    return None


def check_name(name, subnet, rails):
    if not re.fullmatch(r"locus[a-z0-9-]{0,8}", name):
        raise ValueError("--cluster-name %s: 'locus' followed by at most 8 of [a-z0-9-]" % name)
    if not (0 <= subnet and subnet + rails <= 256):
        raise ValueError("--subnet %d: 0 to %d" % (subnet, 256 - rails))


def targets(summary, rails, results=None, small=1024, big=1 << 20):
    """The multi-node goals as ratios (above 1: Locus better) from a
    report.summarize() of the cluster cases: small-message latency against
    the best peer; bandwidth at `big` bytes (or the largest size below it)
    with `rails` rails against one rail (Locus and each peer), and against
    the best peer on the same rails. Each from the medians and, given the
    runner's results, from the best of the repeats (the run least disturbed
    by other load on the machine). Returns [{"target", "value", "best_of",
    "goal", "detail"}]."""
    from .runner import median
    by_id = {s["case"]["id"]: s for s in summary}

    def med(cid, label, x):
        rows = [r for r in by_id[cid]["rows"] if r["x"] == x]
        return rows[0]["values"].get(label) if rows else None

    def best(cid, label, x):
        runs = ((results or {}).get(cid, {}).get(label) or {}).get("runs", [])
        vals = [run[x] for run in runs if run.get(x)]
        pick = min if by_id[cid]["case"]["better"] == "lower" else max
        return pick(vals) if vals else None

    def vs_best_peer(get, cid, x):
        """(best peer / Locus as an advantage, best peer's name) at x."""
        s = by_id[cid]
        ref, lower = s["reference"], s["case"]["better"] == "lower"
        mine = get(cid, ref, x)
        peers = [(get(cid, l, x), l) for l in s["labels"] if l != ref]
        peers = [p for p in peers if p[0]]
        if not mine or not peers:
            return None, None
        v, name = min(peers) if lower else max(peers)
        return (v / mine if lower else mine / v), name

    def size_at(cid, x):
        xs = [r["x"] for r in by_id[cid]["rows"] if isinstance(r["x"], int) and r["x"] <= x]
        return max(xs) if xs else None

    def both(fn):
        m = fn(med)
        b = fn(best) if results else None
        return m, b

    out = []
    if "osu_latency" in by_id and by_id["osu_latency"]["reference"]:
        xs = [r["x"] for r in by_id["osu_latency"]["rows"]
              if isinstance(r["x"], int) and r["x"] <= small]

        def lat(get):
            got = [vs_best_peer(get, "osu_latency", x) for x in xs]
            got = [g for g in got if g[0]]
            return (median([g[0] for g in got]), sorted({g[1] for g in got})) if got else None
        m, b = both(lat)
        if m:
            out.append({"target": "small-message latency, Locus vs best peer (%s)"
                                  % _rails_txt(rails),
                        "value": m[0], "best_of": b[0] if b else None, "goal": None,
                        "detail": "median over %d..%d B of (best peer's latency / Locus's); "
                                  "best peer: %s" % (xs[0], xs[-1], ", ".join(m[1]))})
    multi, one = "osu_bw_%drail" % rails, "osu_bw_1rail"
    if rails > 1 and multi in by_id and one in by_id and by_id[multi]["reference"]:
        x = size_at(multi, big)
        if x is not None and x == size_at(one, big):
            ref = by_id[multi]["reference"]

            def gain(get, label):
                a, b1 = get(multi, label, x), get(one, label, x)
                return a / b1 if a and b1 else None
            m, b = both(lambda get: gain(get, ref))
            if m:
                peers = ["%s %.2f" % (l, gain(med, l)) for l in by_id[multi]["labels"]
                         if l != ref and gain(med, l)]
                out.append({"target": "%s B bandwidth, Locus %s vs 1 rail"
                                      % (x, _rails_txt(rails)),
                            "value": m, "best_of": b, "goal": 0.9 * rails,
                            "detail": "osu_bw; the peers' own ratios: " + (", ".join(peers)
                                                                             or "none")})
    for cid, r in [(multi, rails)] + ([(one, 1)] if rails > 1 else []):
        if cid not in by_id or not by_id[cid]["reference"]:
            continue
        x = size_at(cid, big)
        m, b = both(lambda get: vs_best_peer(get, cid, x))
        if m and m[0]:
            ref = by_id[cid]["reference"]
            out.append({"target": "%s B bandwidth, Locus vs best peer (%s)" % (x, _rails_txt(r)),
                        "value": m[0], "best_of": b[0] if b else None, "goal": None,
                        "detail": "osu_bw; best peer %s %.1f MB/s, Locus %.1f MB/s (medians)"
                                  % (m[1], med(cid, m[1], x), med(cid, ref, x))})
    return out


def _rails_txt(r):
    return "%d rail%s" % (r, "s" if r > 1 else "")
