#!/usr/bin/env python3
"""End-to-end tests of `locus topo` and `locus map`: JSON validity and
shape, the placement promises seen from the command line, and every kind of
bad input (one line on stderr, exit status 2, never a crash).

    cli_topo_map.py LOCUS_BINARY TOPOLOGY_DIR TMPDIR FIXTURE_DIR
"""
import glob
import json
import os
import random
import re
import subprocess
import sys

LOCUS, TOPO, TMP, FIXTURES = sys.argv[1:5]
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def run(*args, env=None):
    return subprocess.run([LOCUS] + list(args), capture_output=True, text=True, timeout=60,
                          env=env)


def with_env(**kv):
    env = dict(os.environ)
    env.update(kv)
    return env


def run_json(*args, env=None):
    out = run(*args, env=env)
    if out.returncode != 0:
        fail(f"{' '.join(args)}: exit {out.returncode}: {out.stderr.strip()}")
        return None
    try:
        return json.loads(out.stdout)
    except ValueError as e:
        fail(f"{' '.join(args)}: invalid JSON: {e}")
        return None


def topo(name):
    return os.path.join(TOPO, name)


def fixture(name):
    return os.path.join(FIXTURES, name)


def check_map_doc(doc, label, n):
    ranks = doc.get("ranks")
    if not isinstance(ranks, list) or len(ranks) != n:
        fail(f"{label}: ranks is not a list of {n}")
        return
    for i, r in enumerate(ranks):
        ok = (r.get("rank") == i and isinstance(r.get("cpus"), list) and r["cpus"]
              and all(isinstance(c, int) for c in r["cpus"])
              and isinstance(r.get("numa"), list) and all(isinstance(m, int) for m in r["numa"])
              and isinstance(r.get("env"), dict))
        rails = r.get("rails")
        ok = ok and isinstance(rails, list) and (rails[:1] == [r.get("nic")] if rails else r.get("nic") is None)
        for key in ("nic", "gpu"):
            d = r.get(key, "missing")
            ok = ok and (d is None or (isinstance(d, dict) and isinstance(d.get("name"), str)
                                       and "pci" in d and isinstance(d.get("osdevs"), list)))
        if not ok:
            fail(f"{label}: rank {i} has a bad shape: {r}")
            return


def test_json_everywhere():
    files = sorted(glob.glob(os.path.join(TOPO, "*.xml")))
    if len(files) < 7:
        fail(f"only {len(files)} topologies")
    for f in files + [None]:
        extra = ["--topology", f] if f else []
        t = run_json("topo", "--json", *extra)
        if t is not None and not (t.get("packages") and t.get("numa") and "nics" in t and "gpus" in t):
            fail(f"topo --json {f}: missing sections")
        text = run("topo", *extra)
        if text.returncode != 0 or "NUMA node" not in text.stdout:
            fail(f"topo {f}: text output: {text.stderr.strip()}")
        for n in (1, 4):
            doc = run_json("map", "-n", str(n), "--json", "--oversubscribe", *extra)
            if doc is not None:
                check_map_doc(doc, f"map -n {n} {f}", n)


def test_lassen_map_nic():
    """Done-criterion: each of the four HCAs gets two ranks, on its package."""
    t = run_json("topo", "--json", "--topology", topo("coral-lassen.xml"))
    doc = run_json("map", "-n", "8", "--map-by", "nic", "--topology", topo("coral-lassen.xml"), "--json")
    if t is None or doc is None:
        return
    nic_pkg = {n["name"]: n["package"] for n in t["nics"]}
    pkg_cpus = {p["os"]: set(p["cpus"]) for p in t["packages"]}
    count = {}
    for r in doc["ranks"]:
        nic = r["nic"]["name"]
        count[nic] = count.get(nic, 0) + 1
        if not set(r["cpus"]) <= pkg_cpus[nic_pkg[nic]]:
            fail(f"lassen map-by nic: rank {r['rank']} not on the package of {nic}")
        if r["env"].get("UCX_NET_DEVICES") != nic + ":1":
            fail(f"lassen: rank {r['rank']} UCX_NET_DEVICES {r['env'].get('UCX_NET_DEVICES')}")
        if "CUDA_VISIBLE_DEVICES" not in r["env"]:
            fail(f"lassen: rank {r['rank']} has no CUDA_VISIBLE_DEVICES")
    if count != {"mlx5_0": 2, "mlx5_1": 2, "mlx5_2": 2, "mlx5_3": 2}:
        fail(f"lassen map-by nic: NIC counts {count}")
    all_cpus = [c for r in doc["ranks"] for c in r["cpus"]]
    if len(all_cpus) != len(set(all_cpus)):
        fail("lassen map-by nic: ranks share PUs")


