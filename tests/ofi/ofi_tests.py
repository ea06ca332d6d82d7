#!/usr/bin/env python3
"""ofi_tests.py CASE LOCUSRUN SHIM PROG... -- the libfabric transport
(src/transport/ofi) on one node, through libfabric's software providers
over loopback (domain lo): real processes, real provider, real sockets.

Cases:
  local     the programs (each "path args", one word) at 3 ranks with the
            tcp (tcp;ofi_rxm) and udp (udp;ofi_rxd) providers, large
            messages pushed, by RMA read and by tagged rendezvous
            (LOCUS_OFI_RMA=off), eager ones to 64 KiB; a stream whose
            pushes go in batches of announcements; and rank 1 alone with
            other tunables (eager sizes, classes, no RMA)
  local2    the same on libfabric 2's own tcp provider (PyPI MPICH's, when
            present): its defaults, and one big receive buffer
  mr_modes  what real fabrics ask of memory registration, made to happen
            here by SHIM (an LD_PRELOADed fi_getinfo/fi_fabric, see
            ofi_mode_shim.c): FI_MR_LOCAL, FI_MR_VIRT_ADDR, FI_MR_PROV_KEY,
            FI_MR_ENDPOINT and all of them, on providers that then enforce
            them (sockets, udp); a provider without FI_RMA, and one
            without remote CQ data (eager messages keep their heads)
  tiny      the stress and collective checks with 4 buffers each way
  classes   traffic classes (LOCUS_QOS=static): an endpoint of the latency
            class for control and small messages and one of the bulk class
            for large messages' data, as labels and as DSCP values; with
            FI_MR_ENDPOINT the data's registrations are bound to the second.
            LOCUS_QOS=adaptive: a normal-class endpoint and a latency one,
            probes answered, what paths judged congested raise delivered in
            order, the budget refusing every raise at a share of 0
  errors    bad provider, domain and tunables: one line each, exit 2
  pci       the domain found by its NIC's PCI address (LOCUS_NIC_PCI)
Skips (77) when libfabric has no tcp/udp provider here.
"""
import os
import re
import subprocess
import sys

CASE, LOCUSRUN, SHIM = sys.argv[1:4]
PROGS = sys.argv[4:]
FAILURES = []
FI_MR_LOCAL, FI_MR_VIRT_ADDR, FI_MR_PROV_KEY, FI_MR_ENDPOINT = 0x4, 0x10, 0x40, 0x200


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)
    return cond


