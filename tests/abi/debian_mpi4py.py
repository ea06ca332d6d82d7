#!/usr/bin/env python3
"""Debian's python3-mpi4py (built against Open MPI) under locusrun, with no
option: its MPI module loads Open MPI's libmpi.so.40, which is Locus's
Open MPI-ABI layer on the ranks' loader path. At 3 ranks: hello (the
library's version must say Locus), point-to-point and collectives.

usage: debian_mpi4py.py LOCUSRUN     (skipped, 77, without python3-mpi4py)
"""
import os
import subprocess
import sys

PROG = r'''
from mpi4py import MPI
c = MPI.COMM_WORLD
r, s = c.Get_rank(), c.Get_size()
v = MPI.Get_library_version().splitlines()[0]
print("hello %d of %d: %s" % (r, s, v), flush=True)
assert c.allreduce(r, op=MPI.SUM) == s * (s - 1) // 2
assert c.sendrecv(r, dest=(r + 1) % s, source=(r - 1) % s) == (r - 1) % s
assert c.bcast({"k": [1, 2, 3]} if r == 0 else None, root=0) == {"k": [1, 2, 3]}
assert c.gather(r * r, root=0) == ([i * i for i in range(s)] if r == 0 else None)
buf = bytearray(8)
if r == 0:
    req = [c.Isend([bytes([i]) * 8, MPI.BYTE], dest=i, tag=7) for i in range(1, s)]
    MPI.Request.Waitall(req)
else:
    st = MPI.Status()
    c.Recv([buf, MPI.BYTE], source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
    assert buf == bytes([r]) * 8 and st.Get_source() == 0 and st.Get_tag() == 7
    assert st.Get_count(MPI.BYTE) == 8
sub = c.Split(r % 2, -r)
assert sub.Get_size() == (s + 1 - r % 2) // 2
sub.Free()
c.Barrier()
print("ok %d" % r, flush=True)
'''


def main():
    locusrun = sys.argv[1]
    if not os.path.isdir("/usr/lib/python3/dist-packages/mpi4py"):
        print("SKIPPED: Debian's python3-mpi4py is not installed")
        sys.exit(77)
    env = dict(os.environ, PYTHONPATH="/usr/lib/python3/dist-packages", PYTHONNOUSERSITE="1")
    p = subprocess.run([locusrun, "--oversubscribe", "-n", "3", "/usr/bin/python3", "-c", PROG],
                       capture_output=True, text=True, timeout=120, env=env,
                       stdin=subprocess.DEVNULL)
    print(p.stdout + p.stderr)
    hellos = [l for l in p.stdout.splitlines() if l.startswith("hello ")]
    oks = [l for l in p.stdout.splitlines() if l.startswith("ok ")]
    if p.returncode != 0 or len(hellos) != 3 or len(oks) != 3:
        print("FAILED: exit %d, %d hellos, %d oks" % (p.returncode, len(hellos), len(oks)))
        sys.exit(1)
    if not all("Locus MPI" in l and "through its Open MPI ABI layer" in l for l in hellos):
        print("FAILED: not Locus's library through its Open MPI-ABI layer")
        sys.exit(1)
    print("Debian's mpi4py on Locus: 3 ranks, p2p and collectives: OK")


if __name__ == "__main__":
    main()
