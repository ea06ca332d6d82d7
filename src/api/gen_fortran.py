#!/usr/bin/env python3
"""gen_fortran.py — generates Locus's Fortran binding from the API
description (mpi_api.json, through mpiapi.py) and mpi.h's constants.

    gen_fortran.py MPI_H OUT_DIR INCLUDE_DIR

reads every procedure of the description (its C declarations and its
parameters' kinds, directions and lengths) and the constants of
src/mpi/mpi.h (the MPI-5 standard ABI) and writes

    OUT_DIR/fort_bindings.c      the gfortran entry points (mpi_send_ and
                                 its pmpi_send_ twin) of every function it
                                 can bind from the prototype alone
    OUT_DIR/mpi.f90              the `mpi` module: constants, sentinels and
                                 explicit interfaces (choice buffers take
                                 any type and rank: gfortran's NO_ARG_CHECK)
    OUT_DIR/fortran_bindings.txt what is bound, by hand or generated, and
                                 what is not, with the reason
    INCLUDE_DIR/mpif.h           constants and sentinels for `include
                                 'mpif.h'` (fixed and free form alike)

How an argument crosses the languages follows from its kind: handles
(COMMUNICATOR, DATATYPE, ...), LOGICAL, INDEX results (counted from 1 in
Fortran), choice buffers (BUFFER), strings with the standard's length
limit, arrays of the length another argument gives. A procedure whose
arguments it cannot classify is left unbound with a warning on stderr;
the bindings that need more than that (callbacks, strings with in/out
lengths, argument lists that differ from C's) are written by hand in
src/fortran (fort_special.c, fort_callbacks.c) and listed in HAND below;
the procedures the standard gives no `use mpi` binding (f90 false in the
description) are left out.
"""
import os
import re
import sys

import mpiapi

# ---------------------------------------------------------------------------
# What is bound by hand (Fortran dummy arguments, ierror left out), and what
# is not bound at all.

