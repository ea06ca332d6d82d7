#!/usr/bin/env python3
"""End-to-end tests of `locus tune` (self-calibration) and the tuned values
as `locus info` and the MPI library see them. Every case works on its own
LOCUS_TUNE_FILE (or XDG_CACHE_HOME/HOME) under TMPDIR: nothing is written
to the real cache. Measured numbers are checked as properties only.

    cli_tune.py CASE LOCUS LOCUSRUN OSU_BW TMPDIR [SHIM]
    CASE: measure | cache | options | one_cpu | cma_refused (SHIM: a
    library that makes process_vm_readv fail)
"""
import json
import os
import shutil
import subprocess
import sys

CASE, LOCUS, LOCUSRUN, OSU_BW, TMP = sys.argv[1:6]
CHUNKS = {"32k", "64k", "128k", "256k"}
TUNED = ("LOCUS_SHM_CHUNK_SIZE", "LOCUS_SHM_CMA_MIN", "LOCUS_SHM_CMA_MAX",
         "LOCUS_COLL_PAIR_MSG_MIN")
DEFAULTS = {"LOCUS_SHM_CHUNK_SIZE": "32k", "LOCUS_SHM_CMA_MIN": "1G", "LOCUS_SHM_CMA_MAX": "1024G",
            "LOCUS_COLL_PAIR_MSG_MIN": "2k"}
PAIR_SIZES = [2048, 4096, 8192, 16384]
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def env_with(**kv):
    env = {k: v for k, v in os.environ.items() if k not in TUNED and k != "LOCUS_TUNE_FILE"}
    for k, v in kv.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run(args, env, timeout=120, preexec=None):
    return subprocess.run([LOCUS] + args, capture_output=True, text=True, timeout=timeout,
                          env=env, preexec_fn=preexec)


def info(env):
    """`locus info --json` as (doc, rows by name, stderr)."""
    r = run(["info", "--json"], env)
    if r.returncode != 0:
        fail(f"locus info --json: exit {r.returncode}: {r.stderr.strip()}")
        return None, {}, r.stderr
    doc = json.loads(r.stdout)
    return doc, {row["name"]: row for row in doc["tunables"]}, r.stderr


def this_key():
    """This machine's key, found independently of Locus."""
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and ":" in line:
                cpu = line.split(":", 1)[1].strip() or "unknown"
                break
    return cpu, os.sysconf("SC_NPROCESSORS_ONLN"), os.uname().release


