#!/usr/bin/env python3
"""gen_abi_fortran.py — generates the Fortran halves of the legacy-ABI
layers (src/abi/fortran): the entry points of MPICH's libmpichfort.so.12
and Open MPI's libmpi_mpifh.so.40 over the C layers (src/abi/mpich,
src/abi/openmpi), from the API description.

    gen_abi_fortran.py mpich|openmpi LEGACY_MPI_H OUT_C OUT_TXT [REAL_LIB]

Each procedure the description gives a Fortran binding (f90) that the
legacy mpi.h declares is bound the way gen_fortran.py binds Locus's own
(its classify() and gen_binding(): arguments by reference, hidden string
lengths, LOGICALs, indices counted from 1, the sentinels), with the legacy
ABI's own c2f/f2c for handles (MPICH's are casts: its Fortran handle is its
C handle), calling the C layer's MPI_X (so a C tool built for that MPI
sees Fortran calls too), under every name the real library exports:
pmpi_x_ and, weak, mpi_x_, mpi_x__, mpi_x, MPI_X, pmpi_x__, pmpi_x, PMPI_X
(upper case X). OUT_TXT lists what is generated, what is written by hand
(src/abi/fortran/*.c, BY_HAND below) and what is left out and why; given
the real library (REAL_LIB), also the mpi_x_ it exports that this one
does not.
"""
import os
import re
import subprocess
import sys

import gen_fortran
import mpiapi

# Written by hand in src/abi/fortran (the file's name): the functions and
# subroutines of gen_fortran.py's HAND lists whose Fortran arguments differ
# from C's, or which take callbacks.
BY_HAND = {
    'Init': 'abi_fortran_init.c', 'Init_thread': 'abi_fortran_init.c',
    'Pcontrol': 'abi_fortran_init.c', 'Wtime': 'abi_fortran_init.c',
    'Wtick': 'abi_fortran_init.c', 'Aint_add': 'abi_fortran_init.c',
    'Aint_diff': 'abi_fortran_init.c', 'Buffer_detach': 'abi_fortran_init.c',
    'Info_get': 'abi_fortran_init.c', 'Info_get_string': 'abi_fortran_init.c',
    'Comm_set_attr': 'abi_fortran_attr.c', 'Comm_get_attr': 'abi_fortran_attr.c',
    'Type_set_attr': 'abi_fortran_attr.c', 'Type_get_attr': 'abi_fortran_attr.c',
    'Win_set_attr': 'abi_fortran_attr.c', 'Win_get_attr': 'abi_fortran_attr.c',
    'Attr_put': 'abi_fortran_attr.c', 'Attr_get': 'abi_fortran_attr.c',
    'Comm_create_keyval': 'abi_fortran_attr.c', 'Type_create_keyval': 'abi_fortran_attr.c',
    'Win_create_keyval': 'abi_fortran_attr.c', 'Keyval_create': 'abi_fortran_attr.c',
    'Op_create': 'abi_fortran_callbacks.c', 'Comm_create_errhandler': 'abi_fortran_callbacks.c',
    'Win_create_errhandler': 'abi_fortran_callbacks.c',
    'File_create_errhandler': 'abi_fortran_callbacks.c',
}
# Fortran-only, by hand: MPI_SIZEOF (abi_fortran_sizeof.c), MPI_F_SYNC_REG
# and the predefined attribute callbacks (abi_fortran_attr.c).
FORTRAN_ONLY = {'Sizeof': 'abi_fortran_sizeof.c', 'F_sync_reg': 'abi_fortran_init.c'}
# What the legacy mpi.h declares but is left out, with the reason.
LEFT_OUT = {
    'Comm_spawn': 'argv as a Fortran CHARACTER array: not bound yet',
    'Comm_spawn_multiple': 'argv arrays as Fortran CHARACTER arrays: not bound yet',
    'Register_datarep': 'Fortran conversion callbacks: not bound yet',
    'Grequest_start': 'Fortran query/free/cancel callbacks: not bound yet',
    'Info_create_env': 'argv as a Fortran CHARACTER array: not bound yet',
    'Session_get_nth_pset': 'in/out string length: not bound yet',
    'Session_create_errhandler': 'Fortran error-handler callback: not bound yet',
    'Comm_detach_buffer': 'MPI-4.1, not in the legacy libraries',
    'Session_detach_buffer': 'MPI-4.1, not in the legacy libraries',
}
LEFT_OUT_ABI = {
    # Open MPI's handles are pointers: a user function, which receives a
    # Fortran integer, needs a trampoline per registration.
    'openmpi': {
        'Op_create': 'Open MPI: a trampoline per user function is not written yet',
        'Comm_create_errhandler': 'Open MPI: a trampoline per handler is not written yet',
        'Win_create_errhandler': 'Open MPI: a trampoline per handler is not written yet',
        'File_create_errhandler': 'Open MPI: a trampoline per handler is not written yet',
    },
    'mpich': {},
}


class LegacyInterface(gen_fortran.CInterface):
    """The legacy ABI's own conversions (macros in MPICH's mpi.h, the C
    layer's functions in Open MPI's); the new communicator of
    MPI_Comm_idup is the C layer's as soon as the call returns."""
    settles_idup = False

    def handle_in(self, kind, expr):
        return 'MPI_%s_f2c(%s)' % (kind, expr)

    def handle_out(self, kind, expr):
        return 'MPI_%s_c2f(%s)' % (kind, expr)