# Fortran argument kinds used in the tables below.
AINT = 'INTEGER(KIND=MPI_ADDRESS_KIND)'
HAND = {
    'Init': [],
    'Init_thread': [('required', 'INTEGER'), ('provided', 'INTEGER')],
    'Finalize': [],
    'Info_create_env': [('info', 'INTEGER')],
    'Pcontrol': [('level', 'INTEGER')],
    'Op_create': [('user_fn', 'EXTERNAL'), ('commute', 'LOGICAL'), ('op', 'INTEGER')],
    'Op_free': [('op', 'INTEGER')],
    'Comm_create_errhandler': [('comm_errhandler_fn', 'EXTERNAL'), ('errhandler', 'INTEGER')],
    'Win_create_errhandler': [('win_errhandler_fn', 'EXTERNAL'), ('errhandler', 'INTEGER')],
    'File_create_errhandler': [('file_errhandler_fn', 'EXTERNAL'), ('errhandler', 'INTEGER')],
    'Session_create_errhandler': [('session_errhandler_fn', 'EXTERNAL'),
                                  ('errhandler', 'INTEGER')],
    'Comm_create_keyval': [('comm_copy_attr_fn', 'EXTERNAL'), ('comm_delete_attr_fn', 'EXTERNAL'),
                           ('comm_keyval', 'INTEGER'), ('extra_state', AINT)],
    'Type_create_keyval': [('type_copy_attr_fn', 'EXTERNAL'), ('type_delete_attr_fn', 'EXTERNAL'),
                           ('type_keyval', 'INTEGER'), ('extra_state', AINT)],
    'Win_create_keyval': [('win_copy_attr_fn', 'EXTERNAL'), ('win_delete_attr_fn', 'EXTERNAL'),
                          ('win_keyval', 'INTEGER'), ('extra_state', AINT)],
    'Keyval_create': [('copy_fn', 'EXTERNAL'), ('delete_fn', 'EXTERNAL'), ('keyval', 'INTEGER'),
                      ('extra_state', 'INTEGER')],
    'Comm_set_attr': [('comm', 'INTEGER'), ('comm_keyval', 'INTEGER'), ('attribute_val', AINT)],
    'Comm_get_attr': [('comm', 'INTEGER'), ('comm_keyval', 'INTEGER'), ('attribute_val', AINT),
                      ('flag', 'LOGICAL')],
    'Type_set_attr': [('datatype', 'INTEGER'), ('type_keyval', 'INTEGER'),
                      ('attribute_val', AINT)],
    'Type_get_attr': [('datatype', 'INTEGER'), ('type_keyval', 'INTEGER'),
                      ('attribute_val', AINT), ('flag', 'LOGICAL')],
    'Win_set_attr': [('win', 'INTEGER'), ('win_keyval', 'INTEGER'), ('attribute_val', AINT)],
    'Win_get_attr': [('win', 'INTEGER'), ('win_keyval', 'INTEGER'), ('attribute_val', AINT),
                     ('flag', 'LOGICAL')],
    'Attr_put': [('comm', 'INTEGER'), ('keyval', 'INTEGER'), ('attribute_val', 'INTEGER')],
    'Attr_get': [('comm', 'INTEGER'), ('keyval', 'INTEGER'), ('attribute_val', 'INTEGER'),
                 ('flag', 'LOGICAL')],
    'Grequest_start': [('query_fn', 'EXTERNAL'), ('free_fn', 'EXTERNAL'), ('cancel_fn', 'EXTERNAL'),
                       ('extra_state', AINT), ('request', 'INTEGER')],
    'Buffer_detach': [('buffer_addr', 'CHOICE'), ('size', 'INTEGER')],
    'Comm_detach_buffer': [('comm', 'INTEGER'), ('buffer_addr', 'CHOICE'), ('size', 'INTEGER')],
    'Session_detach_buffer': [('session', 'INTEGER'), ('buffer_addr', 'CHOICE'),
                              ('size', 'INTEGER')],
    'Comm_idup': [('comm', 'INTEGER'), ('newcomm', 'INTEGER'), ('request', 'INTEGER')],
    'Comm_idup_with_info': [('comm', 'INTEGER'), ('info', 'INTEGER'), ('newcomm', 'INTEGER'),
                            ('request', 'INTEGER')],
    'Info_get': [('info', 'INTEGER'), ('key', 'STRING'), ('valuelen', 'INTEGER'),
                 ('value', 'STRING'), ('flag', 'LOGICAL')],
    'Info_get_string': [('info', 'INTEGER'), ('key', 'STRING'), ('buflen', 'INTEGER'),
                        ('value', 'STRING'), ('flag', 'LOGICAL')],
    'Session_get_nth_pset': [('session', 'INTEGER'), ('info', 'INTEGER'), ('n', 'INTEGER'),
                             ('pset_len', 'INTEGER'), ('pset_name', 'STRING')],
    'Comm_spawn': [('command', 'STRING'), ('argv', 'STRING(*)'), ('maxprocs', 'INTEGER'),
                   ('info', 'INTEGER'), ('root', 'INTEGER'), ('comm', 'INTEGER'),
                   ('intercomm', 'INTEGER'), ('array_of_errcodes', 'INTEGER(*)')],
    'Comm_spawn_multiple': [('count', 'INTEGER'), ('array_of_commands', 'STRING(*)'),
                            ('array_of_argv', 'STRING(count,*)'),
                            ('array_of_maxprocs', 'INTEGER(*)'), ('array_of_info', 'INTEGER(*)'),
                            ('root', 'INTEGER'), ('comm', 'INTEGER'), ('intercomm', 'INTEGER'),
                            ('array_of_errcodes', 'INTEGER(*)')],
    'Register_datarep': [('datarep', 'STRING'), ('read_conversion_fn', 'EXTERNAL'),
                         ('write_conversion_fn', 'EXTERNAL'),
                         ('dtype_file_extent_fn', 'EXTERNAL'), ('extra_state', AINT)],
}
# Fortran functions (no ierror): name -> (result type, dummy arguments).
HAND_FUNCTIONS = {
    'Wtime': ('DOUBLE PRECISION', []),
    'Wtick': ('DOUBLE PRECISION', []),
    'Aint_add': (AINT, [('base', AINT), ('disp', AINT)]),
    'Aint_diff': (AINT, [('addr1', AINT), ('addr2', AINT)]),
}
# Fortran-only subroutines (not in mpi.h).
FORTRAN_ONLY = {
    'F_sync_reg': [('buf', 'CHOICE')],
}
# The predefined attribute callbacks, callable EXTERNAL procedures in
# Fortran: name -> copy or delete.
CALLBACKS = {
    'NULL_COPY_FN': 'copy', 'DUP_FN': 'copy', 'NULL_DELETE_FN': 'delete',
    'COMM_NULL_COPY_FN': 'copy', 'COMM_DUP_FN': 'copy', 'COMM_NULL_DELETE_FN': 'delete',
    'TYPE_NULL_COPY_FN': 'copy', 'TYPE_DUP_FN': 'copy', 'TYPE_NULL_DELETE_FN': 'delete',
    'WIN_NULL_COPY_FN': 'copy', 'WIN_DUP_FN': 'copy', 'WIN_NULL_DELETE_FN': 'delete',
    'CONVERSION_FN_NULL': 'conversion',
}
# Module procedures of the mpi module (its CONTAINS part): name -> the
# Fortran text. MPI_SIZEOF takes a variable of any type and rank.
MODULE_PROCEDURES = {
    'Sizeof': ['SUBROUTINE MPI_SIZEOF(x, size, ierror)',
               '  CLASS(*), INTENT(IN) :: x(..)',
               '  INTEGER, INTENT(OUT) :: size, ierror',
               '  size = INT(STORAGE_SIZE(x) / 8)',
               '  ierror = MPI_SUCCESS',
               'END SUBROUTINE MPI_SIZEOF'],
}
# The status type of mpi_f08, which the mpi module has too
# (MPI_Status_f2f08, MPI_Status_f082f): MPI_Status's eight ints.
F08_STATUS_TYPE = ['  TYPE, BIND(C) :: MPI_Status',
                   '    INTEGER(KIND=C_INT) :: MPI_SOURCE, MPI_TAG, MPI_ERROR',
                   '    INTEGER(KIND=C_INT) :: MPI_internal(5)',
                   '  END TYPE MPI_Status']

UNBOUND = {}