def test_env_and_warnings():
    q = run_json("map", "-n", "2", "--topology", topo("cts1-quartz-smt1.xml"), "--json")
    if q and any(r["env"].get("HFI_UNIT") != "0" for r in q["ranks"]):
        fail("quartz: HFI_UNIT=0 expected for hfi1_0")
    c = run_json("map", "-n", "8", "--topology", topo("epyc-corona.xml"), "--json")
    if c and any("ROCR_VISIBLE_DEVICES" not in r["env"] for r in c["ranks"]):
        fail("corona: ROCR_VISIBLE_DEVICES expected for AMD GPUs")
    m = run("map", "-n", "4", "--topology", topo("24em64t-2n6c2t-pci.xml"))
    if m.returncode != 0 or "another package" not in m.stderr:
        fail(f"mirage: expected a remote-NIC warning, got {m.stderr!r}")
    t = run_json("map", "-n", "4", "--cpus-per-rank", "3", "--topology", topo("coral-lassen.xml"), "--json")
    if t and any(r["env"].get("OMP_NUM_THREADS") != "3" or "OMP_PLACES" not in r["env"] for r in t["ranks"]):
        fail("OMP_NUM_THREADS/OMP_PLACES missing")
    nic = run_json("map", "-n", "4", "--nic", "mlx5_3", "--topology", topo("coral-lassen.xml"), "--json")
    if nic and any(r["nic"]["name"] != "mlx5_3" for r in nic["ranks"]):
        fail("--nic mlx5_3 not honoured")
    mem = run_json("map", "-n", "2", "--mem-on", "1", "--topology", topo("epyc-corona.xml"), "--json")
    if mem and any(r["numa"] != [1] for r in mem["ranks"]):
        fail("--mem-on 1 not honoured")


def test_synonyms_and_table():
    a = run("map", "-n", "6", "--topology", topo("epyc-corona.xml"), "--json")
    b = run("map", "-np", "6", "--topology", topo("epyc-corona.xml"), "--json")
    if a.returncode or a.stdout != b.stdout:
        fail("-np is not a synonym of -n")
    t = run("map", "-n", "3", "--topology", topo("coral-lassen.xml"))
    lines = t.stdout.strip().splitlines()
    if t.returncode or len(lines) != 5 or "PUs" not in lines[1] or "mlx5_0" not in lines[2]:
        fail(f"table output unexpected:\n{t.stdout}")
    d = run("topo", "--topology", topo("16amd64-8n2c-cpusets.xml"))
    if "disallowed PUs" not in d.stdout or "4,7-11" not in d.stdout:
        fail("topo does not mark the disallowed PUs of 16amd64")
    r = run_json("map", "-n", "2", "--restrict", "9,13", "--topology", topo("coral-lassen.xml"), "--json")
    if r and sorted(c for x in r["ranks"] for c in x["cpus"]) != [9, 13]:
        fail("--restrict 9,13 not honoured")


