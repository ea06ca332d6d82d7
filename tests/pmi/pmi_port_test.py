#!/usr/bin/env python3
"""The PMI_PORT start-up of the MPI library's PMI client against a fake
server: the rank and size arrive from the server (initack and its three
`cmd=set` lines), so the client must check them before using them to size
and index its tables.

usage: pmi_port_test.py BOOT_CLIENT
"""
import socket
import subprocess
import sys
import threading

CLIENT = sys.argv[1]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def serve(srv, initack):
    """Answers one client as Hydra's PMI_PORT server does, with the given
    initack reply (the rank and size under test)."""
    srv.settimeout(10)
    try:
        conn, _ = srv.accept()
    except OSError:
        return
    conn.settimeout(10)
    f = conn.makefile("rwb", buffering=0)
    answers = {
        "init": b"cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n",
        "get_maxes": b"cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n",
        "get_appnum": b"cmd=appnum rc=0 appnum=0\n",
        "get_my_kvsname": b"cmd=my_kvsname rc=0 kvsname=kvs_fake\n",
        "get_universe_size": b"cmd=universe_size rc=0 size=1\n",
        "get": b"cmd=get_result rc=0 value=(vector,(0,1,1))\n",
        "barrier_in": b"cmd=barrier_out rc=0\n",
        "finalize": b"cmd=finalize_ack rc=0\n",
    }
    try:
        for line in f:
            cmd = line.split()[0].decode().split("=", 1)[1]
            if cmd == "initack":
                f.write(initack)
            elif cmd in answers:
                f.write(answers[cmd])
            if cmd == "finalize":
                break
    except (OSError, IndexError):
        pass
    conn.close()


def start(initack):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    t = threading.Thread(target=serve, args=(srv, initack), daemon=True)
    t.start()
    env = {"PATH": "/usr/bin:/bin", "PMI_PORT": "127.0.0.1:%d" % srv.getsockname()[1],
           "PMI_ID": "0"}
    p = subprocess.run([CLIENT], capture_output=True, text=True, timeout=30, env=env)
    srv.close()
    return p.returncode, p.stdout + p.stderr


def initack(rank, size, extra=b""):
    return (b"cmd=initack rc=0 rank=%s size=%s appnum=0 debug=0\ncmd=set size=%s\n"
            b"cmd=set rank=%s\ncmd=set debug=0\n" % (rank, size, size, rank)) + extra


cases = [
    (initack(b"0", b"1"), 0, "ok rank=0 size=1 nnodes=1 local=0/1"),
    (initack(b"5", b"2"), 1, "gave rank 5 of a job of size 2"),
    (initack(b"2", b"2"), 1, "gave rank 2 of a job of size 2"),
    (initack(b"0", b"0"), 1, "gave rank 0 of a job of size 0"),
    (initack(b"-1", b"4"), 1, "rank=-1 is not a number"),
    (initack(b"x", b"4"), 1, "rank=x is not a number"),
    (b"cmd=initack rc=0\ncmd=set size=4\ncmd=set debug=0\ncmd=set debug=0\n", 1,
     "initack sequence without a rank"),
    (b"cmd=initack rc=0\ncmd=set rank=1\ncmd=set debug=0\ncmd=set debug=0\n", 1,
     "initack sequence without a size"),
]
for reply, want_rc, want in cases:
    rc, out = start(reply)
    print("%r -> rc %d: %s" % (reply[:60], rc, out.strip()))
    check(rc == want_rc and want in out, "%r: rc %d %r, want rc %d and %r"
          % (reply[:60], rc, out, want_rc, want))
if FAILURES:
    sys.exit(1)
print("pmi_port: OK")