def unbound_reason(fn):
    if fn.name in UNBOUND:
        return UNBOUND[fn.name]
    if fn.large:
        return 'large-count form: only the mpi_f08 module has it (not provided)'
    if not fn.proc.f90:
        return 'C only: the standard gives it no binding in the mpi module or mpif.h'
    return None


# ---------------------------------------------------------------------------
# Parsing mpi.h

class Param:
    def __init__(self, text):
        self.text = text
        m = re.match(r'^(const\s+)?(\w+)\s*(\**)\s*(\w+)\s*((?:\[\d*\])*)$', text)
        if not m:
            raise ValueError(text)
        self.const = bool(m.group(1))
        self.ctype = m.group(2)
        self.ptr = len(m.group(3))
        self.name = m.group(4)
        self.arr = m.group(5)

    def decl(self, name=None):
        """The C declaration of this parameter under another name."""
        c = 'const ' if self.const else ''
        return '%s%s %s%s%s' % (c, self.ctype, '*' * self.ptr, name or self.name, self.arr)


class Fn:
    def __init__(self, ret, name, params):
        self.ret = ret
        self.name = name
        self.params_text = params
        self.params = []
        self.varargs = False
        if params.strip() != 'void':
            for p in params.split(','):
                p = p.strip()
                if p == '...':
                    self.varargs = True
                else:
                    self.params.append(Param(p))

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        return None


def description_functions(procs):
    """Every C procedure of the description, and its large-count form."""
    out = []
    for p in procs.values():
        if not p.c:
            continue
        for large in (False, True) if p.large_count else (False,):
            decls = [q for q in p.params if q.c(large)]
            text = ', '.join(q.c(large) for q in decls) or 'void'
            try:
                fn = Fn(p.ret, p.short + ('_c' if large else ''), text)
            except ValueError as e:
                sys.stderr.write('gen_fortran: warning: %s: cannot parse argument "%s"; '
                                 'not bound in Fortran\n' % (p.name, e))
                continue
            fn.proc = p
            fn.large = large
            for param in fn.params:
                param.desc = p.param(param.name)
            out.append(fn)
    return sorted(out, key=lambda f: f.name)


def parse_constants(text):
    """[(name, kind, value)], kind 'int' or 'offset', in header order."""
    found = {}
    order = []
    aliases = []

    def add(name, kind, value):
        if name not in found:
            order.append(name)
        found[name] = (kind, value)

    for m in re.finditer(r'^#define\s+(MPI_\w+)\s+(.+?)\s*$', text, re.M):
        name, body = m.group(1), m.group(2)
        h = re.match(r'^\(\(MPI_\w+\)0x([0-9a-fA-F]+)\)$', body)
        if h:
            add(name, 'int', int(h.group(1), 16))
        elif re.match(r'^-?\d+$', body):
            add(name, 'int', int(body))
        elif re.match(r'^\(\(MPI_Offset\)-?\d+\)$', body):
            add(name, 'offset', int(re.search(r'-?\d+', body).group(0)))
        elif re.match(r'^MPI_\w+$', body):
            aliases.append((name, body))
    for blk in re.finditer(r'enum\s*\w*\s*\{(.*?)\}', text, re.S):
        for m in re.finditer(r'(MPI_\w+)\s*=\s*(-?(?:0x[0-9a-fA-F]+|\d+))', blk.group(1)):
            add(m.group(1), 'int', int(m.group(2), 0))
    for name, target in aliases:
        if target in found:
            add(name, *found[target])
    return [(n,) + found[n] for n in order]


# ---------------------------------------------------------------------------
# Classifying one C parameter: how the Fortran argument arrives, how it
# becomes the C argument and back, and how the mpi module declares it.

HANDLES = {
    'MPI_Comm': 'Comm', 'MPI_Datatype': 'Type', 'MPI_Group': 'Group', 'MPI_Op': 'Op',
    'MPI_Request': 'Request', 'MPI_Errhandler': 'Errhandler', 'MPI_Info': 'Info',
    'MPI_Message': 'Message', 'MPI_Win': 'Win', 'MPI_File': 'File', 'MPI_Session': 'Session',
}
NULL_HANDLE = {
    'Comm': 'MPI_COMM_NULL', 'Type': 'MPI_DATATYPE_NULL', 'Group': 'MPI_GROUP_NULL',
    'Op': 'MPI_OP_NULL', 'Request': 'MPI_REQUEST_NULL', 'Errhandler': 'MPI_ERRHANDLER_NULL',
    'Info': 'MPI_INFO_NULL', 'Message': 'MPI_MESSAGE_NULL', 'Win': 'MPI_WIN_NULL',
    'File': 'MPI_FILE_NULL', 'Session': 'MPI_SESSION_NULL',
}
INT_KINDS = {'MPI_Aint': AINT, 'MPI_Offset': 'INTEGER(KIND=MPI_OFFSET_KIND)',
             'MPI_Count': 'INTEGER(KIND=MPI_COUNT_KIND)', 'int': 'INTEGER'}
