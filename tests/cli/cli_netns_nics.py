#!/usr/bin/env python3
"""Virtual NICs of this machine, in a real network namespace: `locus topo`
lists its veth, bridge-port and macvlan interfaces as virtual NICs (not lo,
the bridge, the ifb or the tap), `locus map` spreads ranks evenly over the
ones that are up with an IPv4 address and never uses one that is down or
has no address, --rails gives each rank distinct ones, and locusrun hands
every rank the plan's LOCUS_NET_IFACES.

    cli_netns_nics.py LOCUS_BINARY LOCUSRUN_BINARY

Needs root and iproute2 (exit 77, skipped, without them). The namespace is
named locus-nics-PID and always deleted.
"""
import json
import os
import shutil
import subprocess
import sys

LOCUS, LOCUSRUN = sys.argv[1:3]
NS = f"locus-nics-{os.getpid()}"
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def ip(*args, check=True):
    return subprocess.run(["ip", "-n", NS] + list(args), capture_output=True, text=True,
                          timeout=30, check=check)


def in_ns(*args, env=None):
    return subprocess.run(["ip", "netns", "exec", NS] + list(args), capture_output=True,
                          text=True, timeout=60, env=env)


def ns_json(*args):
    out = in_ns(LOCUS, *args)
    if out.returncode != 0:
        fail(f"{' '.join(args)} in {NS}: exit {out.returncode}: {out.stderr.strip()}")
        return None
    return json.loads(out.stdout)


ADDRS = {"va0": "198.18.7.1/24", "vb0": "198.18.7.2/24", "vc0": "198.18.8.1/24",
         "mv0": "198.18.7.3/24", "ve0": "198.18.9.1/24"}


def setup():
    """Up with addresses: va0/vb0 (a veth pair), vc0, mv0 (macvlan on va0).
    Up without one: vd0 (vc0's peer, a port of bridge br0). Down: ve0 (with
    an address), vf0. Not NICs: lo, br0, ifb7, tap7."""
    subprocess.run(["ip", "netns", "add", NS], check=True, capture_output=True, timeout=30)
    ip("link", "add", "va0", "type", "veth", "peer", "name", "vb0")
    ip("link", "add", "vc0", "type", "veth", "peer", "name", "vd0")
    ip("link", "add", "ve0", "type", "veth", "peer", "name", "vf0")
    ip("link", "add", "br0", "type", "bridge")
    ip("link", "set", "vd0", "master", "br0")
    ip("link", "add", "mv0", "link", "va0", "type", "macvlan")
    ip("link", "add", "ifb7", "type", "ifb")
    ip("tuntap", "add", "mode", "tap", "tap7")
    for dev in ("lo", "va0", "vb0", "vc0", "vd0", "br0", "mv0"):
        ip("link", "set", dev, "up")
    for dev, addr in ADDRS.items():
        ip("addr", "add", addr, "dev", dev)


def check_topo():
    t = ns_json("topo", "--json")
    if t is None:
        return None
    nics = {n["name"]: n for n in t["nics"]}
    want = {"va0", "vb0", "vc0", "vd0", "mv0", "ve0", "vf0"}
    if set(nics) != want:
        fail(f"NICs in {NS}: {sorted(nics)}, want {sorted(want)}")
    for name, n in nics.items():
        if not n["virtual"] or n["pci"] != "" or n["netdev"] != name:
            fail(f"{name} is not shown as a virtual NIC: {n}")
        if n["link_up"] != (name not in ("ve0", "vf0")):
            fail(f"{name}: link_up {n['link_up']}")
        if n["ipv4"] != (name in ADDRS):
            fail(f"{name}: ipv4 {n['ipv4']}")
    text = in_ns(LOCUS, "topo")
    if text.returncode or "va0" not in text.stdout or "virtual" not in text.stdout:
        fail(f"topo text in {NS}: {text.stdout}")
    return nics


def best_up(nics):
    """The candidates the ranking must pick: up with an address, then the
    fastest link."""
    up = [n for n in nics.values() if n["link_up"] is not False and n["ipv4"]]
    top = max(n["speed_mbps"] for n in up)
    return sorted(n["name"] for n in up if n["speed_mbps"] == top)


def check_map(nics):
    cand = best_up(nics)
    n = 2 * len(cand)
    doc = ns_json("map", "-n", str(n), "--map-by", "nic", "--oversubscribe", "--json")
    if doc:
        got = sorted(r["nic"]["name"] for r in doc["ranks"])
        if got != sorted(cand * 2):
            fail(f"--map-by nic over {cand}: ranks on {got}")
        for r in doc["ranks"]:
            if r["env"].get("LOCUS_NET_IFACES") != r["nic"]["name"]:
                fail(f"rank {r['rank']}: LOCUS_NET_IFACES {r['env'].get('LOCUS_NET_IFACES')}")
    doc = ns_json("map", "-n", "4", "--rails", "2", "--oversubscribe", "--json")
    if doc:
        for r in doc["ranks"]:
            names = r["env"].get("LOCUS_NET_IFACES", "").split(",")
            if len(names) != 2 or len(set(names)) != 2 or not set(names) <= set(cand):
                fail(f"--rails 2: rank {r['rank']} LOCUS_NET_IFACES {names}, candidates {cand}")
    return doc


def check_locusrun(plan):
    """The contract: each rank's environment carries the plan's interfaces."""
    out = in_ns(LOCUSRUN, "-n", "4", "--rails", "2", "--oversubscribe", "--timeout", "30", "sh",
                "-c", 'echo "rank=$LOCUS_RANK ifaces=$LOCUS_NET_IFACES"')
    if out.returncode != 0:
        fail(f"locusrun in {NS}: exit {out.returncode}: {out.stderr.strip()}")
        return
    got = sorted(line for line in out.stdout.splitlines() if line.startswith("rank="))
    want = sorted(f"rank={r['rank']} ifaces={r['env']['LOCUS_NET_IFACES']}" for r in plan["ranks"])
    if got != want:
        fail(f"locusrun ranks' LOCUS_NET_IFACES {got}, plan says {want}")


def main():
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("SKIPPED: needs root and iproute2")
        return 77
    try:
        setup()
        nics = check_topo()
        if nics:
            plan = check_map(nics)
            if plan:
                check_locusrun(plan)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        fail(f"{e}: {getattr(e, 'stderr', '')}")
    finally:
        subprocess.run(["ip", "netns", "del", NS], capture_output=True, timeout=30)
    print("No Errors" if failures == 0 else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
