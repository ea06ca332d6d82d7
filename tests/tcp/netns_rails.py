#!/usr/bin/env python3
"""netns_rails.py CASE TEST_TCP_XFER [LOCUSRUN MPI_PROG]: the tcp transport
between two network namespaces ("nodes") joined by two veth rails, checked
with the interfaces' own byte counters (/sys/class/net/*/statistics).

  stripe   both rails named (LOCUS_NET_IFACES=eth0,eth1): a stress run's
           bytes leave through both rails, each at least a quarter;
  single   only eth0 named: nothing but eth0 carries the traffic;
  fallback rail 1 of node b is on another subnet (eth1 of a cannot reach
           it): rank 0 says so (LOCUS_VERBOSE=1, one line naming rank, peer
           and interface), connects through any route, nothing is lost;
  mpi      an MPI program under locusrun, one rank per namespace
           (LOCUS_TRANSPORTS=self,tcp), striped over both rails.

Exit 77 (skipped) where namespaces cannot be made (not root, no ip).
The namespaces are always deleted; every command is bounded in time.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def deltas(net, before):
    after = net.counters()
    return {k: after[k] - before[k] for k in after}


def rail_bytes(d):
    return [d[("a", i)] + d[("b", i)] for i in range(2)]


def xfer(net, prog, ifaces, msgs=150, extra=(), env=None):
    cmd = [prog, "2", str(msgs), str(8 << 20), "--netns", ",".join(net.ns.values()),
           "--ifaces", ifaces] + list(extra)
    r = netns.sh(cmd, timeout=240, check=False, env=env)
    print(r.stdout[-1500:], r.stderr[-3000:], sep="\n")
    return r


def case_stripe(net, prog):
    before = net.counters()
    r = xfer(net, prog, "eth0,eth1;eth0,eth1", extra=["--min-rails", "2"])
    if r.returncode != 0:
        return "stress run failed"
    per = rail_bytes(deltas(net, before))
    print("bytes sent per rail (both nodes):", per)
    total = sum(per)
    if total < (50 << 20):
        return "only %d bytes moved" % total
    if min(per) < total // 4:
        return "rails carried %s: not striped" % per
    return None


def case_single(net, prog):
    before = net.counters()
    r = xfer(net, prog, "eth0;eth0")
    if r.returncode != 0:
        return "stress run failed"
    per = rail_bytes(deltas(net, before))
    print("bytes sent per rail (both nodes):", per)
    if per[0] < (20 << 20):
        return "eth0 carried only %d bytes" % per[0]
    if per[1] > 4096:
        return "eth1 carried %d bytes though only eth0 was named" % per[1]
    return None


def case_fallback(net, prog):
    # b's rail 1 moves to 198.18.66.0/24: a's eth1 (198.18.65.1/24) has no
    # route to it; each node reaches the other's rail-1 address through eth0.
    net.ip("b", "addr", "flush", "dev", "eth1")
    net.ip("b", "addr", "add", "198.18.66.2/24", "dev", "eth1")
    net.ip("a", "route", "add", "198.18.66.0/24", "dev", "eth0")
    net.ip("b", "route", "add", "198.18.65.0/24", "dev", "eth0")
    # The pinned attempt fails by silence (b answers on eth0); with this
    # timeout it gives up after 2 s. The links are slowed down so the run
    # outlasts that and rail 1 then carries data through eth0.
    for node in "ab":
        for dev in ("eth0", "eth1"):
            net.shape(node, dev, "50mbit")
    before = net.counters()
    env = dict(os.environ, LOCUS_VERBOSE="1", LOCUS_TCP_CONNECT_TIMEOUT="8")
    r = xfer(net, prog, "eth0,eth1;eth0,eth1", msgs=80, env=env)
    if r.returncode != 0:
        return "stress run failed"
    lines = [l for l in r.stderr.splitlines() if "cannot reach" in l]
    want = "rail 1 (eth1 198.18.65.1) cannot reach rank 1 at 198.18.66.2"
    if not any(want in l and "using any route" in l for l in lines):
        return "no fallback line like '%s' in %s" % (want, lines)
    if not r.stdout.count('"fallbacks": 1'):
        return "no rank counted a fallback"
    per = rail_bytes(deltas(net, before))
    print("bytes sent per rail (both nodes):", per)
    if per[1] > 1000:
        return "eth1 carried %d bytes: it cannot reach the peer" % per[1]
    fell = [l for l in r.stdout.splitlines() if '"fallbacks": 1' in l]
    if not fell or fell[0].endswith(",[0,0]]}"):
        return "the fallen-back rail 1 carried nothing"
    return None


def case_mpi(net, prog, locusrun, mpi_prog):
    before = net.counters()
    env = dict(os.environ, LOCUS_TRANSPORTS="self,tcp")
    cmd = [locusrun, "-n", "2", "--oversubscribe", "--timeout", "150",
           os.path.join(HERE, "ns_exec.sh"), ",".join(net.ns.values()),
           "eth0,eth1;eth0,eth1", mpi_prog]
    r = netns.sh(cmd, timeout=170, check=False, env=env)
    print(r.stdout[-2000:], r.stderr[-2000:], sep="\n")
    if r.returncode != 0 or " No Errors" not in r.stdout:
        return "MPI run failed (status %d)" % r.returncode
    per = rail_bytes(deltas(net, before))
    print("bytes sent per rail (both nodes):", per)
    if min(per) < (32 << 20):
        return "rails carried %s: expected both to carry the 64 MiB messages" % per
    return None


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    case, prog = sys.argv[1], sys.argv[2]
    why = netns.usable()
    if why:
        print("SKIPPED:", why)
        return 77
    with netns.NsPair(rails=2) as net:
        if case == "stripe":
            err = case_stripe(net, prog)
        elif case == "single":
            err = case_single(net, prog)
        elif case == "fallback":
            err = case_fallback(net, prog)
        elif case == "mpi":
            err = case_mpi(net, prog, sys.argv[3], sys.argv[4])
        else:
            print("netns_rails.py: unknown case", case, file=sys.stderr)
            return 2
    left = netns.leftover_namespaces()
    if left:
        err = err or "namespaces left behind: %s" % left
    if err:
        print("FAILED:", err)
        return 1
    print("No Errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
