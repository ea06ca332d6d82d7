#!/usr/bin/env python3
"""mini_pmi.py N PROG [ARGS...]: a minimal PMI-1 server (PMI_FD mode) that
starts N copies of PROG and, unlike locusrun and Hydra, does NOT know
PMI_process_mapping, so the library must find node locality by exchanging
host names. Exits 0 when every rank exits 0; prints the ranks' output."""
import os
import select
import socket
import subprocess
import sys


def main():
    n = int(sys.argv[1])
    prog = sys.argv[2:]
    kvs, procs, conns = {}, [], {}
    for r in range(n):
        parent, child = socket.socketpair()
        env = dict(os.environ, PMI_FD=str(child.fileno()), PMI_RANK=str(r),
                   PMI_SIZE=str(n))
        procs.append(subprocess.Popen(prog, env=env, pass_fds=[child.fileno()]))
        child.close()
        conns[parent] = [r, b""]
    waiting = []  # connections inside barrier_in
    kvsname = "mini_pmi_%d" % os.getpid()

    def reply(sock, line):
        sock.sendall((line + "\n").encode())

    while conns:
        ready, _, _ = select.select(list(conns), [], [], 60)
        if not ready:
            print("mini_pmi: timeout", file=sys.stderr)
            break
        for s in ready:
            data = s.recv(65536)
            if not data:
                del conns[s]
                continue
            conns[s][1] += data
            while b"\n" in conns[s][1]:
                line, conns[s][1] = conns[s][1].split(b"\n", 1)
                tok = dict(t.split("=", 1) if "=" in t else (t, "")
                           for t in line.decode().split())
                cmd = tok.get("cmd")
                if cmd == "init":
                    reply(s, "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1")
                elif cmd == "get_maxes":
                    reply(s, "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024")
                elif cmd == "get_appnum":
                    reply(s, "cmd=appnum rc=0 appnum=0")
                elif cmd == "get_universe_size":
                    reply(s, "cmd=universe_size rc=0 size=%d" % n)
                elif cmd == "get_my_kvsname":
                    reply(s, "cmd=my_kvsname rc=0 kvsname=" + kvsname)
                elif cmd == "put":
                    kvs[tok["key"]] = tok["value"]
                    reply(s, "cmd=put_result rc=0")
                elif cmd == "get":
                    if tok["key"] in kvs:
                        reply(s, "cmd=get_result rc=0 value=" + kvs[tok["key"]])
                    else:
                        reply(s, "cmd=get_result rc=1 msg=key_not_found")
                elif cmd == "barrier_in":
                    waiting.append(s)
                    if len(waiting) == n:
                        for w in waiting:
                            reply(w, "cmd=barrier_out rc=0")
                        waiting = []
                elif cmd == "finalize":
                    reply(s, "cmd=finalize_ack rc=0")
                elif cmd == "abort":
                    for p in procs:
                        p.kill()
                    sys.exit(int(tok.get("exitcode", "1")) or 1)
                else:
                    reply(s, "cmd=%s rc=1 msg=unknown" % cmd)
    rc = 0
    for p in procs:
        rc |= p.wait(timeout=60)
    sys.exit(1 if rc else 0)


if __name__ == "__main__":
    main()
