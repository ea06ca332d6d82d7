"""netns.py: a two-"node" network made of Linux network namespaces for the
tcp transport's tests and benchmarks.

    with NsPair(rails=2, rate="1gbit") as net:
        net.run("a", ["ip", "addr"])         # inside node a
        net.tx_bytes("a", "eth1")            # that interface's counter

Two namespaces, locus-t<pid>-a and locus-t<pid>-b, joined by one veth pair
per rail, named eth0, eth1, ... inside each; rail i is 198.18.(64+i).1/24 on
a and .2 on b. With rate, each direction of each rail is shaped by an HTB
class (so the wire, not the CPU, is the bottleneck). IPv6 is off on them so
no neighbour discovery adds bytes to the counters. Everything is deleted on
exit, whatever happened; every command has a timeout.
"""
import os
import subprocess

SUBNET = "198.18.{}.{}"


def sh(cmd, timeout=20, check=True, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if check and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), (r.stderr or r.stdout).strip()))
    return r


def usable():
    """None when namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "not root"
    try:
        sh(["ip", "netns", "list"])
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        return "no ip netns: %s" % e
    return None


class NsPair:
    def __init__(self, rails=2, rate=None, tag=None):
        self.rails = rails
        self.rate = rate
        tag = tag or "t%d" % os.getpid()
        self.ns = {"a": "locus-%s-a" % tag, "b": "locus-%s-b" % tag}
        self.tmp = "lt%d" % (os.getpid() % 100000)  # root-namespace names, <= 15 chars

    def addr(self, node, rail):
        return SUBNET.format(64 + rail, 1 if node == "a" else 2)

    def ip(self, node, *args, check=True):
        return sh(["ip", "-n", self.ns[node]] + list(args), check=check)

    def __enter__(self):
        try:
            for ns in self.ns.values():
                sh(["ip", "netns", "add", ns])
            for node in "ab":
                self.ip(node, "link", "set", "lo", "up")
                sh(["ip", "netns", "exec", self.ns[node], "sysctl", "-qw",
                    "net.ipv6.conf.all.disable_ipv6=1"])
                sh(["ip", "netns", "exec", self.ns[node], "sysctl", "-qw",
                    "net.ipv6.conf.default.disable_ipv6=1"])
            for i in range(self.rails):
                a, b = "%sa%d" % (self.tmp, i), "%sb%d" % (self.tmp, i)
                sh(["ip", "link", "add", a, "type", "veth", "peer", "name", b])
                sh(["ip", "link", "set", a, "netns", self.ns["a"]])
                sh(["ip", "link", "set", b, "netns", self.ns["b"]])
                for node, name in (("a", a), ("b", b)):
                    dev = "eth%d" % i
                    self.ip(node, "link", "set", name, "name", dev)
                    self.ip(node, "addr", "add", self.addr(node, i) + "/24", "dev", dev)
                    self.ip(node, "link", "set", dev, "up")
                    if self.rate:
                        self.shape(node, dev, self.rate)
            return self
        except BaseException:
            self.close()
            raise

    def shape(self, node, dev, rate):
        """HTB at rate on dev's egress; GSO off so HTB sees wire-sized packets."""
        ns = self.ns[node]
        sh(["ip", "-n", ns, "link", "set", dev, "gso_max_size", "1500", "gso_max_segs", "1"],
           check=False)
        sh(["tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb",
            "default", "10"])
        sh(["tc", "-n", ns, "class", "add", "dev", dev, "parent", "1:", "classid", "1:10",
            "htb", "rate", rate, "ceil", rate, "quantum", "1514"])

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for ns in self.ns.values():
            sh(["ip", "netns", "del", ns], check=False)
        # veths die with their namespace; a half-made one may be left in the root
        for i in range(self.rails):
            for side in "ab":
                sh(["ip", "link", "del", "%s%s%d" % (self.tmp, side, i)], check=False)

    def run(self, node, cmd, timeout=120, **kw):
        return sh(["ip", "netns", "exec", self.ns[node]] + list(cmd), timeout=timeout,
                  check=False, **kw)

    def tx_bytes(self, node, dev):
        r = self.run(node, ["cat", "/sys/class/net/%s/statistics/tx_bytes" % dev], timeout=10)
        return int(r.stdout.strip())

    def counters(self):
        return {(n, i): self.tx_bytes(n, "eth%d" % i) for n in "ab" for i in range(self.rails)}


def leftover_namespaces():
    r = sh(["ip", "netns", "list"], check=False)
    return [l.split()[0] for l in r.stdout.splitlines() if l.startswith("locus-t%d-" % os.getpid())]