def cache_text(cpu=None, chunk="64k", cma_min="256k", pair=None):
    me = this_key()
    pair_lines = ("pair-sizes 2048 4096\ntime segment 1 2\ntime messages 2 1\n"
                  "set LOCUS_COLL_PAIR_MSG_MIN %s\n" % pair) if pair else ""
    return ("# made by cli_tune.py\nformat 1\ncpu %s\ncpus %d\nkernel %s\nmode quick\n"
            "sizes 65536 131072 262144\nrate pipe-64k 5 6 7\nrate cma 4 5 8\n"
            "set LOCUS_SHM_CHUNK_SIZE %s\nset LOCUS_SHM_CMA_MIN %s\n%send\n"
            % (cpu or me[0], me[1], me[2], chunk, cma_min, pair_lines))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def check_table(doc, label, expect_values=True):
    """Properties of a calibration table (tune --json / --show --json)."""
    sizes = doc.get("sizes", [])
    if not sizes or any(s < 16384 or s > 4 << 20 or s & (s - 1) for s in sizes):
        fail(f"{label}: sizes {sizes} are not powers of two in 16k..4M")
    names = [p["name"] for p in doc.get("paths", [])]
    if sorted(names) != sorted(["pipe-" + c for c in CHUNKS] + ["cma"]):
        fail(f"{label}: paths {names}")
    for p in doc.get("paths", []):
        rates = p["gbs"]
        if len(rates) != len(sizes) or any(r < 0 for r in rates):
            fail(f"{label}: {p['name']} rates {rates}")
        # A path that ran has positive rates; one that did not says why.
        if not any(r > 0 for r in rates) and not any(
                p["name"] in n or "CMA" in n or "budget" in n for n in doc["notes"]):
            fail(f"{label}: {p['name']} has no rate and no note says why")
    chosen = doc.get("chosen", {})
    if expect_values and "LOCUS_SHM_CHUNK_SIZE" not in chosen:
        fail(f"{label}: no chunk chosen (notes: {doc.get('notes')})")
    if "LOCUS_SHM_CHUNK_SIZE" in chosen and chosen["LOCUS_SHM_CHUNK_SIZE"] not in CHUNKS:
        fail(f"{label}: chunk {chosen['LOCUS_SHM_CHUNK_SIZE']} not among {sorted(CHUNKS)}")
    by_name = {("%dk" % (s >> 10) if s < 1 << 20 else "%dM" % (s >> 20)): s for s in sizes}
    allowed = set(by_name)
    if "LOCUS_SHM_CMA_MIN" in chosen:
        if chosen["LOCUS_SHM_CMA_MIN"] not in allowed | {"1024G"}:
            fail(f"{label}: CMA_MIN {chosen['LOCUS_SHM_CMA_MIN']} not a measured size or never")
    elif expect_values and not any("CMA" in n for n in doc["notes"]):
        fail(f"{label}: no CMA_MIN and no note says why")
    # A bound is a measured size above a CMA_MIN that is one too.
    cma_min, cma_max = chosen.get("LOCUS_SHM_CMA_MIN"), chosen.get("LOCUS_SHM_CMA_MAX")
    if cma_max is not None and (cma_max not in by_name or cma_min not in by_name
                                or by_name[cma_max] <= by_name[cma_min]):
        fail(f"{label}: CMA_MAX {cma_max} with CMA_MIN {cma_min}")
    check_pair(doc, label, expect_values)
    cpu, ncpus, kernel = this_key()
    if doc.get("key") != {"cpu": cpu, "cpus": ncpus, "kernel": kernel}:
        fail(f"{label}: key {doc.get('key')} is not this machine's {cpu, ncpus, kernel}")


def check_pair(doc, label, measured):
    """Properties of the pair's allreduce table: both ways at the pair sizes,
    positive times (or a note), a threshold among them or never."""
    sizes, ways = doc.get("pair_sizes"), doc.get("pair_ways")
    chosen = doc.get("chosen", {}).get("LOCUS_COLL_PAIR_MSG_MIN")
    if not measured:
        if sizes or ways or chosen:
            fail(f"{label}: pair measured on one CPU: {sizes} {ways} {chosen}")
        return
    if sizes != PAIR_SIZES or sorted(w["name"] for w in ways) != ["messages", "segment"]:
        fail(f"{label}: pair sizes {sizes}, ways {ways}")
        return
    for w in ways:
        if len(w["us"]) != len(sizes) or any(not 0 < t < 1000 for t in w["us"]):
            if not any("pair" in n or "budget" in n for n in doc["notes"]):
                fail(f"{label}: pair way {w} and no note says why")
    allowed = {"%dk" % (s >> 10) for s in sizes} | {"1024G"}
    if chosen is not None and chosen not in allowed:
        fail(f"{label}: LOCUS_COLL_PAIR_MSG_MIN {chosen} not among {sorted(allowed)}")
    if chosen is None and not any("LOCUS_COLL_PAIR_MSG_MIN" in n for n in doc["notes"]):
        fail(f"{label}: no LOCUS_COLL_PAIR_MSG_MIN and no note says why")
    # Above the threshold messages were within the noise of the segment.
    if chosen in allowed and chosen != "1024G":
        by = {w["name"]: w["us"] for w in ways}
        first = sizes.index(int(chosen[:-1]) << 10)
        for i in range(first, len(sizes)):
            if by["messages"][i] > by["segment"][i] * 1.05 + 1e-9:
                fail(f"{label}: messages chosen from {chosen} but slower at {sizes[i]}: {by}")
    r_text = doc.get("notes", [])
    if not any("imb" in n and "Allreduce" in n for n in r_text):
        fail(f"{label}: no note of the pair's setting: {r_text}")


