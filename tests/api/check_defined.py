#!/usr/bin/env python3
"""check_defined.py — every procedure of the API description has an
implementation.

    check_defined.py LIBLOCUSMPI LIBLOCUSMPIFORT

For every procedure of src/api/mpi_api.json:

  - C (the standard's C binding): MPI_X and its profiling name PMPI_X, and
    for one with a large-count form MPI_X_c and PMPI_X_c, are defined by
    liblocusmpi;
  - Fortran (those the standard binds in the mpi module or mpif.h):
    liblocusmpifort defines gfortran's mpi_x_ and pmpi_x_, or, for a
    generic of the mpi module (MPI_SIZEOF), the module procedure.

and the Fortran library has every predefined callback and sentinel that
mpif.h and the module name. Exits 0 and prints " No Errors", or 1 with
every missing symbol named.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'src', 'api'))
import gen_fortran  # noqa: E402
import mpiapi  # noqa: E402


def defined(lib):
    out = subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: check_defined.py LIBLOCUSMPI LIBLOCUSMPIFORT')
    c_syms, f_syms = defined(sys.argv[1]), defined(sys.argv[2])
    procs = mpiapi.load()
    missing = []
    n_c = n_f = 0
    for p in procs.values():
        for name in p.c_names():
            n_c += 1
            for sym in (name, 'P' + name):
                if sym not in c_syms:
                    missing.append('%s: %s not in liblocusmpi' % (name, sym))
        if not p.f90:
            continue
        n_f += 1
        lower = p.name.lower()
        if p.short in gen_fortran.MODULE_PROCEDURES:
            syms = ['__mpi_MOD_' + lower]
        else:
            syms = [lower + '_', 'p' + lower + '_']
        for sym in syms:
            if sym not in f_syms:
                missing.append('%s (Fortran): %s not in liblocusmpifort' % (p.name, sym))
    for name in gen_fortran.CALLBACKS:
        if 'mpi_%s_' % name.lower() not in f_syms:
            missing.append('MPI_%s (Fortran callback) not in liblocusmpifort' % name)
    for sym in ('locus_mpif_sentinels_', 'locus_mpif_char_sentinels_', 'MPI_F_STATUS_IGNORE',
                'MPI_F_STATUSES_IGNORE'):
        if sym not in f_syms:
            missing.append('%s not in liblocusmpifort' % sym)
    print('%d C entry points and %d Fortran procedures of the API description (%s)'
          % (n_c, n_f, mpiapi.source()))
    if missing:
        print('FAILED: %d missing:' % len(missing))
        for m in missing:
            print('  ' + m)
        return 1
    print(' No Errors')
    return 0


if __name__ == '__main__':
    sys.exit(main())