# Handle arrays whose length is no argument's (the description says '*'):
# (function, argument) -> C expression of the length.
SEND_PEERS = 'fort_is_in_place(sendbuf) ? 0 : fort_peers(comm_c, 0, FORT_PEERS_SEND)'
RECV_PEERS = 'fort_peers(comm_c, 0, FORT_PEERS_RECV)'
NB_SEND = 'fort_peers(comm_c, 1, FORT_PEERS_SEND)'
NB_RECV = 'fort_peers(comm_c, 1, FORT_PEERS_RECV)'
HANDLE_ARRAYS = {}
for f in ('Alltoallw', 'Ialltoallw', 'Alltoallw_init'):
    HANDLE_ARRAYS[(f, 'sendtypes')] = SEND_PEERS
    HANDLE_ARRAYS[(f, 'recvtypes')] = RECV_PEERS
for f in ('Neighbor_alltoallw', 'Ineighbor_alltoallw', 'Neighbor_alltoallw_init'):
    HANDLE_ARRAYS[(f, 'sendtypes')] = NB_SEND
    HANDLE_ARRAYS[(f, 'recvtypes')] = NB_RECV

# Output strings whose size the description leaves open: the C size.
STRING_OUT = {
    ('Info_get_nthkey', 'key'): 'MPI_MAX_INFO_KEY',
    ('File_get_view', 'datarep'): 'MPI_MAX_DATAREP_STRING',
}

# Completion calls: a pending MPI_Comm_idup may finish in them.
SETTLES = {'Wait', 'Test', 'Waitall', 'Testall', 'Waitany', 'Testany', 'Waitsome', 'Testsome',
           'Request_get_status', 'Request_get_status_all', 'Request_get_status_any',
           'Request_get_status_some'}


class Unbindable(Exception):
    pass


class CInterface:
    """The C interface a binding calls, where bindings differ: Locus's own
    here (a Fortran handle is its MPI_<Kind>_toint integer; MPI_Comm_idup's
    new communicator reaches Fortran when a completion call sees it done).
    gen_abi_fortran.py passes the legacy ABIs' (their c2f and f2c)."""
    settles_idup = True

    def handle_in(self, kind, expr):
        """The C handle of the Fortran integer expr."""
        return 'PMPI_%s_fromint(%s)' % (kind, expr)

    def handle_out(self, kind, expr):
        """The Fortran integer of the C handle expr."""
        return 'PMPI_%s_toint(%s)' % (kind, expr)


LOCUS = CInterface()


def settle(c, fn, kind, args, iface):
    """After a completion call, the MPI_Comm_idup its requests finished."""
    if iface.settles_idup and fn.name in SETTLES and kind == 'Request':
        c.post.append('if (fort_idup_any())')
        c.post.append('    fort_idup_settle(%s);' % args)


class Conv:
    """One argument: the entry point's C parameter, the statements around
    the C call, the C argument, and the module's declaration."""

    def __init__(self, name):
        self.name = name
        self.cparam = None        # the entry point's parameter
        self.hidden = None        # hidden length parameter (strings)
        self.locals = []          # declarations at the top
        self.pre = []             # before the call (may fail: uses `goto out`)
        self.arg = name           # the C argument
        self.post = []            # after the call
        self.cleanup = []         # always, after out:
        self.fails = False        # pre may jump to out
        self.ftype = 'INTEGER'    # module declaration type
        self.fdims = ''           # module declaration dimensions


def arg_length(fn, d):
    """The C expression of an array argument's length when the description
    names another argument (a scalar, a pointer in the binding): '*count'."""
    other = fn.proc.param(d.length) if d.length else None
    if other and other.dir == 'in' and not other.length:
        return '*' + other.name
    return None