def case_measure():
    path = os.path.join(TMP, "measure", "sub", "tune")
    shutil.rmtree(os.path.join(TMP, "measure"), ignore_errors=True)
    env = env_with(LOCUS_TUNE_FILE=path)
    r = run(["tune", "--quick", "--json"], env)
    if r.returncode != 0:
        fail(f"tune --quick: exit {r.returncode}: {r.stderr.strip()}")
        return
    if "[5/5]" not in r.stderr:
        fail(f"tune --quick: no progress lines on stderr: {r.stderr!r}")
    doc = json.loads(r.stdout)
    check_table(doc, "tune --quick")
    # The paths are timed on large messages, whatever the eager limit.
    if not any("LOCUS_SHM_EAGER_MAX=8192 (every size a large message)" in n
               for n in doc["notes"]):
        fail(f"tune --quick: no note of the eager limit it measured with: {doc['notes']}")
    if not doc["saved"] or doc["file"] != path or not os.path.exists(path):
        fail(f"tune --quick: not saved to {path}: {doc['file']} saved={doc['saved']}")
    chosen = doc["chosen"]

    # The next `locus info` takes the values, saying where they come from.
    idoc, rows, err = info(env)
    if idoc:
        if idoc["tune"] != {"file": path, "state": "used", "detail": ""}:
            fail(f"info: tune {idoc['tune']}")
        for name in TUNED:
            row = rows[name]
            if name in chosen:
                if (row["value"], row["source"], row.get("tuned")) != (chosen[name], "tuned",
                                                                        chosen[name]):
                    fail(f"info: {name} {row} after tune chose {chosen[name]}")
            elif row["source"] != "default" or row["value"] != DEFAULTS[name]:
                fail(f"info: {name} {row}: not chosen, so the default")
        if rows["LOCUS_SHM_POOL_SIZE"]["source"] != "default":
            fail("info: LOCUS_SHM_POOL_SIZE is not tuned")
        if err:
            fail(f"info: stderr {err!r}")

    # --show prints the same table without measuring.
    r = run(["tune", "--show", "--json"], env, timeout=20)
    if r.returncode != 0 or r.stderr:
        fail(f"tune --show: exit {r.returncode}: {r.stderr.strip()}")
    else:
        shown = json.loads(r.stdout)
        for k in ("sizes", "paths", "chosen", "notes", "key", "date", "mode"):
            if shown[k] != doc[k]:
                fail(f"tune --show: {k} {shown[k]} != measured {doc[k]}")
    r = run(["tune", "--show"], env, timeout=20)
    if r.returncode != 0 or "GB/s" not in r.stdout or "pipeline 64k" not in r.stdout:
        fail(f"tune --show (text): exit {r.returncode}: {r.stdout!r}")

    # The environment still wins, and both are shown.
    envo = dict(env, LOCUS_SHM_CHUNK_SIZE="8k")
    idoc, rows, _ = info(envo)
    if idoc and (rows["LOCUS_SHM_CHUNK_SIZE"]["value"], rows["LOCUS_SHM_CHUNK_SIZE"]["source"]) \
            != ("8k", "environment"):
        fail(f"info with LOCUS_SHM_CHUNK_SIZE=8k: {rows['LOCUS_SHM_CHUNK_SIZE']}")
    text = run(["info"], envo).stdout
    if "LOCUS_SHM_CHUNK_SIZE   8k       environment (tuned: %s)" % chosen.get(
            "LOCUS_SHM_CHUNK_SIZE") not in text:
        fail(f"info text: no 'environment (tuned: ...)' line:\n{text[:600]}")
    r = run(["tune", "--show"], envo, timeout=20)
    if "LOCUS_SHM_CHUNK_SIZE=8k is set in the environment" not in r.stdout:
        fail(f"tune --show with the variable set: no override note: {r.stdout!r}")