def test_bad_input():
    garbage = os.path.join(TMP, "cli-garbage.xml")
    with open(garbage, "w") as f:
        f.write("<topology><object type=")
    empty = os.path.join(TMP, "cli-empty.xml")
    open(empty, "w").close()
    lassen = topo("coral-lassen.xml")
    cases = [
        ["map", "-n", "4", "--bogus"],
        ["map", "-n", "4", "--map-by", "diagonal"],
        ["map", "-n", "4", "--map-by", "ppr:x:core"],
        ["map", "-n", "4", "--map-by", "ppr:2:moon"],
        ["map", "-n", "4", "--bind-to", "moon"],
        ["map", "-n", "4", "--map-by"],
        ["map", "-n", "0"],
        ["map", "-n", "-3"],
        ["map", "-n", "abc"],
        ["map", "-n", "4x"],
        ["map", "-n", "99999999999999999999"],
        ["map", "-n"],
        ["map", "--json"],
        ["map", "-n", "161", "--topology", lassen],
        ["map", "-n", "100000"],
        ["map", "-n", "4", "--cpus-per-rank", "0"],
        ["map", "-n", "4", "--cpus-per-rank", "two"],
        ["map", "-n", "4", "--cpus-per-rank", "500", "--topology", lassen],
        ["map", "-n", "4", "--mem-on", "99", "--topology", lassen],
        ["map", "-n", "4", "--mem-on", "x"],
        ["map", "-n", "4", "--nic", "mlx9_9", "--topology", lassen],
        ["map", "-n", "4", "--rails", "0", "--topology", lassen],
        ["map", "-n", "4", "--rails", "two", "--topology", lassen],
        ["map", "-n", "4", "--rails", "65", "--topology", lassen],
        ["map", "-n", "4", "--rails=", "--topology", lassen],
        ["map", "-n", "4", "--topology", lassen, "--rails"],
        ["map", "-n", "9", "--map-by", "ppr:2:socket", "--topology", lassen],
        ["map", "-n", "4", "--map-by", "nic", "--topology", topo("16amd64-8n2c-cpusets.xml")],
        ["map", "-n", "4", "--restrict", "0-7", "--topology", lassen],
        ["map", "-n", "4", "--restrict", "zz", "--topology", lassen],
        ["map", "-n", "4", "--topology", "/nonexistent/file.xml"],
        ["map", "-n", "4", "--topology", TMP],
        ["map", "-n", "4", "--topology", garbage],
        ["map", "-n", "4", "--topology", empty],
        ["map", "-n", "4", "--topology"],
        ["topo", "--bogus"],
        ["topo", "--topology"],
        ["topo", "--topology", "/nonexistent/file.xml"],
        ["topo", "--topology", garbage],
        ["topo", "--topology", empty],
        ["topo", "--json", "--topology", TMP],
    ]
    for args in cases:
        out = run(*args)
        lines = out.stderr.strip().splitlines()
        if out.returncode != 2 or len(lines) != 1 or out.stdout:
            fail(f"{args}: want exit 2 and one stderr line, got {out.returncode}, "
                 f"stderr {out.stderr!r}, stdout {out.stdout[:80]!r}")
        elif "Sanitizer" in out.stderr or "Segmentation" in out.stderr:
            fail(f"{args}: crashed")
    os.unlink(garbage)
    os.unlink(empty)
    # A FIFO is no topology, and reading one must not wait for a writer.
    fifo = os.path.join(TMP, "cli-fifo.xml")
    if os.path.exists(fifo):
        os.unlink(fifo)
    os.mkfifo(fifo)
    try:
        for args in (["topo", "--topology", fifo], ["map", "-n", "2", "--topology", fifo]):
            try:
                out = subprocess.run([LOCUS] + args, capture_output=True, text=True, timeout=20)
            except subprocess.TimeoutExpired:
                fail(f"{args}: hangs on a FIFO")
                continue
            if out.returncode != 2 or len(out.stderr.strip().splitlines()) != 1:
                fail(f"{args}: want exit 2 and one stderr line, got {out.returncode} {out.stderr!r}")
    finally:
        os.unlink(fifo)


def test_mangled_xml():
    """Truncated and mutated exports: exit 0 or 2, never a crash."""
    rng = random.Random(1234)
    path = os.path.join(TMP, "cli-mangled.xml")
    env = dict(os.environ)
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lsan-hwloc.supp")
    env["LSAN_OPTIONS"] = (env.get("LSAN_OPTIONS", "") + ":suppressions=" + supp
                           + ":print_suppressions=0").lstrip(":")
    for f in sorted(glob.glob(os.path.join(TOPO, "*.xml"))):
        with open(f) as fh:
            text = fh.read()
        lines = text.splitlines(True)
        variants = [text[:rng.randrange(len(text))] for _ in range(2)]
        for _ in range(2):
            ls = list(lines)
            for _ in range(rng.randrange(1, 8)):
                ls.pop(rng.randrange(len(ls)))
            variants.append("".join(ls))
        for _ in range(2):
            variants.append(re.sub(r'(cpuset|nodeset|os_index|local_memory|pci_busid|pci_type)="[^"]*"',
                                   lambda m: m.group(1) + '="' + rng.choice(
                                       ["0x0", "-1", "zz", "0xffffffff,0xffffffff", ""]) + '"'
                                   if rng.random() < 0.05 else m.group(0), text))
        for i, v in enumerate(variants):
            with open(path, "w") as fh:
                fh.write(v)
            for args in ((["topo", "--json"],) if i % 2 else ()) + \
                    (["map", "-n", "3", "--json", "--cpus-per-rank", "2"],):
                out = run(*args, "--topology", path, env=env)
                bad = out.returncode not in (0, 2) or "Sanitizer" in out.stderr \
                    or "runtime error" in out.stderr
                if out.returncode == 0 and "--json" in args:
                    try:
                        json.loads(out.stdout)
                    except ValueError:
                        bad = True
                if out.returncode == 2 and len(out.stderr.strip().splitlines()) != 1:
                    bad = True
                if bad:
                    keep = os.path.join(TMP, "cli-mangled-fail.xml")
                    with open(keep, "w") as fh:
                        fh.write(v)
                    fail(f"mangled {os.path.basename(f)} {args}: exit {out.returncode}, "
                         f"stderr {out.stderr[-300:]!r} (input kept in {keep})")
                    return
    os.unlink(path)