def classify(fn, p, iface=LOCUS):
    key = (fn.name, p.name)
    c = Conv(p.name)
    n = p.name
    array = bool(p.arr)
    fdims = '(*)' if array else ''
    if p.arr == '[][3]':
        fdims = '(3,*)'
    fconst = 'const ' if p.const else ''

    d = p.desc
    if p.ctype in HANDLES:
        kind = HANDLES[p.ctype]
        if p.ptr == 0 and not array:
            c.cparam = 'const MPI_Fint *%s' % n
            c.locals.append('%s %s_c = %s;' % (p.ctype, n, iface.handle_in(kind, '*' + n)))
            c.arg = '%s_c' % n
            settle(c, fn, kind, '%s, &%s_c, 1' % (n, n), iface)
            return c
        if array or key in HANDLE_ARRAYS:
            length = HANDLE_ARRAYS.get(key) or arg_length(fn, d)
            if not length:
                raise Unbindable('array of handles %s of unknown length' % n)
            c.cparam = '%sMPI_Fint *%s' % (fconst, n)
            c.fdims = '(*)'
            c.locals.append('%s %s_s[FORT_STACK_N], *%s_c = %s_s;' % (p.ctype, n, n, n))
            c.locals.append('int %s_n = 0;' % n)
            c.pre.append('%s_n = %s;' % (n, length))
            c.pre.append('%s_c = fort_scratch(%s_s, %s_n, sizeof *%s_c);' % (n, n, n, n))
            c.pre.append('if (!%s_c) {' % n)
            c.pre.append('    rc = fort_err(MPI_ERR_NO_MEM, fn, "no memory for %s");' % n)
            c.pre.append('    goto out;')
            c.pre.append('}')
            if d.dir == 'out':
                c.pre.append('for (int i = 0; i < %s_n; i++)' % n)
                c.pre.append('    %s_c[i] = %s;' % (n, NULL_HANDLE[kind]))
            else:
                c.pre.append('for (int i = 0; i < %s_n; i++)' % n)
                c.pre.append('    %s_c[i] = %s;' % (n, iface.handle_in(kind, n + '[i]')))
            c.fails = True
            c.arg = '%s_c' % n
            settle(c, fn, kind, '%s, %s_c, %s_n' % (n, n, n), iface)
            if not p.const:
                c.post.append('for (int i = 0; i < %s_n; i++)' % n)
                c.post.append('    %s[i] = %s;' % (n, iface.handle_out(kind, n + '_c[i]')))
            c.cleanup.append('fort_scratch_free(%s_s, %s_c);' % (n, n))
            return c
        if p.ptr == 1:
            c.cparam = 'MPI_Fint *%s' % n
            c.locals.append('%s %s_c = %s;' % (p.ctype, n, iface.handle_in(kind, '*' + n)))
            c.arg = '&%s_c' % n
            settle(c, fn, kind, '%s, &%s_c, 1' % (n, n), iface)
            if fn.name == 'Request_free' and iface.settles_idup:
                c.locals.append('if (fort_idup_any())')
                c.locals.append('    fort_idup_forget(*%s);' % n)
            c.post.append('*%s = %s;' % (n, iface.handle_out(kind, n + '_c')))
            return c
        raise Unbindable('handle argument %s' % p.text)

    if d.kind == 'F08_STATUS':
        c.cparam = '%sMPI_F08_status *%s' % (fconst, n)
        c.ftype = 'TYPE(MPI_Status)'
        return c
    if d.kind == 'F90_STATUS':
        c.cparam = '%sMPI_Fint *%s' % (fconst, n)
        c.fdims = '(MPI_STATUS_SIZE)'
        return c

    if p.ctype == 'MPI_Status' and p.ptr + (1 if array else 0) == 1:
        c.cparam = '%sMPI_Fint *%s' % (fconst, n)
        c.arg = 'fort_status(%s)' % n
        c.fdims = '(MPI_STATUS_SIZE,*)' if n.startswith('array_of') else '(MPI_STATUS_SIZE)'
        return c

    if p.ctype in INT_KINDS and p.ctype != 'int':
        c.ftype = INT_KINDS[p.ctype]
        if p.ptr == 0 and not array:
            c.cparam = 'const %s *%s' % (p.ctype, n)
            c.arg = '*%s' % n
        elif p.ptr + len(p.arr) // 2 == 1:
            c.cparam = '%s%s *%s' % (fconst, p.ctype, n)
            c.fdims = fdims
        else:
            raise Unbindable('argument %s' % p.text)
        return c

    if p.ctype == 'int':
        logical = d.kind == 'LOGICAL'
        if logical:
            c.ftype = 'LOGICAL'
        if p.ptr == 0 and not array:
            c.cparam = 'const MPI_Fint *%s' % n
            c.arg = '(*%s != 0)' % n if logical else '*%s' % n
            return c
        if p.ptr > 1 or (p.ptr == 1 and array):
            raise Unbindable('argument %s' % p.text)
        c.cparam = '%sMPI_Fint *%s' % (fconst, n)
        c.fdims = fdims
        if p.arr == '[][3]':
            c.arg = '(int (*)[3])%s' % n
        elif d.kind == 'WEIGHT':
            c.arg = 'fort_weights(%s)' % n
            c.fdims = '(*)'
        elif n == 'array_of_errcodes':
            c.arg = 'fort_errcodes(%s)' % n
        if logical and not p.const:
            if array:
                length = arg_length(fn, d)
                if not length:
                    raise Unbindable('logical array %s of unknown length' % n)
                c.post.append('if (rc == MPI_SUCCESS)')
                c.post.append('    fort_logical_out(%s, %s);' % (n, length))
            else:
                c.post.append('if (rc == MPI_SUCCESS)')
                c.post.append('    fort_logical_out(%s, 1);' % n)
        # An index into an array argument, counted from 1 in Fortran.
        if d.kind == 'INDEX' and d.dir == 'out' and d.length is None:
            c.post.append('if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)')
            c.post.append('    fort_index_out(%s, 1);' % n)
        if d.kind == 'INDEX' and d.dir == 'out' and d.length == '*':
            cnt = [q.name for q in fn.proc.params if q.kind == 'ARRAY_LENGTH' and q.dir == 'out'][0]
            c.post.append('if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *%s > 0)' % cnt)
            c.post.append('    fort_index_out(%s, *%s);' % (n, cnt))
        return c

    if p.ctype == 'void' and p.ptr == 1 and not array:
        if d.kind == 'BUFFER':
            c.cparam = '%svoid *%s' % (fconst, n)
            c.arg = 'fort_buf(%s)' % n
            c.ftype = 'CHOICE'
            return c
        if d.kind in ('C_BUFFER', 'LOGICAL_VOID'):
            # An INTEGER(KIND=MPI_ADDRESS_KIND) or TYPE(C_PTR) the library
            # stores an address in, or a LOGICAL of the size the call names.
            c.cparam = 'void *%s' % n
            c.ftype = 'CHOICE'
            return c
        raise Unbindable('untyped pointer %s' % n)

    if p.ctype == 'char' and p.ptr + len(p.arr) // 2 == 1:
        c.cparam = '%schar *%s' % (fconst, n)
        c.hidden = 'size_t %s_len' % n
        c.ftype = 'CHARACTER(LEN=*)'
        if p.const:
            trim = 1 if fn.name.startswith('Info_') else 0
            c.locals.append('char *%s_c = NULL;' % n)
            c.pre.append('%s_c = fort_str_in(%s, %s_len, %d);' % (n, n, n, trim))
            c.pre.append('if (!%s_c) {' % n)
            c.pre.append('    rc = fort_err(MPI_ERR_NO_MEM, fn, "no memory for %s");' % n)
            c.pre.append('    goto out;')
            c.pre.append('}')
            c.fails = True
            c.arg = '%s_c' % n
            c.cleanup.append('free(%s_c);' % n)
            return c
        size = d.length if d.length and d.length.startswith('MPI_MAX_') else STRING_OUT.get(key)
        if not size:
            raise Unbindable('output string %s of unknown size' % n)
        c.locals.append('char %s_c[%s] = "";' % (n, size))
        c.arg = '%s_c' % n
        c.post.append('if (rc == MPI_SUCCESS)')
        c.post.append('    fort_str_out(%s, %s_len, %s_c);' % (n, n, n))
        return c

    raise Unbindable('argument %s' % p.text)


