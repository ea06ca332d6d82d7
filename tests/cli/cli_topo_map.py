#!/usr/bin/env python3
"""End-to-end tests of `locus topo` and `locus map`: JSON validity and
shape, the placement promises seen from the command line, and every kind of
bad input (one line on stderr, exit status 2, never a crash).

    cli_topo_map.py LOCUS_BINARY TOPOLOGY_DIR TMPDIR
"""
import glob
import json
import os
import random
import re
import subprocess
import sys

LOCUS, TOPO, TMP = sys.argv[1:4]
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def run(*args, env=None):
    return subprocess.run([LOCUS] + list(args), capture_output=True, text=True, timeout=60,
                          env=env)


def run_json(*args):
    out = run(*args)
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


for test in (test_mangled_xml, test_json_everywhere, test_lassen_map_nic, test_env_and_warnings,
             test_synonyms_and_table, test_bad_input):
    test()
print("No Errors" if failures == 0 else f"{failures} failure(s)")
sys.exit(1 if failures else 0)