def manglings(short):
    """Every name of one Fortran entry point (short: 'Send'): pmpi_send_
    first, the one the others alias."""
    low, up = short.lower(), short.upper()
    return ['pmpi_%s_' % low, 'mpi_%s_' % low, 'mpi_%s__' % low, 'mpi_%s' % low,
            'MPI_%s' % up, 'pmpi_%s__' % low, 'pmpi_%s' % low, 'PMPI_%s' % up]


def legacy_text(mpi_h):
    """mpi.h and the headers of its folder it includes (MPICH's
    prototypes are in mpi_proto.h, MPI-IO's in mpio.h)."""
    folder = os.path.dirname(mpi_h)
    text = open(mpi_h).read()
    for inc in re.findall(r'#\s*include\s*[<"](\w+\.h)[>"]', text):
        path = os.path.join(folder, inc)
        if os.path.exists(path) and inc != 'mpicxx.h':
            text += open(path).read()
    return text


def prototype(text, name):
    """The legacy header's parameter list of MPI_name ('' if not found)."""
    m = re.search(r'\bMPI_%s\s*\(([^)]*)\)' % name, text)
    return m.group(1) if m else ''


def drop_const(convs, proto):
    """An array the legacy header passes without const (MPICH's
    MPI_Pready_list) is taken without const too."""
    for c in convs:
        if c.cparam and c.cparam.startswith('const ') and c.arg == c.name \
                and not re.search(r'const[^,]*\b%s\b' % c.name, proto):
            c.cparam = c.cparam[len('const '):]


def real_exports(lib):
    """The real library's mpi_x_ entry points (x: lower case)."""
    try:
        out = subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and re.match(r'^mpi_[a-z0-9_]+[a-z0-9]_$', f[2]) \
                and not re.search(r'_(f08|f08ts|cdesc)(_large)?_$', f[2]):
            names.add(f[2])
    return names


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit('usage: gen_abi_fortran.py mpich|openmpi LEGACY_MPI_H OUT_C OUT_TXT [REAL_LIB]')
    abi, mpi_h, out_c, out_txt = sys.argv[1:5]
    assert abi in ('mpich', 'openmpi')
    text = legacy_text(mpi_h)
    declared = set(re.findall(r'\bMPI_(\w+)\s*\(', text))
    macros = set(re.findall(r'^\s*#\s*define\s+(MPI_\w+)', text, re.M))
    iface = LegacyInterface()
    left_out = dict(LEFT_OUT, **LEFT_OUT_ABI[abi])

    out = ['/* Generated by src/api/gen_abi_fortran.py (%s) from src/api/mpi_api.json: '
           'do not edit. */' % abi, '#include <stdlib.h>', '', '#include "abi_fortran.h"', '']
    generated, hand, none = [], [], []
    exported = set()
    for fn in gen_fortran.description_functions(mpiapi.load()):
        reason = gen_fortran.unbound_reason(fn)
        if not reason and fn.name not in declared:
            reason = 'not in %s\'s mpi.h: the C layer has no MPI_%s' % (abi, fn.name)
        if not reason and fn.name in left_out:
            reason = left_out[fn.name]
        if reason:
            none.append((fn.name, reason))
            continue
        if fn.name in BY_HAND:
            hand.append((fn.name, BY_HAND[fn.name]))
            exported.add('mpi_%s_' % fn.name.lower())
            continue
        try:
            if fn.ret != 'int' or fn.varargs:
                raise gen_fortran.Unbindable('returns %s' % fn.ret if fn.ret != 'int'
                                             else 'variadic')
            convs = [gen_fortran.classify(fn, p, iface) for p in fn.params]
            drop_const(convs, prototype(text, fn.name))
        except gen_fortran.Unbindable as e:
            none.append((fn.name, 'not classified: %s' % e))
            continue
        names = manglings(fn.name)
        # An upper-case name the legacy header #defines (a callback's).
        for n in names:
            if n in macros:
                out.append('#undef %s' % n)
        out += gen_fortran.gen_binding(fn, convs, callee='MPI_', aliases=names[1:])
        generated.append(fn.name)
        exported.add(names[1])
    for name, where in sorted(FORTRAN_ONLY.items()):
        hand.append((name, where))
        exported.add('mpi_%s_' % name.lower())
    gen_fortran.write(out_c, out)

    rep = ['# %s ABI, Fortran (mpif.h and `use mpi`): %d entry points generated by '
           'gen_abi_fortran.py, %d by hand, %d left out' % (abi, len(generated), len(hand),
                                                               len(none)),
           '# every one under pmpi_x_, mpi_x_, mpi_x__, mpi_x, MPI_X, pmpi_x__, pmpi_x, PMPI_X',
           '', 'by hand (src/abi/fortran):']
    rep += ['  MPI_%-36s %s' % h for h in sorted(hand)]
    rep += ['', 'left out:']
    rep += ['  MPI_%-36s %s' % r for r in sorted(none)]
    if len(sys.argv) == 6:
        real = real_exports(sys.argv[5])
        if real is not None:
            callbacks = {'mpi_%s_' % n.lower() for n in gen_fortran.CALLBACKS}
            # MPI_SIZEOF's specific procedures (abi_fortran_sizeof.c).
            sizeofs = {n for n in real if n.startswith('mpi_sizeof_')}
            missing = sorted(real - exported - callbacks - sizeofs)
            rep += ['', '%s exports these mpi_x_ that this library does not (%d):'
                    % (os.path.basename(sys.argv[5]), len(missing))]
            rep += ['  ' + m for m in missing]
    rep += ['', 'generated (%d):' % len(generated)]
    rep += ['  MPI_' + g for g in generated]
    gen_fortran.write(out_txt, rep)


if __name__ == '__main__':
    main()