def library_sees(env, expect):
    """LOCUS_VERBOSE=1's line of a 2-rank job holds `expect`."""
    r = subprocess.run([LOCUSRUN, "-n", "2", OSU_BW, "-m", "65536:65536", "-i", "1", "-x", "0",
                        "-W", "1"], capture_output=True, text=True, timeout=60,
                       env=dict(env, LOCUS_VERBOSE="1"))
    if r.returncode != 0 or expect not in r.stderr:
        fail(f"MPI job: exit {r.returncode}, expected '{expect}' in: {r.stderr.strip()[:600]}")


def case_cache():
    base = os.path.join(TMP, "cache")
    shutil.rmtree(base, ignore_errors=True)
    path = os.path.join(base, "tune")
    env = env_with(LOCUS_TUNE_FILE=path)

    # Not measured yet: defaults, said.
    idoc, rows, err = info(env)
    if idoc and (idoc["tune"]["state"] != "missing" or err or
                 any(rows[n]["source"] != "default" for n in TUNED)):
        fail(f"missing cache: {idoc['tune']} {err!r}")
    r = run(["tune", "--show"], env)
    if r.returncode != 1 or len(r.stderr.splitlines()) != 1 or "locus tune" not in r.stderr:
        fail(f"tune --show without a cache: exit {r.returncode} {r.stderr!r}")

    # A cache of this machine: its values are the defaults, for locus info
    # and for the MPI library of every rank.
    write(path, cache_text(chunk="64k", cma_min="256k"))
    idoc, rows, err = info(env)
    if idoc and any((rows[n]["value"], rows[n]["source"]) != (v, "tuned")
                    for n, v in (("LOCUS_SHM_CHUNK_SIZE", "64k"), ("LOCUS_SHM_CMA_MIN", "256k"))):
        fail(f"this machine's cache: {[rows[n] for n in TUNED]}")
    library_sees(env, "single copy cma from 256k, pipeline 64k chunks")
    library_sees(dict(env, LOCUS_SHM_CMA_MIN="2M"), "single copy cma from 2M, pipeline 64k chunks")
    r = run(["tune", "--show", "--json"], env)
    if r.returncode != 0 or json.loads(r.stdout)["chosen"] != {
            "LOCUS_SHM_CHUNK_SIZE": "64k", "LOCUS_SHM_CMA_MIN": "256k"}:
        fail(f"tune --show on a made-up cache: exit {r.returncode} {r.stdout!r} {r.stderr!r}")

    # The pair's threshold from the cache steers the library's collectives
    # (coll_pair_way counts the pooled eager messages each way sends).
    pair_way = os.environ.get("LOCUS_TEST_PAIR_WAY")
    for value, way in (("1024G", "segment"), ("2k", "messages")):
        write(path, cache_text(pair=value))
        idoc, rows, _ = info(env)
        row = rows.get("LOCUS_COLL_PAIR_MSG_MIN", {})
        if idoc and (row.get("value"), row.get("source")) != (value, "tuned"):
            fail(f"cache with the pair's {value}: {row}")
        if pair_way:
            r = subprocess.run([LOCUSRUN, "-n", "2", pair_way, way], capture_output=True,
                               text=True, timeout=60, env=env)
            if r.returncode not in (0, 77):
                fail(f"coll_pair_way {way} with a cache of {value}: exit {r.returncode}: "
                     f"{(r.stdout + r.stderr).strip()[:600]}")

    # A cache of another machine is ignored, quietly (a shared home).
    for label, text in (("cpu", cache_text(cpu="Imaginary CPU 9000")),
                        ("kernel", cache_text().replace("\nkernel ", "\nkernel 0.0-other-")),
                        ("cpus", cache_text().replace("\ncpus ", "\ncpus 1"))):
        write(path, text)
        idoc, rows, err = info(env)
        if idoc and (idoc["tune"]["state"] != "foreign" or err or
                     any((rows[n]["value"], rows[n]["source"]) != (DEFAULTS[n], "default")
                         for n in TUNED)):
            fail(f"foreign {label}: {idoc['tune']} {[rows[n] for n in TUNED]} {err!r}")
        r = run(["tune", "--show"], env)
        if r.returncode != 1 or len(r.stderr.splitlines()) != 1 or "another machine" not in r.stderr:
            fail(f"tune --show, foreign {label}: exit {r.returncode} {r.stderr!r}")

    # A corrupt cache: one clear line on stderr, the defaults, no crash.
    for label, text in (("garbage", "\x00\x01garbage\n" * 3),
                        ("bad value", cache_text(chunk="lots")),
                        ("cut short", cache_text()[:-40]),
                        ("empty", "")):
        write(path, text)
        idoc, rows, err = info(env)
        lines = err.splitlines()
        if not idoc or len(lines) != 1 or "warning" not in lines[0] or path not in lines[0]:
            fail(f"corrupt ({label}): stderr {err!r}")
        elif idoc["tune"]["state"] != "corrupt" or any(
                (rows[n]["value"], rows[n]["source"]) != (DEFAULTS[n], "default") for n in TUNED):
            fail(f"corrupt ({label}): {idoc['tune']} {[rows[n] for n in TUNED]}")
        r = run(["tune", "--show"], env)
        if r.returncode != 1 or len(r.stderr.splitlines()) != 1:
            fail(f"tune --show, corrupt ({label}): exit {r.returncode} {r.stderr!r}")
    os.chmod(path, 0)
    if os.access(path, os.R_OK):  # root reads it anyway
        os.chmod(path, 0o600)
    else:
        _, _, err = info(env)
        if len(err.splitlines()) != 1 or "warning" not in err:
            fail(f"unreadable cache: stderr {err!r}")
        os.chmod(path, 0o600)

    # LOCUS_TUNE_FILE=none: no cache at all.
    idoc, rows, err = info(env_with(LOCUS_TUNE_FILE="none"))
    if idoc and (idoc["tune"]["state"] != "off" or idoc["tune"]["file"] != ""):
        fail(f"LOCUS_TUNE_FILE=none: {idoc['tune']}")

    # The default place: XDG_CACHE_HOME/locus, else ~/.cache/locus; one
    # file per machine key, found again by locus info.
    for var, sub in (("XDG_CACHE_HOME", os.path.join(base, "xdg")),
                     ("HOME", os.path.join(base, "home"))):
        e = env_with(XDG_CACHE_HOME=sub if var == "XDG_CACHE_HOME" else None,
                     HOME=sub if var == "HOME" else os.environ.get("HOME", "/nonexistent"))
        idoc, _, _ = info(e)
        want = os.path.join(sub, "locus") if var == "XDG_CACHE_HOME" else \
            os.path.join(sub, ".cache", "locus")
        f = idoc["tune"]["file"] if idoc else ""
        if os.path.dirname(f) != want or not os.path.basename(f).startswith("tune-"):
            fail(f"default place with {var}: {f}, expected {want}/tune-*")
            continue
        write(f, cache_text(chunk="32k"))
        idoc, rows, _ = info(e)
        if idoc and (rows["LOCUS_SHM_CHUNK_SIZE"]["value"], idoc["tune"]["state"]) != ("32k",
                                                                                       "used"):
            fail(f"default place with {var}: {idoc['tune']} {rows['LOCUS_SHM_CHUNK_SIZE']}")