# ---------------------------------------------------------------------------
# fort_bindings.c

def fname_c(name):
    return 'mpi_%s_' % name.lower()


def gen_binding(fn, convs, callee='PMPI_', aliases=None):
    """The entry point pmpi_x_ calling the C function callee + name, and
    aliases (default mpi_x_), weak, of it."""
    params = [c.cparam for c in convs] + ['MPI_Fint *ierror']
    params += [c.hidden for c in convs if c.hidden]
    lines = []
    pname = 'p' + fname_c(fn.name)
    cname = callee + fn.name
    # A weak reference: mpi.h may declare what the C library does not
    # define yet; that call then fails with a message instead of every
    # Fortran program failing to link.
    lines.append('#pragma weak %s' % cname)
    lines.append('FORT_API void %s(%s)' % (pname, ', '.join(params)))
    lines.append('{')
    lines.append('    if (!%s) {' % cname)
    lines.append('        *ierror = fort_missing("MPI_%s");' % fn.name)
    lines.append('        return;')
    lines.append('    }')
    fails = any(c.fails for c in convs)
    if fails:
        lines.append('    static const char fn[] = "MPI_%s";' % fn.name)
    lines.append('    int rc;')
    for c in convs:
        lines += ['    ' + s for s in c.locals]
    for c in convs:
        lines += ['    ' + s for s in c.pre]
    lines.append('    rc = %s(%s);' % (cname, ', '.join(c.arg for c in convs)))
    for c in convs:
        lines += ['    ' + s for s in c.post]
    if fails:
        lines.append('out:')
    for c in convs:
        lines += ['    ' + s for s in c.cleanup]
    lines.append('    *ierror = rc;')
    lines.append('}')
    for alias in aliases or [fname_c(fn.name)]:
        lines.append('FORT_WEAK(%s, %s)' % (pname, alias))
    lines.append('')
    return lines


# ---------------------------------------------------------------------------
# The module's interfaces

def f90_decl(name, ftype, fdims=''):
    if ftype == 'CHOICE':
        return ['!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s' % name,
                'TYPE(*), DIMENSION(*) :: %s' % name]
    if ftype.startswith('STRING'):
        dims = ftype[len('STRING'):]
        return ['CHARACTER(LEN=*) :: %s%s' % (name, dims)]
    if ftype.startswith('INTEGER(*'):
        return ['INTEGER :: %s%s' % (name, ftype[len('INTEGER'):])]
    return ['%s :: %s%s' % (ftype, name, fdims)]


def f90_interface(kind, name, args, result=None, prefix='MPI_'):
    """kind 'subroutine' or 'function'; args [(name, [declaration lines])];
    prefix 'PMPI_' for a profiling name."""
    names = [a[0] for a in args]
    body = []
    for _, decl in args:
        body += decl
    needs = sorted({k for k in ('MPI_ADDRESS_KIND', 'MPI_OFFSET_KIND', 'MPI_COUNT_KIND',
                                'MPI_STATUS_SIZE', 'MPI_Status')
                    if any(k in d for d in body + ([result] if result else []))})
    head = '%s %s%s(%s)' % (kind.upper(), prefix, name, ', '.join(names))
    out = []
    # Free form: continue long argument lists.
    while len(head) > 100:
        cut = head.rfind(', ', 0, 100) + 1
        out.append(head[:cut] + ' &')
        head = '    ' + head[cut:].lstrip()
    out.append(head)
    if needs:
        out.append('  IMPORT :: %s' % ', '.join(needs))
    out.append('  IMPLICIT NONE')
    if result:
        out.append('  %s :: %s%s' % (result, prefix, name))
    out += ['  ' + d for d in body]
    out.append('END %s %s%s' % (kind.upper(), prefix, name))
    return out


# ---------------------------------------------------------------------------
# Constants: one list of fixed-form-safe lines for mpif.h and the module.

