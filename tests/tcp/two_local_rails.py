#!/usr/bin/env python3
"""two_local_rails.py TEST_TCP_XFER NPROCS MSGS MAX: the stress test with two
rails on one host, lo and the first other up interface with IPv4 (traffic
to a local address goes through lo either way, but the transport opens and
stripes over two connections per pair, as between two NICs). Every rank
that moved enough rendezvous data must have used both rails (--min-rails 2).

two_local_rails.py --run PROG ARGS...: runs PROG with LOCUS_NET_IFACES
naming those two interfaces (the failover test).

Exit 77 (skip) when this host has no second interface."""
import os
import subprocess
import sys


def second_iface():
    out = subprocess.run(["ip", "-o", "-4", "addr", "show", "up"], capture_output=True,
                         text=True, timeout=10).stdout
    for line in out.splitlines():
        name = line.split()[1].split("@")[0]
        if name != "lo":
            return name
    return None


def main():
    other = second_iface()
    if not other:
        print("SKIPPED: no interface besides lo")
        return 77
    if sys.argv[1] == "--run":
        env = dict(os.environ, LOCUS_NET_IFACES="lo," + other)
        print("running with LOCUS_NET_IFACES=lo,%s:" % other, " ".join(sys.argv[2:]), flush=True)
        return subprocess.run(sys.argv[2:], env=env, timeout=280).returncode
    prog, n, msgs, size = sys.argv[1:5]
    cmd = [prog, n, msgs, size, "--ifaces", "lo," + other, "--min-rails", "2"]
    print("running:", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, timeout=280)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