def case_options():
    env = env_with(LOCUS_TUNE_FILE=os.path.join(TMP, "options", "tune"))
    for args in (["tune", "--bogus"], ["tune", "extra"], ["tune", "--show", "--quick"],
                 ["tune", "-q"]):
        r = run(args, env, timeout=20)
        if r.returncode != 2 or len(r.stderr.strip().splitlines()) != 1 or \
                not r.stderr.startswith("locus tune: ") or r.stdout:
            fail(f"{' '.join(args)}: exit {r.returncode}, stderr {r.stderr!r}")
    if os.path.exists(os.path.join(TMP, "options", "tune")):
        fail("a bad option still measured and wrote the cache")
    r = run(["tune", "--help"], env, timeout=20)
    if r.returncode != 0 or "usage: locus tune" not in r.stdout:
        fail(f"tune --help: exit {r.returncode}")
    r = run(["help"], env, timeout=20)
    if "tune" not in r.stdout:
        fail("locus help does not list tune")


def case_one_cpu():
    path = os.path.join(TMP, "one_cpu", "tune")
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    env = env_with(LOCUS_TUNE_FILE=path)
    cpu = sorted(os.sched_getaffinity(0))[-1]
    r = run(["tune", "--quick", "--json"], env, preexec=lambda: os.sched_setaffinity(0, {cpu}))
    if r.returncode != 0:
        fail(f"tune on one CPU: exit {r.returncode}: {r.stderr.strip()}")
        return
    doc = json.loads(r.stdout)
    check_table(doc, "tune on one CPU", expect_values=False)
    if doc["chosen"] or not any("one allowed CPU" in n for n in doc["notes"]):
        fail(f"tune on one CPU: chosen {doc['chosen']}, notes {doc['notes']}")
    if not any(r > 0 for p in doc["paths"] for r in p["gbs"]):
        fail("tune on one CPU: nothing measured")
    idoc, rows, _ = info(env)
    if idoc and (idoc["tune"]["state"] != "used" or
                 any(rows[n]["source"] != "default" for n in TUNED)):
        fail(f"info after tune on one CPU: {idoc['tune']} {[rows[n] for n in TUNED]}")
    r = run(["tune", "--show"], env)
    if "one allowed CPU" not in r.stdout or "nothing" not in r.stdout:
        fail(f"tune --show after one CPU: {r.stdout!r}")