def nic_names(doc, rank):
    return [d["name"] for d in doc["ranks"][rank]["rails"]]


def test_rails():
    """--rails N: the N nearest NICs, primary first; LOCUS_RAILS; the contract
    variable LOCUS_NET_IFACES."""
    lassen = topo("coral-lassen.xml")
    t = run_json("topo", "--json", "--topology", lassen)
    one = run_json("map", "-n", "8", "--topology", lassen, "--json")
    two = run_json("map", "-n", "8", "--rails", "2", "--topology", lassen, "--json")
    four = run_json("map", "-n", "8", "--rails=4", "--topology", lassen, "--json")
    if not (t and one and two and four):
        return
    pkg = {n["name"]: n["package"] for n in t["nics"]}
    netdev = {n["name"]: n["netdev"] for n in t["nics"]}
    for r in range(8):
        a, b, c = nic_names(one, r), nic_names(two, r), nic_names(four, r)
        env = two["ranks"][r]["env"]
        if len(b) != 2 or b[0] != a[0] or pkg[b[0]] != pkg[b[1]] or b[0] == b[1]:
            fail(f"lassen --rails 2: rank {r} has {b} (one rail: {a})")
        if env.get("LOCUS_NET_IFACES") != ",".join(netdev[n] for n in b):
            fail(f"lassen --rails 2: rank {r} LOCUS_NET_IFACES {env.get('LOCUS_NET_IFACES')}")
        if env.get("UCX_NET_DEVICES") != ",".join(n + ":1" for n in b):
            fail(f"lassen --rails 2: rank {r} UCX_NET_DEVICES {env.get('UCX_NET_DEVICES')}")
        if sorted(c) != ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"] or c[:2] != b:
            fail(f"lassen --rails 4: rank {r} has {c}")
        if one["ranks"][r]["env"].get("LOCUS_NET_IFACES") != netdev[a[0]]:
            fail(f"lassen: rank {r} LOCUS_NET_IFACES {one['ranks'][r]['env'].get('LOCUS_NET_IFACES')}")
    seconds = sorted(nic_names(two, r)[1] for r in range(8))
    if seconds != ["mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1", "mlx5_2", "mlx5_2", "mlx5_3", "mlx5_3"]:
        fail(f"lassen --rails 2: second rails unbalanced: {seconds}")
    envd = run_json("map", "-n", "8", "--topology", lassen, "--json", env=with_env(LOCUS_RAILS="2"))
    if envd != two:
        fail("LOCUS_RAILS=2 differs from --rails 2")
    over = run_json("map", "-n", "8", "--rails", "1", "--topology", lassen, "--json",
                    env=with_env(LOCUS_RAILS="2"))
    if over != one:
        fail("--rails 1 does not override LOCUS_RAILS=2")
    if "2 rails" not in two.get("policy", ""):
        fail(f"policy does not say the rails: {two.get('policy')}")
    table = run("map", "-n", "2", "--rails", "2", "--topology", lassen)
    if table.returncode or "mlx5_0,mlx5_1" not in table.stdout:
        fail(f"table does not show the rails:\n{table.stdout}")
    many = run("map", "-n", "2", "--rails", "6", "--topology", lassen, "--json")
    if many.returncode or "each rank gets 4" not in many.stderr:
        fail(f"--rails 6 of 4 NICs: {many.returncode} {many.stderr!r}")
    for bad in ("x", "0", "65", "2k"):
        out = run("map", "-n", "2", "--topology", lassen, env=with_env(LOCUS_RAILS=bad))
        if out.returncode != 2 or "LOCUS_RAILS" not in out.stderr or len(out.stderr.strip().splitlines()) != 1:
            fail(f"LOCUS_RAILS={bad}: want exit 2 and one line naming it, got {out.returncode} {out.stderr!r}")
    fine = run("map", "-n", "2", "--rails", "1", "--topology", lassen, env=with_env(LOCUS_RAILS="x"))
    if fine.returncode != 0:
        fail("--rails on the command line should override a bad LOCUS_RAILS")


