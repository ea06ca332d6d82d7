#!/usr/bin/env python3
"""coverage.py FORTRAN_SRC_DIR MPI_H LIBLOCUSMPIFORT

Every MPI function declared in mpi.h has its gfortran entry points (mpi_x_
and the profiling twin pmpi_x_) in liblocusmpifort, unless fortgen.py
gives a reason not to bind it (large-count forms, MPI_T, the few it lists).
A prototype fortgen.py cannot classify is a failure, named here, as is a
Fortran-only routine or predefined callback that is missing.
"""
import re
import subprocess
import sys

src, mpi_h, lib = sys.argv[1:]
sys.path.insert(0, src)
import fortgen  # noqa: E402

text = open(mpi_h).read()
names = re.findall(r'^LOCUS_MPI_FN\([^,]+, (\w+),', text, re.M)
nm = subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True, text=True,
                    check=True).stdout
exported = {line.split()[-1] for line in nm.splitlines() if line.strip()}

missing, bound, skipped = [], 0, 0
for name in names:
    if fortgen.unbound_reason(name):
        skipped += 1
        continue
    for sym in ('mpi_%s_' % name.lower(), 'pmpi_%s_' % name.lower()):
        if sym not in exported:
            missing.append('MPI_%s (%s)' % (name, sym))
    bound += 1
for name in list(fortgen.FORTRAN_ONLY):
    for sym in ('mpi_%s_' % name.lower(), 'pmpi_%s_' % name.lower()):
        if sym not in exported:
            missing.append('MPI_%s (%s)' % (name, sym))
for name in fortgen.CALLBACKS:
    if 'mpi_%s_' % name.lower() not in exported:
        missing.append('MPI_%s' % name)
for sym in ('locus_mpif_sentinels_', 'locus_mpif_char_sentinels_', 'MPI_F_STATUS_IGNORE',
            'MPI_Comm_f2c', 'PMPI_Comm_c2f', 'MPI_Status_f2c', 'MPI_Status_f082c'):
    if sym not in exported:
        missing.append(sym)

print('%d functions of mpi.h bound in Fortran, %d not bound by design' % (bound, skipped))
if missing:
    print('FAILED: no Fortran entry point for: ' + ', '.join(missing))
    sys.exit(1)
print(' No Errors')