def case_cma_refused():
    path = os.path.join(TMP, "cma_refused", "tune")
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    asan = os.environ.get("ASAN_OPTIONS", "")
    env = env_with(LOCUS_TUNE_FILE=path, LD_PRELOAD=sys.argv[6],
                   ASAN_OPTIONS=(asan + ":" if asan else "") + "verify_asan_link_order=0")
    r = run(["tune", "--quick", "--json"], env)
    if r.returncode != 0:
        fail(f"tune with CMA refused: exit {r.returncode}: {r.stderr.strip()}")
        return
    doc = json.loads(r.stdout)
    check_table(doc, "tune with CMA refused")
    cma = [p for p in doc["paths"] if p["name"] == "cma"][0]
    if any(cma["gbs"]) or not any("CMA refused" in n for n in doc["notes"]):
        fail(f"tune with CMA refused: cma rates {cma['gbs']}, notes {doc['notes']}")
    if "LOCUS_SHM_CMA_MIN" in doc["chosen"] or "LOCUS_SHM_CHUNK_SIZE" not in doc["chosen"]:
        fail(f"tune with CMA refused: chosen {doc['chosen']}")
    if "failed" not in r.stderr:
        fail(f"tune with CMA refused: progress does not say the CMA run failed: {r.stderr!r}")


{"measure": case_measure, "cache": case_cache, "options": case_options,
 "one_cpu": case_one_cpu, "cma_refused": case_cma_refused}[CASE]()
if failures:
    sys.exit(1)
print(" No Errors")