def test_fabric_choice():
    """InfiniBand, not the RoCE or management port beside it; equally near
    HCAs split a NUMA node's ranks even when far ranks use them too."""
    mixed = fixture("4n-mixed-fabric.xml")
    doc = run_json("map", "-n", "8", "--map-by", "numa", "--topology", mixed, "--json")
    if doc:
        nics = {r["rank"]: r["nic"]["name"] for r in doc["ranks"]}
        if any(n not in ("mlx5_0", "mlx5_2", "mlx5_3") for n in nics.values()):
            fail(f"mixed fabric: a rank got a NIC that is not an active InfiniBand HCA: {nics}")
        by_numa = {}
        for r in doc["ranks"]:
            by_numa.setdefault(r["home_numa"], []).append(r["nic"]["name"])
        for node in (2, 3):
            if sorted(by_numa.get(node, [])) != ["mlx5_2", "mlx5_3"]:
                fail(f"mixed fabric: NUMA {node}'s ranks on {by_numa.get(node)}, want one per HCA")
    roce = run_json("map", "-n", "4", "--nic", "ens1f1np1", "--topology", mixed, "--json")
    if roce and any(r["nic"]["name"] != "mlx5_1" or r["env"].get("LOCUS_NET_IFACES") != "ens1f1np1"
                    or r["env"].get("UCX_NET_DEVICES") != "mlx5_1:1" for r in roce["ranks"]):
        fail("--nic ens1f1np1 does not override the class ranking")
    t = run_json("topo", "--json", "--topology", mixed)
    if t:
        got = {n["name"]: (n["class"], n["rdma"], n["link_up"], n["management"]) for n in t["nics"]}
        want = {"mlx5_0": ("infiniband", True, True, False), "mlx5_1": ("ethernet", True, True, False),
                "eno1": ("ethernet", False, None, True), "mlx5_4": ("infiniband", True, False, False)}
        for name, w in want.items():
            if got.get(name) != w:
                fail(f"topo --json {name}: {got.get(name)}, want {w}")


def test_more_nics_than_cores():
    """8 SR-IOV functions on 2 cores: --map-by nic neither crashes nor stacks."""
    vfs = fixture("2c-8vfs.xml")
    for n in (1, 2, 8):
        extra = ["--oversubscribe"] if n > 2 else []
        doc = run_json("map", "-n", str(n), "--map-by", "nic", "--topology", vfs, "--json", *extra)
        if not doc:
            continue
        names = [r["nic"]["name"] for r in doc["ranks"]]
        if len(set(names)) != n:
            fail(f"2c-8vfs -n {n} --map-by nic: NICs {names}, want {n} different ones")
        if any(r["env"].get("LOCUS_NET_IFACES") != r["nic"]["name"] for r in doc["ranks"]):
            fail(f"2c-8vfs: LOCUS_NET_IFACES is not the VF's interface")
    virt = run_json("map", "-n", "6", "--map-by", "nic", "--rails", "3", "--oversubscribe",
                    "--topology", fixture("2n-virtual-nics.xml"), "--json")
    if virt:
        first = sorted(r["nic"]["name"] for r in virt["ranks"])
        if first != ["bond0", "bond0", "bond0.10", "bond0.10", "veth1", "veth1"]:
            fail(f"virtual NICs --map-by nic: {first}")
        if any(sorted(r["env"]["LOCUS_NET_IFACES"].split(",")) != ["bond0", "bond0.10", "veth1"]
               for r in virt["ranks"]):
            fail("virtual NICs --rails 3: every rank should list all three interfaces")


for test in (test_mangled_xml, test_json_everywhere, test_lassen_map_nic, test_env_and_warnings,
             test_synonyms_and_table, test_bad_input, test_rails, test_fabric_choice,
             test_more_nics_than_cores):
    test()
print("No Errors" if failures == 0 else f"{failures} failure(s)")
sys.exit(1 if failures else 0)