SENTINELS_NUM = [  # common /locus_mpif_sentinels/, the order of fort_impl.h
    ('MPI_BOTTOM', ''), ('MPI_IN_PLACE', ''), ('MPI_BUFFER_AUTOMATIC', ''),
    ('MPI_STATUS_IGNORE', '(MPI_STATUS_SIZE)'), ('MPI_STATUSES_IGNORE', '(MPI_STATUS_SIZE,1)'),
    ('MPI_ERRCODES_IGNORE', '(1)'), ('MPI_UNWEIGHTED', '(1)'), ('MPI_WEIGHTS_EMPTY', '(1)'),
]
SENTINELS_CHAR = [('MPI_ARGV_NULL', '(1)'), ('MPI_ARGVS_NULL', '(1,1)')]

SKIP_CONSTANTS = {'MPI_F_STATUS_SIZE', 'MPI_F_SOURCE', 'MPI_F_TAG', 'MPI_F_ERROR'}


def fortran_constants(consts):
    """[(name, type, value)] as Fortran sees them."""
    by = {c[0]: c for c in consts}
    out = [('MPI_INTEGER_KIND', 'INTEGER', '4'), ('MPI_ADDRESS_KIND', 'INTEGER', '8'),
           ('MPI_OFFSET_KIND', 'INTEGER', '8'), ('MPI_COUNT_KIND', 'INTEGER', '8'),
           ('MPI_STATUS_SIZE', 'INTEGER', str(by['MPI_F_STATUS_SIZE'][2])),
           ('MPI_SOURCE', 'INTEGER', str(by['MPI_F_SOURCE'][2] + 1)),
           ('MPI_TAG', 'INTEGER', str(by['MPI_F_TAG'][2] + 1)),
           ('MPI_ERROR', 'INTEGER', str(by['MPI_F_ERROR'][2] + 1)),
           ('MPI_SUBARRAYS_SUPPORTED', 'LOGICAL', '.FALSE.'),
           ('MPI_ASYNC_PROTECTS_NONBLOCKING', 'LOGICAL', '.FALSE.')]
    for name, kind, value in consts:
        if name in SKIP_CONSTANTS:
            continue
        if name.startswith('MPI_T_') and not name.startswith('MPI_T_ERR_'):
            continue
        # String lengths leave out C's terminator (MPI's rule for Fortran).
        if name.startswith('MPI_MAX_'):
            value -= 1
        ftype = 'INTEGER(KIND=MPI_OFFSET_KIND)' if kind == 'offset' else 'INTEGER'
        out.append((name, ftype, str(value)))
    return out


def constant_lines(fconsts):
    """Declarations for mpif.h and the module: 6 leading blanks, under 73
    columns, `!` comments in column 1 (valid fixed and free form)."""
    L = []
    L.append('! Constants: the MPI-5 standard ABI\'s values (predefined handles are')
    L.append('! the integers MPI_<KIND>_TOINT gives, e.g. MPI_COMM_WORLD = 257).')
    for name, ftype, value in fconsts:
        L.append('      %s %s' % (ftype, name))
        L.append('      PARAMETER (%s=%s)' % (name, value))
    L.append('! Sentinels: addresses the library recognises (common blocks).')
    for name, dims in SENTINELS_NUM:
        L.append('      INTEGER %s%s' % (name, dims))
    for name, dims in SENTINELS_CHAR:
        L.append('      CHARACTER*1 %s%s' % (name, dims))
    for name, _ in SENTINELS_NUM:
        L.append('      COMMON /LOCUS_MPIF_SENTINELS/ %s' % name)
    for name, _ in SENTINELS_CHAR:
        L.append('      COMMON /LOCUS_MPIF_CHAR_SENTINELS/ %s' % name)
    return fixed_form(L)


def fixed_form(lines):
    """Fixed form ignores what lies past column 72."""
    for line in lines:
        if len(line) > 72:
            sys.exit('gen_fortran: too long for fixed-form mpif.h: ' + line.strip())
    return lines


def external_lines():
    """mpif.h only (the module has interfaces): the functions and the
    predefined callbacks as EXTERNAL procedures."""
    L = ['! Functions and predefined callbacks.']
    for name, (rtype, _) in sorted(HAND_FUNCTIONS.items()):
        for pre in ('MPI_', 'PMPI_'):
            L.append('      %s %s%s' % (rtype, pre, name.upper()))
            L.append('      EXTERNAL %s%s' % (pre, name.upper()))
    for name in sorted(CALLBACKS):
        L.append('      EXTERNAL MPI_%s' % name)
    return fixed_form(L)


# ---------------------------------------------------------------------------

