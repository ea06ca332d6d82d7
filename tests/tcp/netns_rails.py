#!/usr/bin/env python3
"""netns_rails.py CASE TEST_TCP_XFER [LOCUSRUN MPI_PROG [TEST_TCP_FAILOVER]]: the tcp transport
between two network namespaces ("nodes") joined by two veth rails, checked
with the interfaces' own byte counters (/sys/class/net/*/statistics).

  stripe   both rails named (LOCUS_NET_IFACES=eth0,eth1): a stress run's
           bytes leave through both rails, each at least a quarter;
  single   only eth0 named: nothing but eth0 carries the traffic;
  fallback rail 1 of node b is on another subnet (eth1 of a cannot reach
           it): rank 0 says so (LOCUS_VERBOSE=1, one line naming rank, peer
           and interface), connects through any route, nothing is lost;
  mpi      an MPI program under locusrun, one rank per namespace
           (LOCUS_TRANSPORTS=self,tcp), striped over both rails;
  failover messages stream both ways for 8 s while node b's eth1 goes down
           (1 s in) and up again (2.5 s later): nothing is lost (the test
           checks every message), a rank notices the stall and fails over
           within the rail timeout, no message waits 2 s (the slowest send
           printed beside the same run without the fault), the rail is
           dialled again and carries data once back;
  partition both of b's rails down for 3 s: the job rides it out (within
           LOCUS_TCP_USER_TIMEOUT, 10 s), also where meanwhile each rank
           gave up a different rail as a stall would; down for good, while streaming
           and while idle: both ranks fail about 10 s later, each with one
           line saying no rail is left.

Exit 77 (skipped) where namespaces cannot be made (not root, no ip).
The namespaces are always deleted; every command is bounded in time.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

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
    # Sizes are random up to 8 MiB: 300 messages make the 50 MiB below sure
    # (150 once moved 49 MB under the sanitizer).
    r = xfer(net, prog, "eth0,eth1;eth0,eth1", msgs=300, extra=["--min-rails", "2"])
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


def links(net, devs, state):
    for dev in devs:
        net.ip("b", "link", "set", dev, state, check=state == "down")


def failover_run(net, prog, secs, devs=(), down_for=2.5, mode="link", env=None):
    """test_tcp_failover MODE SECS between the namespaces; b's interfaces
    devs go down 1 s after the stream starts, and up again down_for seconds
    later (None: never, until the run is over). Mode split: the flag the
    ranks wait for is made once the links are down. Returns (status,
    stdout, stderr, STATS by rank, seconds from the links going down to the
    run's end)."""
    env = dict(os.environ, LOCUS_VERBOSE="1", **(env or {}))
    cmd = [prog, mode, str(secs), "--netns", ",".join(net.ns.values()),
           "--ifaces", "eth0,eth1;eth0,eth1"]
    flagdir = tempfile.TemporaryDirectory(prefix="locus-split-")
    flag = os.path.join(flagdir.name, "down")
    if mode == "split":
        cmd += ["--flag", flag]
    t0 = None
    with flagdir, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        out = []
        try:
            end = time.monotonic() + 30
            while time.monotonic() < end:
                line = p.stdout.readline()
                if not line:
                    break
                out.append(line)
                if line.startswith("streaming"):
                    break
            if devs and out and out[-1].startswith("streaming"):
                time.sleep(1.0)
                links(net, devs, "down")
                t0 = time.monotonic()
                open(flag, "w").close()
                if down_for is not None:
                    time.sleep(down_for)
                    links(net, devs, "up")
            rest, _ = p.communicate(timeout=secs + 90)
            out.append(rest)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
        finally:
            links(net, ("eth0", "eth1"), "up")
        err.seek(0)
        text = err.read()
    stdout = "".join(out)
    stats = {}
    for line in stdout.splitlines():
        if line.startswith("STATS "):
            st = json.loads(line[6:])
            stats[st["rank"]] = st
    took = time.monotonic() - t0 if t0 else 0.0
    return p.returncode, stdout, text, stats, took


def case_failover(net, prog):
    secs = 8
    rc, out, err, base, _ = failover_run(net, prog, secs)
    if rc != 0 or len(base) != 2:
        print(out[-2000:], err[-3000:], sep="\n")
        return "the run without a fault failed (status %s)" % rc
    rc, out, err, st, _ = failover_run(net, prog, secs, ("eth1",))
    print(out[-3000:])
    print("\n".join(l for l in err.splitlines() if " lost " in l or "restored" in l
                    or "failed" in l or "rank" not in l)[-3000:])
    if rc != 0 or "No Errors" not in out or len(st) != 2:
        return "the run with rail 1 down for a while failed (status %s)" % rc
    for r in (0, 1):
        print("rank %d: slowest send %.3f s with the fault (done at %.2f s), %.3f s without; "
              "longest time without a message %.3f s vs %.3f s; %d vs %d messages in %d s; "
              "rail 1 sent %.1f MiB once back"
              % (r, st[r]["max_send_s"], st[r]["send_at_s"], base[r]["max_send_s"],
                 st[r]["max_gap_s"], base[r]["max_gap_s"], st[r]["messages"],
                 base[r]["messages"], secs, st[r]["rail1_after_restore"] / 1048576.0))
    print("eth1 of node b was down 2.5 s")
    if not any(st[r]["stalls"] >= 1 for r in (0, 1)):
        return "no rank noticed rail 1's stall: %s" % st
    if not all(st[r]["failovers"] >= 1 and st[r]["restored"] >= 1 for r in (0, 1)):
        return "a rank did not fail over and restore rail 1: %s" % st
    lost = [l for l in err.splitlines() if "rail 1 (eth1" in l and " lost (" in l]
    back = [l for l in err.splitlines() if "rail 1 (eth1" in l and "restored" in l]
    if not lost or not back:
        return "no verbose line saying rail 1 was lost and restored"
    worst = max(max(st[r]["max_gap_s"], st[r]["max_send_s"]) for r in (0, 1))
    if worst >= 2.0:
        return "a message was held %.2f s: the failover took too long" % worst
    if max(st[r]["rail1_after_restore"] for r in (0, 1)) < (1 << 20):
        return "rail 1 carried less than 1 MiB after it was back"
    return None


def case_partition(net, prog):
    """Every rail of b down for 3 s, then back: under LOCUS_TCP_USER_TIMEOUT
    (10 s), the job rides it out, also where each side gave up a different
    rail meanwhile (split). Down for good: both ranks fail within that
    timeout (plus a second or two), each with one line naming the peer and
    saying no rail to it is left."""
    # Split: what a stall detected on each side, each on its own rail, does
    # (both sides' last lane is reset by the other when the rails return).
    # The rail timeout is long so that no real stall comes first.
    rc, out, err, st, took = failover_run(net, prog, 10, ("eth0", "eth1"), 3.0, "split",
                                          {"LOCUS_TCP_RAIL_TIMEOUT": "5000"})
    print(out[-1200:])
    print("\n".join(l for l in err.splitlines() if " lost " in l or "restored" in l
                    or "failed" in l)[-3000:])
    if rc != 0 or "No Errors" not in out or len(st) != 2:
        print(err[-3000:])
        return "every rail down for 3 s, each side giving up another: the job failed " \
               "(status %s)" % rc
    for r in (0, 1):
        if "rank %d: gave up rail %d (" % (r, 1 - r) not in out:
            return "rank %d did not give up rail %d" % (r, 1 - r)
    print("every rail down 3 s, each side giving up another rail: the job completed")
    rc, out, err, st, took = failover_run(net, prog, 10, ("eth0", "eth1"), 3.0)
    print(out[-1200:])
    if rc != 0 or "No Errors" not in out:
        print(err[-3000:])
        return "every rail down for 3 s: the job failed (status %s)" % rc
    print("every rail down 3 s: the job completed; longest wait for a message %.2f s"
          % max(st[r]["max_gap_s"] for r in (0, 1)))
    # Streaming, and idle (nothing in flight: the keepalive probes notice).
    for mode in ("link", "idle"):
        rc, out, err, st, took = failover_run(net, prog, 60, ("eth0", "eth1"), None, mode)
        lines = [l for l in (out + err).splitlines() if "transport failed" in l]
        print("\n".join(lines))
        print("every rail down for good (%s): the job ended %.2f s later (status %s)"
              % ("streaming" if mode == "link" else "idle", took, rc))
        if rc == 0:
            return "a partitioned job completed"
        if not (8.0 <= took <= 15.0):
            return "a partitioned job ended %.2f s after the cut, not about 10 s" % took
        for r, peer in ((0, 1), (1, 0)):
            want = "rank %d: transport failed: tcp: rank %d: connection to rank %d" % (r, r, peer)
            if not any(want in l and "no other rail to it is left" in l for l in lines):
                return "rank %d did not say that no rail to rank %d is left" % (r, peer)
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
        elif case == "failover":
            err = case_failover(net, sys.argv[5])
        elif case == "partition":
            err = case_partition(net, sys.argv[5])
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