def run(nranks, prog, env, timeout=180):
    e = dict(os.environ, LOCUS_TRANSPORTS="self,ofi", LOCUS_OFI_DOMAIN="lo", LOCUS_VERBOSE="1",
             LOCUS_YIELD="always")
    e.update(env)
    p = subprocess.run([LOCUSRUN, "--oversubscribe", "-n", str(nranks)] + prog.split(),
                       capture_output=True, text=True, timeout=timeout, env=e,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def providers():
    have = []
    for prov in ("tcp", "udp", "sockets"):
        p = subprocess.run(["fi_info", "-p", prov, "-t", "FI_EP_RDM"], capture_output=True,
                           text=True)
        if p.returncode == 0 and "provider:" in p.stdout:
            have.append(prov)
    return have


def described(err):
    """The verbose line's description of the ofi transport, per rank."""
    return re.findall(r"ofi \d+ peers? \[([^\]]*)\]", err)


def adaptive_counts(err):
    """Each rank's adaptive-class counters (its finalize line): probes,
    longest probe (us), times congested, raised, refused, and messages
    received in the latency class."""
    m = re.findall(r"ofi: adaptive classes: (\d+) probes \(longest (\d+) us\), (\d+) times "
                   r"congested, (\d+) raised, (\d+) refused by the budget; (\d+) received in "
                   r"the latency class", err)
    return [tuple(int(x) for x in t) for t in m]


def compacted(err):
    """Each rank's count of messages sent compact (its finalize line)."""
    return [int(n) for n in re.findall(r"; (\d+) sent compact", err)]


def check_compacted(err, on, label):
    """Every rank sent compact messages (every program has small ones), or,
    with compact off, none did (a rank with nothing to count prints no
    finalize line)."""
    sent = compacted(err)
    check(len(sent) == 3 and all(n > 0 for n in sent) if on else not any(sent),
          "%s: messages sent compact per rank %s" % (label, sent))


def run_program(label, prog, env):
    """A program at 3 ranks, which must end with " No Errors": its name,
    each rank's description of the transport, and its stderr."""
    rc, out, err = run(3, prog, env)
    how = described(err)
    name = os.path.basename(prog.split()[0])
    print("%s, %s: exit %d, %s" % (label, name, rc, how[0] if how else "no ofi line"))
    check(rc == 0 and " No Errors" in out, "%s, %s: exit %d\n%s\n%s" % (
        label, name, rc, out[-1500:], err[-1500:]))
    return name, how, err


def case_local(provs):
    if "tcp" in provs:
        stream_batched({"FI_PROVIDER": "tcp"}, "tcp")
    mixed_settings(provs)
    for prov in [p for p in ("tcp", "udp") if p in provs]:
        # Each path for large messages: pushed (the default over tcp), read,
        # tagged rendezvous. ofi_rxd (udp): "auto" is the tagged rendezvous;
        # its emulated reads, asked for with "on", carry the large messages
        # of the programs that are not the stress test. Pushed payloads
        # over ofi_rxd stalled the stress test in 4 and in 6 runs of 8
        # (docs/ofi.md).
        # Eager to 64 KiB (the default on libfabric 2's own tcp provider):
        # payloads above 16 KiB sent from the caller's buffer. Not pushed:
        # over ofi_rxm pushes keep eager messages within rxm's buffers.
        # Plain eager messages compact (heads in the tag and CQ data) by
        # default over tcp, to 16 KiB; with LOCUS_OFI_COMPACT=off, and over
        # ofi_rxd, every one carries its heads (the path of synchronous
        # sends and control messages).
        paths = ((("auto", "auto", "16k", "auto", "large pushed, else by RMA read"),
                  ("auto", "auto", "16k", "off", "large pushed, else by RMA read"),
                  ("off", "auto", "64k", "auto", "eager to 65536 (above 16384 sent in place)"),
                  ("off", "auto", "16k", "auto", "large by RMA read"),
                  ("off", "off", "16k", "auto", "large by tagged rendezvous")) if prov == "tcp"
                 else (("auto", "auto", "16k", "auto", "large by tagged rendezvous"),
                       ("off", "on", "16k", "auto", "large by RMA read")))
        for push, rma, eager, compact, want in paths:
            for prog in PROGS if rma != "on" else [p for p in PROGS if "mpi_stress" not in p]:
                label = "%s push=%s rma=%s compact=%s" % (prov, push, rma, compact)
                name, how, err = run_program(label, prog, {
                    "FI_PROVIDER": prov, "LOCUS_OFI_RMA": rma, "LOCUS_OFI_PUSH": push,
                    "LOCUS_OFI_EAGER_MAX": eager, "LOCUS_OFI_COMPACT": compact,
                    "LOCUS_OFI_CHUNK_SIZE": "256k"})
                label += " " + name
                # Not over ofi_rxd by "auto" (its tagged path stalls).
                packed = "compact to %d" % (16384 if eager == "16k" else 16576)
                packs = compact != "off" and prov == "tcp"
                check(len(how) == 3 and all(h.startswith(prov) and " on lo " in h and want in h
                                            and (packed in h) == packs
                                            for h in how),
                      "%s: not every rank on ofi/%s over lo with %s, %s %s: %s" % (
                          label, prov, want, "and" if packs else "without",
                          packed, how))
                check_compacted(err, packs, label)


def libfabric2():
    """The folder of PyPI MPICH's libfabric 2 (scripts/bootstrap installs
    it for the benchmarks), or None: its own tcp provider, without
    ofi_rxm, is where eager messages go to 64 KiB by default."""
    d = os.path.join(os.environ.get("LOCUS_BENCH_MPICH5", "/opt/locus-peers/mpich-5"),
                     "lib", "mpich")
    return d if os.path.exists(os.path.join(d, "libfabric.so.1")) else None


def case_local2(provs):
    """The programs at 3 ranks on libfabric 2's own tcp provider (when
    present): its defaults (eager to 64 KiB, in place above 16 KiB, large
    pushed to 256 KiB and read above), and with one big receive buffer,
    which every eager message above 16 KiB then waits for; then on its
    shm provider."""
    lib = libfabric2()
    if not lib:
        print("SKIPPED: no libfabric 2 here (PyPI's MPICH, scripts/bootstrap)")
        sys.exit(77)
    stream_batched({"FI_PROVIDER": "tcp", "LD_LIBRARY_PATH": lib}, "libfabric 2 tcp")
    stream_read_above({"FI_PROVIDER": "tcp", "LD_LIBRARY_PATH": lib})
    for big in ("8", "1"):
        for prog in PROGS:
            name, how, err = run_program("libfabric 2 tcp, %s big buffers" % big, prog,
                                         {"FI_PROVIDER": "tcp", "LD_LIBRARY_PATH": lib,
                                          "LOCUS_OFI_RX_BIG_BUFS": big})
            want = ("large pushed to 262144, else by RMA read, eager to 65536 "
                    "(above 16384 sent in place)")
            check(len(how) == 3 and all(h.startswith("tcp on lo ") and want in h for h in how),
                  "libfabric 2 %s: not every rank on its own tcp with %s: %s" % (name, want, how))
    shm_provider(lib)


def shm_provider(lib):
    """The programs at 3 ranks on libfabric 2's shm provider, the bench's
    stand-in for a fabric whose messages cost less than copies: eager
    messages stay within its 4 KiB inject size, heads and all (the core's
    header may take 48 bytes, the short head 16), compact ones (no heads
    in front) to 4096 bytes; and with compact messages off."""
    env = {"FI_PROVIDER": "shm", "LD_LIBRARY_PATH": lib, "LOCUS_OFI_DOMAIN": ""}
    stream_batched(env, "libfabric 2 shm")
    mixed_compact(env, "libfabric 2 shm")
    # Compact (the default): a 4096-byte payload within the inject size
    # too, its heads in the tag and CQ data; off: every message with them.
    for compact, want in (("auto", "large pushed, else by RMA read, eager to 4032, "
                                   "compact to 4096,"),
                          ("off", "large pushed, else by RMA read, eager to 4032, pushes")):
        for prog in PROGS:
            label = "libfabric 2 shm, compact %s" % compact
            name, how, err = run_program(label, prog, dict(env, LOCUS_OFI_COMPACT=compact))
            check(len(how) == 3 and all(h.startswith("shm on shm ") and want in h for h in how),
                  "libfabric 2 shm %s: not every rank on shm with %s: %s" % (name, want, how))
            check_compacted(err, compact == "auto", "%s, %s" % (label, name))


def rank1_differs(env, rank1):
    """The stress test at 3 ranks, rank 1 alone with the tunables rank1 (set
    differently on one node): (rc, stdout, stderr)."""
    import tempfile
    stress = [p for p in PROGS if "mpi_stress" in p][0]
    with tempfile.TemporaryDirectory(prefix="locus-ofi-") as d:
        wrap = os.path.join(d, "rank1.sh")
        with open(wrap, "w") as f:
            f.write('#!/bin/sh\n[ "$PMI_RANK" = 1 ] && export %s\nexec "$@"\n'
                    % " ".join("%s=%s" % kv for kv in rank1.items()))
        os.chmod(wrap, 0o755)
        return run(3, wrap + " " + stress, env)


def mixed_settings(provs):
    """Rank 1 alone with other tunables. Buffer sizes: eager to 1 KiB
    (small buffers of 1 KiB), to 64 KiB (big buffers the others lack), or
    static classes (eager to 1 KiB, no big buffers): each card says what
    the rank's buffers take, and a peer sends it eager only what fits (else
    announced); before, ofi_rxm failed the job with a truncation and
    ofi_rxd delivered 49 messages cut short. Adaptive classes among ranks
    without (raised messages to their only endpoint), among static ones
    (to their latency endpoint, data to their bulk one), and static or no
    classes among adaptive ones (probes answered). No RMA and no pushes:
    its announcements carry no keys, and the others answer them with CTS
    (before, they read with key 0: ofi_rxm failed the job)."""
    adaptive = {"LOCUS_QOS": "adaptive", "LOCUS_QOS_DELAY_US": "1"}
    static = {"LOCUS_QOS": "static"}
    for prov in [p for p in ("tcp", "udp") if p in provs]:
        for base, rank1 in (({}, {"LOCUS_OFI_EAGER_MAX": "1k"}),
                            ({}, {"LOCUS_OFI_EAGER_MAX": "64k"}), ({}, static), ({}, adaptive),
                            (static, adaptive), (adaptive, static),
                            (adaptive, {"LOCUS_QOS": "off"}),
                            ({}, {"LOCUS_OFI_RMA": "off", "LOCUS_OFI_PUSH": "off"})):
            rc, out, err = rank1_differs(dict(base, FI_PROVIDER=prov), rank1)
            name = "%s, %s, rank 1 alone with %s" % (prov, base or "defaults", rank1)
            print("%s: exit %d" % (name, rc))
            check(rc == 0 and " No Errors" in out, "%s: exit %d\n%s\n%s"
                  % (name, rc, out[-1000:], err[-1500:]))


def mixed_compact(env, label):
    """The stress test at 3 ranks with rank 1 alone on LOCUS_OFI_COMPACT=off:
    each rank's card says what it takes, so ranks 0 and 2 send compact to
    each other and never to rank 1; every message arrives."""
    rc, out, err = rank1_differs(env, {"LOCUS_OFI_COMPACT": "off"})
    how = described(err)
    print("%s, compact off on rank 1 only: exit %d, %s" % (label, rc, how))
    check(rc == 0 and " No Errors" in out, "%s, compact off on rank 1: exit %d\n%s\n%s" % (
        label, rc, out[-1000:], err[-1500:]))
    check(len(how) == 3 and sum("compact to" in h for h in how) == 2,
          "%s, compact off on rank 1: descriptions %s" % (label, how))
    sent = compacted(err)
    check(len(sent) >= 2 and sorted(sent)[-2] > 0,
          "%s, compact off on rank 1: sent compact per rank %s" % (label, sent))


def batches(err):
    """Each rank's (pushed, announced in batches) from its last verbose line
    (which also counts the payloads that came before their receive was
    posted: at most what the other rank pushed)."""
    got = re.findall(r"ofi: (\d+) payloads pushed, (\d+) announced in batches; "
                     r"(\d+) received before their receive was posted", err)
    pushed = sum(int(a) for a, _, _ in got)
    check(all(int(c) <= pushed - int(a) for a, _, c in got),
          "early payloads beyond what the other ranks pushed: %s" % got)
    return [(int(a), int(b)) for a, b, _ in got]


def stream_batched(env, label):
    """rail_stream at 2 ranks, eager to 1 KiB (and to 0): every round
    pushes 4 KiB, 60 KiB, 256 KiB and 2 MiB back to back, so all but the
    first wait for the next progress call and go as one batch of
    announcements; every byte and the order are checked by the program."""
    stream = os.environ["LOCUS_TEST_RAIL_STREAM"]
    # Eager to 0: the 8-byte message pushed too, the buffers at their
    # smallest (one announcement's batch).
    # Every size pushed (on tcp itself "auto" reads what is above 256 KiB).
    for batch, eager in (("auto", "1k"), ("off", "1k"), ("auto", "0")):
        rc, out, err = run(2, stream + " 40", dict(env, LOCUS_OFI_EAGER_MAX=eager,
                                                   LOCUS_OFI_BATCH=batch,
                                                   LOCUS_OFI_PUSH_MAX="4m"))
        got, how = batches(err), described(err)
        print("%s rail_stream, eager to %s, batches %s: exit %d, (pushed, batched) per rank %s"
              % (label, eager, batch, rc, got))
        check(rc == 0 and " No Errors" in out, "%s rail_stream: exit %d\n%s\n%s" % (
            label, rc, out[-1000:], err[-1500:]))
        check(len(how) == 2 and all(("pushes batched" in h) == (batch == "auto") for h in how),
              "%s rail_stream, batches %s: verbose lines %s" % (label, batch, how))
        # 4 pushes a round each way (5 when eager to 0, and the job's own
        # messages with a payload); the first of a round may go at once.
        n = 40 * (5 if eager == "0" else 4)
        check(len(got) == 2 and all((p == n or (eager == "0" and n <= p <= n + 8)) and
                                    (b >= n // 2 if batch == "auto" else b == 0)
                                    for p, b in got),
              "%s rail_stream, batches %s: pushes and batched ones %s" % (label, batch, got))


def stream_read_above(env):
    """rail_stream at 2 ranks on tcp itself with LOCUS_OFI_PUSH_MAX at
    "auto" (256 KiB): each round's 4 KiB, 60 KiB and 256 KiB messages are
    pushed, its 2 MiB one read; every byte and the order checked."""
    stream = os.environ["LOCUS_TEST_RAIL_STREAM"]
    rc, out, err = run(2, stream + " 40", dict(env, LOCUS_OFI_EAGER_MAX="1k"))
    got, how = batches(err), described(err)
    print("libfabric 2 tcp rail_stream, pushes to 256 KiB: exit %d, (pushed, batched) per rank %s"
          % (rc, got))
    check(rc == 0 and " No Errors" in out, "rail_stream, pushes to 256 KiB: exit %d\n%s\n%s" % (
        rc, out[-1000:], err[-1500:]))
    check(len(how) == 2 and all("large pushed to 262144, else by RMA read" in h for h in how),
          "rail_stream, pushes to 256 KiB: verbose lines %s" % how)
    check(len(got) == 2 and all(p == 40 * 3 for p, _ in got),
          "rail_stream, pushes to 256 KiB: %s pushed per rank, want 120 (2 MiB read)" % got)


def case_tiny(provs):
    """Every limit hit: 4 send and 4 receive buffers (4 compact), eager to 1 KiB, reads
    of 16 KiB: sends wait for room, control messages and reads wait on
    their backlogs. Then the stress test with adaptive classes, every path
    congested: raises compete for the latency class's buffers and fall
    back to the normal class's 4."""
    tiny = {"LOCUS_OFI_TX_BUFS": "4", "LOCUS_OFI_RX_BUFS": "4", "LOCUS_OFI_RX_COMPACT_BUFS": "4",
            "LOCUS_OFI_EAGER_MAX": "1k", "LOCUS_OFI_CHUNK_SIZE": "16k"}
    adaptive = {"LOCUS_QOS": "adaptive", "LOCUS_QOS_DELAY_US": "1", "LOCUS_QOS_PROBE_US": "100"}
    for prov in [p for p in ("tcp", "udp") if p in provs]:
        for prog, extra in [(p, {}) for p in PROGS[1:3]] + [(PROGS[1], adaptive)]:
            # Over ofi_rxd the reads: its tagged rendezvous with 4 buffers
            # each way stalled in half the runs here (docs/ofi.md).
            rc, out, err = run(4, prog, dict(tiny, FI_PROVIDER=prov,
                                             LOCUS_OFI_RMA="on" if prov == "udp" else "auto",
                                             **extra))
            name = os.path.basename(prog.split()[0]) + (" adaptive" if extra else "")
            print("%s tiny %s: exit %d" % (prov, name, rc))
            check(rc == 0 and " No Errors" in out, "%s tiny %s: exit %d\n%s\n%s" % (
                prov, name, rc, out[-1000:], err[-1500:]))


def case_classes(provs):
    """LOCUS_QOS=static: two endpoints per rank, the verbose line names
    their tclass values; messages over LOCUS_QOS_SMALL (1 KiB) take the
    rendezvous, whose data goes over the bulk endpoint (by RMA read and
    by tagged rendezvous); the programs' checked bytes all arrive. A bad
    LOCUS_OFI_TCLASS stops MPI_Init in one line."""
    for prov in [p for p in ("tcp", "udp") if p in provs]:
        for tclass, want in (("label", "tclass 0x201/0x203"), ("dscp", "tclass 0x12e/0x108")):
            for rma in ("auto", "off"):
                # DSCP values only change what the provider is told: one program.
                for prog in PROGS[:3] if tclass == "label" else PROGS[:1]:
                    rc, out, err = run(3, prog, {"FI_PROVIDER": prov, "LOCUS_QOS": "static",
                                                 "LOCUS_OFI_TCLASS": tclass,
                                                 "LOCUS_OFI_RMA": rma})
                    how = described(err)
                    name = os.path.basename(prog.split()[0])
                    print("%s %s rma=%s %s: exit %d, %s" % (prov, tclass, rma, name, rc,
                                                            how[0] if how else "no ofi line"))
                    check(rc == 0 and " No Errors" in out, "%s %s rma=%s %s: exit %d\n%s\n%s"
                          % (prov, tclass, rma, name, rc, out[-1500:], err[-1500:]))
                    check(len(how) == 3 and all("classes static " + want in h and
                                                "eager to 1024" in h for h in how),
                          "%s %s: not every rank with classes (%s), eager to 1024: %s"
                          % (prov, tclass, want, how))
    adaptive_classes(provs)
    if "udp" in provs:
        bits = FI_MR_ENDPOINT | FI_MR_LOCAL
        # Adaptive: every path judged congested at once, so that raised
        # messages go from the latency class's buffers (their own
        # registration, bound to its endpoint).
        for mode, prog in (("static", PROGS[0]), ("adaptive", PROGS[1])):
            rc, out, err = run(2, prog, {"FI_PROVIDER": "udp", "LD_PRELOAD": SHIM,
                                         "LOCUS_TEST_FI_MR_MODE": hex(bits),
                                         "LOCUS_QOS": mode, "LOCUS_QOS_DELAY_US": "1"})
            regs = shim_line(err)
            raised = sum(c[3] for c in adaptive_counts(err))
            print("udp classes %s, FI_MR_ENDPOINT|FI_MR_LOCAL: exit %d; %s; %d raised"
                  % (mode, rc, regs, raised))
            check(rc == 0 and " No Errors" in out and len(regs) == 2 and
                  all(r[0] > 0 and r[2] == r[0] and r[3] == r[0] for r in regs) and
                  (mode == "static" or raised > 0),
                  "classes %s with FI_MR_ENDPOINT: exit %d, %s, %d raised\n%s"
                  % (mode, rc, regs, raised, err[-1500:]))
    rc, out, err = run(2, PROGS[0], {"LOCUS_QOS": "static", "LOCUS_OFI_TCLASS": "gold"},
                       timeout=60)
    lines = [l for l in err.splitlines() if "MPI_Init" in l]
    check(rc != 0 and lines and "LOCUS_OFI_TCLASS=gold: expected label or dscp" in lines[0],
          "LOCUS_OFI_TCLASS=gold: exit %d, %r" % (rc, err[-600:]))


def adaptive_classes(provs):
    """LOCUS_QOS=adaptive: ep in the normal class, an endpoint of the
    latency class beside it, eager sizes as without classes. With a delay
    of 1 us every path is congested at its first probe's wait (3 ranks on
    2 cores: replies take milliseconds), so small messages and control go
    raised, overtaking what the normal class still carries: the programs'
    order and bytes checked. At LOCUS_QOS_SHARE=0 and LOCUS_QOS_FLOOR=0 the
    budget refuses every raise."""
    for prov in [p for p in ("tcp", "udp") if p in provs]:
        runs = [(prog, tclass, {}) for prog in PROGS[:3] for tclass in ("label",)]
        runs += [(PROGS[1], "dscp", {}),
                 (PROGS[1], "label", {"LOCUS_QOS_SHARE": "0", "LOCUS_QOS_FLOOR": "0"})]
        for prog, tclass, extra in runs:
            env = dict({"FI_PROVIDER": prov, "LOCUS_QOS": "adaptive", "LOCUS_QOS_DELAY_US": "1",
                        "LOCUS_QOS_PROBE_US": "100", "LOCUS_OFI_TCLASS": tclass}, **extra)
            rc, out, err = run(3, prog, env)
            how, counts = described(err), adaptive_counts(err)
            name = "%s %s adaptive %s%s" % (prov, tclass, os.path.basename(prog.split()[0]),
                                            " share 0" if extra else "")
            print("%s: exit %d, counts %s" % (name, rc, counts))
            want = "classes adaptive tclass " + ("0x200/0x201" if tclass == "label"
                                                 else "0x100/0x12e")
            check(rc == 0 and " No Errors" in out, "%s: exit %d\n%s\n%s"
                  % (name, rc, out[-1500:], err[-1500:]))
            check(len(how) == 3 and all(want in h and "eager to 1024," not in h for h in how),
                  "%s: not every rank with %s (eager sizes as without classes): %s"
                  % (name, want, how))
            total = [sum(c[i] for c in counts) for i in range(6)]
            check(len(counts) == 3 and total[0] > 0 and total[2] > 0,
                  "%s: no probe answered or no path congested: %s" % (name, counts))
            if extra:
                check(total[3] == 0 and total[4] > 0,
                      "%s: the budget let raises through: %s" % (name, counts))
            else:
                # What was raised came in the latency class's buffers (with
                # the probes' answers).
                check(total[3] > 0 and total[5] >= total[3],
                      "%s: nothing raised, or not received in the latency class: %s"
                      % (name, counts))


def case_pci(provs):
    """A fabric's domain is found by its NIC's PCI address (the plan's
    LOCUS_NIC_PCI), whatever its name: the shim gives domain lo a NIC at
    0000:04:00.0, the plan names a NIC (hfi1_0) no domain is called; the
    ranks open lo, "by PCI address". An address no domain has: the names
    decide, as before."""
    prov = "tcp" if "tcp" in provs else provs[0]
    base = {"FI_PROVIDER": prov, "LD_PRELOAD": SHIM, "LOCUS_OFI_DOMAIN": "",
            "LOCUS_NIC": "hfi1_0", "LOCUS_NET_IFACES": "", "LOCUS_TEST_FI_NIC_PCI":
            "lo=0000:04:00.0"}
    for pci, want in (("0000:04:00.0", "on lo (the plan's NIC, by PCI address)"),
                      ("0000:04:00.0,-", "on lo (the plan's NIC, by PCI address)"),
                      ("0000:81:00.0", "(the provider's first)")):
        rc, out, err = run(2, PROGS[0], dict(base, LOCUS_NIC_PCI=pci))
        how = described(err)
        print("LOCUS_NIC_PCI=%s: exit %d, %s" % (pci, rc, how[:1]))
        check(rc == 0 and " No Errors" in out and len(how) == 2 and
              all(want in h for h in how),
              "LOCUS_NIC_PCI=%s: want every rank %r: exit %d, %s\n%s" % (
                  pci, want, rc, how, err[-1200:]))
    # locus info lists the domains libfabric offers, with their NICs' PCI
    # addresses, and what LOCUS_TRANSPORTS=auto takes between nodes.
    locus = os.path.join(os.path.dirname(LOCUSRUN), "locus")
    e = dict(os.environ, LD_PRELOAD=SHIM, LOCUS_TEST_FI_NIC_PCI="lo=0000:04:00.0",
             FI_PROVIDER=prov)
    p = subprocess.run([locus, "info", "--json"], capture_output=True, text=True, env=e,
                       timeout=60)
    import json
    net = json.loads(p.stdout).get("network", {}) if p.returncode == 0 else {}
    doms = {(d["provider"].split(";")[0], d["domain"]): d for d in net.get("ofi_domains", [])}
    print("locus info --json network: auto %s, %d domains" % (net.get("auto"), len(doms)))
    check(net.get("auto") == "tcp" and doms.get((prov, "lo"), {}).get("pci") == "0000:04:00.0"
          and doms[(prov, "lo")]["fabric"] is False,
          "locus info --json: want auto tcp and %s's lo at 0000:04:00.0: %s %s" % (
              prov, net, p.stderr[-300:]))
    p = subprocess.run([locus, "info"], capture_output=True, text=True, env=e, timeout=60)
    check(re.search(r"^Network between nodes \(LOCUS_TRANSPORTS=auto\): tcp", p.stdout, re.M) and
          re.search(r"^\s+%s\S*\s+lo\s+0000:04:00.0\s+software$" % prov, p.stdout, re.M),
          "locus info: no network section naming lo at 0000:04:00.0: %s" % p.stdout[:1500])


def shim_line(err):
    m = re.findall(r"ofi_mode_shim: (\d+) registrations \((\d+) local\), (\d+) bound to an "
                   r"endpoint, (\d+) enabled", err)
    return [tuple(int(x) for x in t) for t in m]


def case_mr_modes(provs):
    prog = PROGS[0]
    modes = [("FI_MR_LOCAL", FI_MR_LOCAL), ("FI_MR_VIRT_ADDR", FI_MR_VIRT_ADDR),
             ("FI_MR_PROV_KEY", FI_MR_PROV_KEY), ("FI_MR_ENDPOINT", FI_MR_ENDPOINT),
             ("all four", FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ENDPOINT)]
    # Reads asked for: they are what the keys and addresses serve. Then
    # pushed payloads (tagged sends and receives of the data itself), which
    # register only where FI_MR_LOCAL asks.
    # Then eager payloads above 16 KiB, sent from the caller's buffer
    # (registered where FI_MR_LOCAL asks), in the stress test's mix.
    runs = [(prov, name, bits, "off", "16k", prog) for prov in ("sockets", "udp")
            for name, bits in modes] + \
        [("sockets", name + ", pushed", bits, "on", "16k", prog) for name, bits in modes
         if bits & FI_MR_LOCAL] + \
        [("sockets", name + ", eager to 64k", bits, "on", "64k", PROGS[1]) for name, bits in modes
         if bits & FI_MR_LOCAL]
    for prov, name, bits, push, eager, p in [r for r in runs if r[0] in provs]:
        rc, out, err = run(2, p, {"FI_PROVIDER": prov, "LD_PRELOAD": SHIM,
                                  "LOCUS_TEST_FI_MR_MODE": hex(bits), "LOCUS_OFI_EAGER_MAX": eager,
                                  "LOCUS_OFI_RMA": "on", "LOCUS_OFI_PUSH": push})
        how, regs = described(err), shim_line(err)
        print("%s %s: exit %d, %s; %s" % (prov, name, rc, how[:1], regs))
        check(rc == 0 and " No Errors" in out, "%s %s: exit %d\n%s\n%s" % (
            prov, name, rc, out[-1000:], err[-1500:]))
        check(len(how) == 2 and all("mr_mode %s" % hex(bits) in h and
                                    ("large pushed" in h) == (push == "on") and
                                    ("sent in place" in h) == (eager == "64k") for h in how),
              "%s %s: the transport did not run with mr_mode %s: %s" % (prov, name,
                                                                       hex(bits), how))
        check(len(regs) == 2 and all(r[0] > 0 for r in regs),
              "%s %s: no registrations seen: %s" % (prov, name, regs))
        if bits & FI_MR_ENDPOINT:
            check(all(r[2] == r[0] and r[3] == r[0] for r in regs),
                  "%s %s: registrations not all bound and enabled: %s" % (prov, name, regs))
        if bits & FI_MR_LOCAL:
            # The bounce buffers and the receiving side's buffer too.
            check(all(r[1] >= 2 for r in regs),
                  "%s %s: local buffers not registered: %s" % (prov, name, regs))
    prov = "tcp" if "tcp" in provs else provs[0]
    for push, want in (("off", "large by tagged rendezvous"),
                       ("auto", "large pushed, else by tagged rendezvous")):
        rc, out, err = run(2, prog, {"FI_PROVIDER": prov, "LD_PRELOAD": SHIM,
                                     "LOCUS_TEST_FI_NO_RMA": "1", "LOCUS_OFI_PUSH": push})
        how = described(err)
        print("%s without FI_RMA, push %s: exit %d, %s" % (prov, push, rc, how[:1]))
        check(rc == 0 and " No Errors" in out and len(how) == 2 and all(want in h for h in how),
              "%s without FI_RMA, push %s: exit %d, %s\n%s" % (prov, push, rc, how, err[-1500:]))
    rc, out, err = run(2, prog, {"FI_PROVIDER": prov, "LD_PRELOAD": SHIM,
                                 "LOCUS_TEST_FI_NO_RMA": "1", "LOCUS_OFI_RMA": "on"})
    print("%s without FI_RMA, LOCUS_OFI_RMA=on: exit %d" % (prov, rc))
    check(rc != 0 and re.search(r"MPI_Init: ofi: no reliable-datagram provider", err),
          "LOCUS_OFI_RMA=on without FI_RMA: exit %d, %r" % (rc, err[-800:]))
    # A provider without remote CQ data: eager messages keep their heads
    # ("auto"), and "on" stops MPI_Init in one line.
    rc, out, err = run(3, PROGS[1], {"FI_PROVIDER": prov, "LD_PRELOAD": SHIM,
                                     "LOCUS_TEST_FI_NO_CQ_DATA": "1"})
    how = described(err)
    print("%s without CQ data: exit %d, %s" % (prov, rc, how[:1]))
    check(rc == 0 and " No Errors" in out and len(how) == 3 and
          not any("compact" in h for h in how),
          "%s without CQ data: exit %d, %s\n%s" % (prov, rc, how, err[-1500:]))
    rc, out, err = run(2, prog, {"FI_PROVIDER": prov, "LD_PRELOAD": SHIM,
                                 "LOCUS_TEST_FI_NO_CQ_DATA": "1", "LOCUS_OFI_COMPACT": "on"},
                       timeout=60)
    lines = [l for l in err.splitlines() if "MPI_Init" in l]
    print("%s without CQ data, LOCUS_OFI_COMPACT=on: exit %d, %s" % (prov, rc, lines[:1]))
    check(rc != 0 and lines and re.search(r"LOCUS_OFI_COMPACT=on: provider \S+ carries no 8 "
                                          r"bytes of remote CQ data", lines[0]),
          "LOCUS_OFI_COMPACT=on without CQ data: exit %d, %r" % (rc, err[-800:]))


def case_errors(provs):
    prog = PROGS[0]
    for env, want in ((({"LOCUS_OFI_PROVIDER": "no-such-provider"}),
                       r"ofi: no reliable-datagram provider named no-such-provider"),
                      ({"FI_PROVIDER": provs[0], "LOCUS_OFI_DOMAIN": "no-such-nic"},
                       r"ofi: LOCUS_OFI_DOMAIN=no-such-nic: provider \S+ has no such domain"),
                      ({"LOCUS_OFI_EAGER_MAX": "lots"}, r"LOCUS_OFI_EAGER_MAX"),
                      ({"LOCUS_OFI_PUSH_MAX": "0"}, r"LOCUS_OFI_PUSH_MAX=0: expected 1\.\."),
                      ({"LOCUS_OFI_RMA": "sometimes"},
                       r"LOCUS_OFI_RMA=sometimes: expected auto, on or off"),
                      ({"LOCUS_OFI_COMPACT": "tight"},
                       r"LOCUS_OFI_COMPACT=tight: expected auto, on or off")):
        rc, out, err = run(2, prog, env, timeout=60)
        lines = [l for l in err.splitlines() if "MPI_Init" in l]
        print("%s: exit %d, %s" % (env, rc, lines[:1]))
        check(rc != 0 and lines and re.search(want, lines[0]), "%s: exit %d, %r" % (
            env, rc, err[-800:]))


def main():
    fn = globals().get("case_" + CASE)
    if fn is None:
        raise SystemExit("unknown case " + CASE)
    provs = providers()
    if not provs:
        print("SKIPPED: libfabric offers no tcp, udp or sockets provider here (libfabric1)")
        sys.exit(77)
    fn(provs)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        sys.exit(1)
    print("ofi %s: OK" % CASE)


if __name__ == "__main__":
    main()