def main():
    if len(sys.argv) not in (4, 5):
        sys.exit('usage: gen_fortran.py MPI_H OUT_DIR INCLUDE_DIR [MPI_API_JSON]')
    mpi_h, out_dir, inc_dir = sys.argv[1:4]
    procs = mpiapi.load(sys.argv[4] if len(sys.argv) == 5 else mpiapi.DEFAULT_PATH)
    text = open(mpi_h).read()
    fns = description_functions(procs)
    consts = parse_constants(text)

    bindings = ['/* Generated by src/api/gen_fortran.py from src/api/mpi_api.json: do not '
                'edit. */',
                '#include <stdlib.h>', '', '#include "fort_impl.h"', '']
    interfaces = []
    report_gen, report_hand, report_none = [], [], []
    for fn in sorted(fns, key=lambda f: f.name):
        reason = unbound_reason(fn)
        if reason:
            report_none.append((fn.name, reason))
            continue
        if fn.name in HAND:
            args = [(a, f90_decl(a, t)) for a, t in HAND[fn.name]]
            args.append(('ierror', ['INTEGER :: ierror']))
            interfaces.append(f90_interface('subroutine', fn.name, args))
            report_hand.append(fn.name)
            continue
        if fn.name in HAND_FUNCTIONS:
            # Functions have a type: without an interface, a program's
            # PMPI_WTIME() would be an implicit REAL (or no name at all
            # under IMPLICIT NONE), so the profiling names get theirs too,
            # as mpif.h declares both (external_lines).
            rtype, dargs = HAND_FUNCTIONS[fn.name]
            args = [(a, f90_decl(a, t)) for a, t in dargs]
            for prefix in ('MPI_', 'PMPI_'):
                interfaces.append(f90_interface('function', fn.name, args, rtype, prefix))
            report_hand.append(fn.name)
            continue
        try:
            if fn.ret != 'int' or fn.varargs:
                raise Unbindable('returns %s' % fn.ret if fn.ret != 'int' else 'variadic')
            convs = [classify(fn, p) for p in fn.params]
        except Unbindable as e:
            sys.stderr.write('gen_fortran: warning: MPI_%s: %s; not bound in Fortran\n'
                             % (fn.name, e))
            report_none.append((fn.name, 'not classified by gen_fortran.py: %s' % e))
            continue
        bindings += gen_binding(fn, convs)
        args = [(c.name, f90_decl(c.name, c.ftype, c.fdims)) for c in convs]
        args.append(('ierror', ['INTEGER :: ierror']))
        interfaces.append(f90_interface('subroutine', fn.name, args))
        report_gen.append(fn.name)
    for name, dargs in sorted(FORTRAN_ONLY.items()):
        args = [(a, f90_decl(a, t)) for a, t in dargs]
        interfaces.append(f90_interface('subroutine', name, args))
        report_hand.append(name)

    fconsts = fortran_constants(consts)
    # Fortran is case-insensitive: one name, one meaning.
    seen = {}
    names = [c[0] for c in fconsts] + [n for n, _ in SENTINELS_NUM + SENTINELS_CHAR]
    names += ['MPI_' + f.name for f in fns] + ['MPI_' + n for n in CALLBACKS]
    names += ['MPI_' + n for n in FORTRAN_ONLY]
    for n in names:
        if n.upper() in seen and seen[n.upper()] != n:
            sys.exit('gen_fortran: %s and %s are one name in Fortran' % (seen[n.upper()], n))
        seen[n.upper()] = n
    consts_f = constant_lines(fconsts)

    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(inc_dir, exist_ok=True)
    write(os.path.join(out_dir, 'fort_bindings.c'), bindings)

    mpif = ['! mpif.h: Locus MPI for Fortran (include \'mpif.h\'), fixed or free',
            '! form. Generated by src/api/gen_fortran.py from the API description.']
    mpif += consts_f + external_lines()
    write(os.path.join(inc_dir, 'mpif.h'), mpif)

    mod = ['! The mpi module of Locus MPI. Generated by src/api/gen_fortran.py',
           '! from the API description: do not edit.', 'MODULE mpi',
           '  USE, INTRINSIC :: ISO_C_BINDING, ONLY: C_INT', '  IMPLICIT NONE',
           '  PRIVATE :: C_INT']
    mod += consts_f
    mod += F08_STATUS_TYPE
    # The predefined callbacks, four to a line (free form stops at 132).
    names = ['MPI_' + n for n in sorted(CALLBACKS)]
    rows = [', '.join(names[i:i + 4]) for i in range(0, len(names), 4)]
    mod.append('  EXTERNAL :: ' + ', &\n      '.join(rows))
    mod.append('  INTERFACE')
    for itf in interfaces:
        mod += ['    ' + line for line in itf]
        mod.append('')
    mod.append('  END INTERFACE')
    mod.append('CONTAINS')
    for name, text in sorted(MODULE_PROCEDURES.items()):
        mod += ['  ' + line for line in text]
        report_hand.append(name)
    mod.append('END MODULE mpi')
    write(os.path.join(out_dir, 'mpi.f90'), mod)

    rep = ['Fortran binding of Locus MPI (mpif.h and the mpi module; generated by gen_fortran.py)',
           '', 'generated from the API description (%d):' % len(report_gen)]
    rep += ['  MPI_' + n for n in report_gen]
    rep += ['', 'written by hand (%d):' % len(report_hand)]
    rep += ['  MPI_' + n for n in sorted(report_hand)]
    rep += ['', 'not bound (%d):' % len(report_none)]
    rep += ['  MPI_%s: %s' % r for r in report_none]
    write(os.path.join(out_dir, 'fortran_bindings.txt'), rep)


def write(path, lines):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    os.replace(tmp, path)


if __name__ == '__main__':
    main()
