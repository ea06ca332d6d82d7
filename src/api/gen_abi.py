#!/usr/bin/env python3
"""gen_abi.py — a legacy ABI's C entry points over Locus's library, from
the API description (mpiapi.py) and the two mpi.h files.

usage: gen_abi.py ABI LOCUS_MPI_H LEGACY_MPI_H OUT.c OUT.txt OUT_VALUES.h
                  [LEGACY_LIB OUT_OBJECTS.c]

ABI is "mpich" (int handles) or "openmpi" (pointers to objects the
library exports). For the latter, LEGACY_LIB (Open MPI's own libmpi.so.40)
gives every exported data object's name and size, which OUT_OBJECTS.c
defines alike: executables that name one hold a copy of it (a copy
relocation), whose address is then the handle.

ABI is "mpich" (int handles). Every entry point converts what the legacy
program passed (handles, special ranks and tags, MPI_IN_PLACE, statuses)
into Locus's values, calls Locus's PMPI_ function through the table the
layer fills at load (src/abi/abi.h), and converts what comes back (handles,
statuses, error codes). Values: Locus's are read here from its mpi.h and
written as numbers; the legacy ones are the legacy header's own macros,
compiled into the output. A procedure whose parameters are of a kind this
generator does not convert yet is left out and listed in OUT.txt with the
kind (the program then fails to link against it, loudly); the entry points
written by hand (src/abi/<abi>/) are listed there too.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpiapi  # noqa: E402

HANDLES = {  # kind in the description -> (C type, converter suffix)
    'COMMUNICATOR': ('MPI_Comm', 'comm'), 'DATATYPE': ('MPI_Datatype', 'dtype'),
    'GROUP': ('MPI_Group', 'group'), 'OPERATION': ('MPI_Op', 'op'),
    'REQUEST': ('MPI_Request', 'req'), 'ERRHANDLER': ('MPI_Errhandler', 'errh'),
    'INFO': ('MPI_Info', 'info'), 'MESSAGE': ('MPI_Message', 'msg'), 'WINDOW': ('MPI_Win', 'win'),
    'FILE': ('MPI_File', 'file'), 'SESSION': ('MPI_Session', 'session'),
}
PLAIN = {  # int-like kinds passed as they are (same values in both ABIs)
    'POLYXFER_NUM_ELEM_NNI', 'POLYXFER_NUM_ELEM', 'XFER_NUM_ELEM', 'XFER_NUM_ELEM_NNI',
    'ARRAY_LENGTH', 'ARRAY_LENGTH_NNI', 'ARRAY_LENGTH_PI', 'LOGICAL', 'KEY', 'COLOR',
    'INDEX', 'COMM_SIZE', 'COMM_SIZE_PI', 'DIMENSION', 'NUM_DIMS', 'POLYDISPLACEMENT',
    'DEGREE', 'COORDINATE', 'VERSION', 'ARGUMENT_COUNT', 'ARGUMENT_LIST',
    'DISPLACEMENT', 'POLYDTYPE_NUM_ELEM_NNI', 'POLYDTYPE_NUM_ELEM', 'POLYDTYPE_STRIDE_BYTES',
    'POLYNUM_BYTES_NNI', 'POLYNUM_BYTES', 'POLYDISPLACEMENT_COUNT', 'POLYDTYPE_PACK_SIZE',
    'LOCATION_SMALL', 'POLYLOCATION', 'NUM_BYTES', 'NUM_BYTES_SMALL',
    'POLYDISPLACEMENT_AINT_COUNT', 'POLYDTYPE_NUM_ELEM_PI', 'KEY_INDEX', 'MATH',
    'ALLOC_MEM_NUM_BYTES', 'POLYNUM_PARAM_VALUES', 'C_BUFFER3', 'PROCESS_GRID_SIZE',
    'ATTRIBUTE_VAL', 'ATTRIBUTE_VAL_10',
    'F90_COMM', 'F90_DATATYPE', 'F90_GROUP', 'F90_REQUEST', 'F90_ERRHANDLER', 'F90_INFO',
    'F90_OP', 'F90_MESSAGE', 'F90_WIN', 'F90_FILE', 'F90_SESSION', 'INFO_VALUE_LENGTH',
    'WINDOW_SIZE', 'RMA_DISPLACEMENT_NNI', 'POLYRMA_DISPLACEMENT', 'WIN_ATTACH_SIZE',
    'OFFSET', 'POLYDISPOFFSET', 'TYPECLASS_SIZE', 'FILE_DESCRIPTOR', 'STRING_ARRAY',
    'STRING_2DARRAY', 'GENERIC_DTYPE_INT', 'GENERIC_DTYPE_COUNT', 'PARTITION', 'STRING_LENGTH',
    # The tool interface: indices and counts, and its handles, which the
    # program only holds (opaque pointers in every ABI, NULL their null).
    'CAT_INDEX', 'CVAR_INDEX', 'CVAR_INDEX_SPECIAL', 'PVAR_INDEX', 'EVENT_INDEX',
    'SOURCE_INDEX', 'UPDATE_NUMBER', 'TOOLENUM_INDEX', 'TOOLENUM_SIZE', 'TOOLS_NUM_ELEM_SMALL',
    'TOOLS_TICK_COUNT', 'TOOL_VAR_VALUE', 'LOGICAL_OPTIONAL', 'DISPLACEMENT_NNI',
    'CVAR', 'PVAR', 'PVAR_SESSION', 'TOOLS_ENUM', 'EVENT_REGISTRATION', 'EVENT_INSTANCE',
    # The object a variable is bound to, by its handle's address: Locus
    # binds none of its variables to an object (MPI_T_BIND_NO_OBJECT), so
    # it is never read.
    'TOOL_MPI_OBJ',
}
VALUE_MAPS = {  # int kinds whose values differ: abi_<map>_in/_out
    'RANK': 'rank', 'RANK_NNI': 'rank',  # a target's rank may be MPI_PROC_NULL
    'ORDER': 'order', 'DISTRIB_ENUM': 'distrib', 'DTYPE_DISTRIBUTION': 'darg', 'TAG': 'tag', 'THREAD_LEVEL': 'thread', 'COMM_COMPARISON': 'compare',
    'GROUP_COMPARISON': 'compare', 'SPLIT_TYPE': 'split', 'ERROR_CLASS': 'class',
    'ERROR_CODE': 'class', 'TOPOLOGY_TYPE': 'topo', 'COMBINER': 'combiner',
    'TYPECLASS': 'typeclass', 'KEYVAL': 'keyval', 'LOCK_TYPE': 'lock', 'ASSERT': 'assert',
    'ACCESS_MODE': 'amode', 'UPDATE_MODE': 'whence',
    'BIND_TYPE': 'tbind', 'VARIABLE_SCOPE': 'tscope', 'TOOL_VAR_VERBOSITY': 'tverb',
    'PVAR_CLASS': 'tpclass', 'SOURCE_ORDERING': 'tsorder', 'CALLBACK_SAFETY': 'tcbsafe',
}
# Maps of flags that combine (OR): each bit set maps on its own.
BIT_MAPS = {'assert', 'amode'}
# The values of each map, by name (a trailing _ is a prefix); the error
# classes' map is abi_classes (codes come back as classes).
MAP_NAMES = {
    'rank': ['MPI_ANY_SOURCE', 'MPI_PROC_NULL', 'MPI_ROOT'],
    'tag': ['MPI_ANY_TAG'],
    'thread': ['MPI_THREAD_'],
    'compare': ['MPI_IDENT', 'MPI_CONGRUENT', 'MPI_SIMILAR', 'MPI_UNEQUAL'],
    'split': ['MPI_COMM_TYPE_'],
    'topo': ['MPI_GRAPH', 'MPI_CART', 'MPI_DIST_GRAPH'],
    'combiner': ['MPI_COMBINER_'],
    'typeclass': ['MPI_TYPECLASS_'],
    'lock': ['MPI_LOCK_EXCLUSIVE', 'MPI_LOCK_SHARED'],
    'amode': ['MPI_MODE_RDONLY', 'MPI_MODE_RDWR', 'MPI_MODE_WRONLY', 'MPI_MODE_CREATE',
              'MPI_MODE_EXCL', 'MPI_MODE_DELETE_ON_CLOSE', 'MPI_MODE_UNIQUE_OPEN',
              'MPI_MODE_SEQUENTIAL', 'MPI_MODE_APPEND'],
    'whence': ['MPI_SEEK_SET', 'MPI_SEEK_CUR', 'MPI_SEEK_END'],
    'order': ['MPI_ORDER_C', 'MPI_ORDER_FORTRAN'],
    'distrib': ['MPI_DISTRIBUTE_BLOCK', 'MPI_DISTRIBUTE_CYCLIC', 'MPI_DISTRIBUTE_NONE'],
    'darg': ['MPI_DISTRIBUTE_DFLT_DARG'],  # else a block size, itself
    # Attribute values (abi_attr_out).
    'flavor': ['MPI_WIN_FLAVOR_'],
    'tbind': ['MPI_T_BIND_'], 'tscope': ['MPI_T_SCOPE_'], 'tverb': ['MPI_T_VERBOSITY_'],
    'tpclass': ['MPI_T_PVAR_CLASS_'], 'tsorder': ['MPI_T_SOURCE_ORDERED', 'MPI_T_SOURCE_UNORDERED'],
    'tcbsafe': ['MPI_T_CB_REQUIRE_'],
    'model': ['MPI_WIN_SEPARATE', 'MPI_WIN_UNIFIED'],
    'assert': ['MPI_MODE_NOCHECK', 'MPI_MODE_NOSTORE', 'MPI_MODE_NOPUT', 'MPI_MODE_NOPRECEDE',
               'MPI_MODE_NOSUCCEED'],
    'keyval': ['MPI_KEYVAL_INVALID', 'MPI_TAG_UB', 'MPI_IO', 'MPI_HOST', 'MPI_WTIME_IS_GLOBAL',
               'MPI_APPNUM', 'MPI_LASTUSEDCODE', 'MPI_UNIVERSE_SIZE', 'MPI_WIN_BASE',
               'MPI_WIN_DISP_UNIT', 'MPI_WIN_SIZE', 'MPI_WIN_CREATE_FLAVOR', 'MPI_WIN_MODEL'],
}
BUFFERS = {'BUFFER', 'C_BUFFER', 'C_BUFFER2'}
# Written by hand in src/abi/common and the ABI's folder (strings sized
# differently, statuses read, MPI_Wtime's double, callbacks): not generated.
# Left out on purpose, with the reason (none now).
SKIP = {}
BY_HAND = {'MPI_Get_processor_name', 'MPI_Get_library_version', 'MPI_Error_string',
           'MPI_Get_count', 'MPI_Get_elements', 'MPI_Wtime', 'MPI_Wtick', 'MPI_Comm_get_name',
           'MPI_Comm_set_name', 'MPI_Type_get_name', 'MPI_Type_set_name', 'MPI_Error_class',
           'MPI_Test_cancelled', 'MPI_Abi_get_version', 'MPI_Abi_get_info', 'MPI_Op_create',
           'MPI_Op_free', 'MPI_Comm_create_errhandler', 'MPI_Comm_create_keyval',
           'MPI_Comm_free_keyval', 'MPI_Alltoallw', 'MPI_Ialltoallw', 'MPI_Alltoallw_init',
           'MPI_Keyval_create', 'MPI_Keyval_free', 'MPI_Pcontrol', 'MPI_Info_get_nthkey',
           'MPI_Status_c2f', 'MPI_Status_f2c', 'MPI_Win_get_name', 'MPI_Win_set_name',
           'MPI_Open_port', 'MPI_Lookup_name', 'MPI_File_get_view', 'MPI_Type_create_keyval',
           'MPI_Type_free_keyval', 'MPI_Win_create_keyval', 'MPI_Win_free_keyval',
           'MPI_Neighbor_alltoallw', 'MPI_Ineighbor_alltoallw', 'MPI_Neighbor_alltoallw_init',
           'MPI_Grequest_start', 'MPI_Register_datarep', 'MPI_Info_create_env', 'MPI_Aint_add',
           'MPI_Aint_diff', 'MPI_Get_version', 'MPI_Abi_get_fortran_info',
           'MPI_Op_create_c', 'MPI_Register_datarep_c', 'MPI_Alltoallw_c', 'MPI_Ialltoallw_c',
           'MPI_Alltoallw_init_c', 'MPI_Neighbor_alltoallw_c', 'MPI_Ineighbor_alltoallw_c',
           'MPI_Neighbor_alltoallw_init_c', 'MPI_File_create_errhandler',
           'MPI_Win_create_errhandler', 'MPI_Session_create_errhandler'}
# Handle conversions (the ABI's own folder): MPICH's are casts of its int
# handles (its header makes c2f and f2c macros); Open MPI's toint and
# fromint are its c2f and f2c.
HANDLE_KINDS = ['Comm', 'Type', 'Group', 'Info', 'Request', 'Op', 'Errhandler', 'Win',
                'Message', 'Session', 'File']
BY_HAND_ABI = {
    'mpich': {'MPI_%s_%s' % (k, f) for k in HANDLE_KINDS for f in ('toint', 'fromint')}
    | {'MPI_%s_%s' % (k, f) for k in HANDLE_KINDS if k != 'File' for f in ('c2f', 'f2c')},
    'openmpi': {'MPI_%s_%s' % (k, f) for k in HANDLE_KINDS for f in ('toint', 'fromint')},
}
# Open MPI's Fortran integers of its predefined handles (mpif-handles.h)
# are its own small numbers: c2f and f2c go through a table first
# (fortran_handles), then Locus's numbers for everything else.
FORTRAN_TABLES = {'openmpi': ['mpif-handles.h', 'mpif-io-handles.h']}
C_KIND = {'MPI_Comm': 'Comm', 'MPI_Datatype': 'Type', 'MPI_Group': 'Group', 'MPI_Op': 'Op',
          'MPI_Request': 'Request', 'MPI_Errhandler': 'Errhandler', 'MPI_Info': 'Info',
          'MPI_Win': 'Win', 'MPI_Message': 'Message', 'MPI_File': 'File'}
CONV = {'Comm': 'comm', 'Type': 'dtype', 'Group': 'group', 'Op': 'op', 'Request': 'req',
        'Errhandler': 'errh', 'Info': 'info', 'Win': 'win', 'Message': 'msg', 'File': 'file'}


def fortran_handles(abi, legacy_h, legacy_text, names):
    """MPI_<Kind>_c2f and _f2c with the legacy Fortran integers of the
    predefined handles (the legacy mpif.h's parameters); a kind's other
    handles are Locus's numbers, through Locus's own c2f/f2c, appended to
    names (the functions the layer loads). Returns C, and the procedures
    it defines."""
    text = ''
    for f in FORTRAN_TABLES.get(abi, []):
        path = os.path.join(os.path.dirname(legacy_h), f)
        if os.path.exists(path):
            text += open(path).read()
    if not text:
        return '', set()
    ctype = {m.group(1): m.group(2) for m in re.finditer(
        r'#define\s+(MPI_\w+)\s+OMPI_PREDEFINED_GLOBAL\(\s*(MPI_\w+)\s*,', legacy_text)}
    table = {}
    for name, value in re.findall(r'parameter\s*\((MPI_\w+)\s*=\s*(-?\d+)\)', text, re.I):
        kind = C_KIND.get(ctype.get(name))
        if kind:
            table.setdefault(kind, []).append((int(value), name))
    out, done = [], set()
    for kind in sorted(table):
        ty, conv = [t for t, k in C_KIND.items() if k == kind][0], CONV[kind]
        rows = sorted(set(table[kind]))
        out.append('static const struct { MPI_Fint f; %s c; } %s_fortran[] = {\n%s\n};'
                   % (ty, conv, '\n'.join('#ifdef %s\n    { %d, %s },\n#endif' % (r[1], r[0], r[1]) for r in rows)))
        c2f, f2c = len(names), len(names) + 1
        names += ['PMPI_%s_c2f' % kind, 'PMPI_%s_f2c' % kind]
        n = 'sizeof %s_fortran / sizeof %s_fortran[0]' % (conv, conv)
        out.append('''MPI_Fint PMPI_%(k)s_c2f(%(t)s h)
{
    int l;
    if (abi_predef_in((intptr_t)h, %(kind)s, &l))
        for (size_t i = 0; i < %(n)s; i++)
            if (%(c)s_fortran[i].c == h)
                return %(c)s_fortran[i].f;
    return ((MPI_Fint (*)(void *))abi_fn[%(c2f)d])(abi_%(c)s_in(h));
}
#pragma weak MPI_%(k)s_c2f = PMPI_%(k)s_c2f
%(t)s PMPI_%(k)s_f2c(MPI_Fint f)
{
    for (size_t i = 0; i < %(n)s; i++)
        if (%(c)s_fortran[i].f == f)
            return %(c)s_fortran[i].c;
    return abi_%(c)s_out(((void *(*)(MPI_Fint))abi_fn[%(f2c)d])(f));
}
#pragma weak MPI_%(k)s_f2c = PMPI_%(k)s_f2c''' % dict(k=kind, t=ty, n=n, c=conv, c2f=c2f, f2c=f2c, kind=HANDLE_TYPES[ty]))
        done |= {'MPI_%s_c2f' % kind, 'MPI_%s_f2c' % kind}
    return '\n'.join(out), done


# The calls that read an attribute: (keyval, value) parameters.
ATTR_GETS = {'MPI_Comm_get_attr': ('comm_keyval', 'attribute_val'),
             'MPI_Win_get_attr': ('win_keyval', 'attribute_val')}

HANDLE_TYPES = {  # Locus's handle types, and their abi_kind (abi.h)
    'MPI_Comm': 'ABI_K_COMM', 'MPI_Datatype': 'ABI_K_TYPE', 'MPI_Group': 'ABI_K_GROUP',
    'MPI_Op': 'ABI_K_OP', 'MPI_Request': 'ABI_K_REQ', 'MPI_Errhandler': 'ABI_K_ERRH',
    'MPI_Info': 'ABI_K_INFO', 'MPI_Win': 'ABI_K_WIN', 'MPI_Message': 'ABI_K_MSG',
    'MPI_Session': 'ABI_K_SESSION', 'MPI_File': 'ABI_K_FILE'}


def locus_values(path):
    """Locus's mpi.h: (NAME -> int of enum members, NAME -> int of the
    predefined handles, #define'd as ((MPI_Kind)0x...))."""
    text = open(path).read()
    vals = {m.group(1): int(m.group(2), 0) for m in re.finditer(
        r'^\s*(MPI_\w+)\s*=\s*(-?(?:0x[0-9a-fA-F]+|\d+))\s*,?', text, re.M)}
    handles = {m.group(1): int(m.group(3), 0) for m in re.finditer(
        r'#define\s+(MPI_\w+)\s+\(\((MPI_\w+)\)\s*(0x[0-9a-fA-F]+|\d+)\)', text)
        if m.group(2) in HANDLE_TYPES}
    kinds = {m.group(1): HANDLE_TYPES[m.group(2)] for m in re.finditer(
        r'#define\s+(MPI_\w+)\s+\(\((MPI_\w+)\)\s*(0x[0-9a-fA-F]+|\d+)\)', text)
        if m.group(2) in HANDLE_TYPES}
    # Pointer constants (MPI_IN_PLACE, MPI_BOTTOM): NAME_VALUE.
    vals.update({m.group(1) + '_VALUE': int(m.group(2), 0) for m in re.finditer(
        r'#define\s+(MPI_\w+)\s+\(\((?:void|int)\s*\*\)\s*(0x[0-9a-fA-F]+|\d+)\)', text)})
    return vals, handles, kinds


def compat_header(abi):
    """The ABI folder's abi_compat.h (what a newer release of the legacy
    MPI's header adds under the same soname), or None."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'abi', abi,
                        'abi_compat.h')
    return path if os.path.exists(path) else None


def legacy_defines(path, abi):
    """The legacy mpi.h, the prototypes beside it (MPICH: mpi_proto.h) and
    the ABI folder's compat header."""
    text = open(path).read()
    extras = [os.path.join(os.path.dirname(path), e) for e in ('mpi_proto.h', 'mpio.h')]
    for extra in extras + [compat_header(abi)]:  # MPICH's prototypes, MPI-IO's, newer ones
        if extra and os.path.exists(extra):
            text += open(extra).read()
    return set(re.findall(r'#define\s+(MPI_\w+)', text)), text


class Gen:
    def __init__(self, proc, legacy_text, large=False):
        self.p = proc
        self.legacy_text = legacy_text
        self.large = large  # the large-count form, MPI_X_c
        self.pre, self.args, self.post, self.free, self.temps = [], [], [], [], []
        # Written back whatever the call returns: handles the program gave
        # (a request Locus freed on an error is MPI_REQUEST_NULL then).
        self.post_always = []
        self.temp_names = []
        self.missing = None

    def temp_array(self, p, ltype, n):
        """Locus's copy of an array: on the stack up to ABI_STACK_MAX, else
        allocated (and freed on the way out)."""
        self.temp_names.append(p.name)
        self.temps.append('%s %s_s[ABI_STACK_MAX];' % (ltype, p.name))
        self.temps.append('%s *%s_l = abi_temp(%s_s, sizeof *%s_s, %s);'
                          % (ltype, p.name, p.name, p.name, n))
        self.free.append('abi_temp_free(%s_l, %s_s);' % (p.name, p.name))

    def param(self, p, procs_params):
        k, d, name = p.kind, p.dir, p.name
        decl = p.c(self.large)
        is_ptr = '*' in decl.split(name)[0] or decl.endswith('[]')
        length = p.length
        if k in BUFFERS and self.p.name == 'MPI_Get_address':
            self.args.append(name)  # any address, MPI_IN_PLACE's too, as it is
        elif k in BUFFERS:
            self.args.append('%sabi_buf_in(%s)' % ('' if decl.startswith('const') else '(void *)',
                                                   name))
        elif k == 'WEIGHT':
            # MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are special pointers.
            self.args.append('(%s)abi_weights_in(%s)' % ('const int *' if decl.startswith('const')
                                                        else 'int *', name))
        elif k == 'STRING' and (decl.startswith('const char') or self.has_length()):
            # In, or out into a buffer whose length the caller gives.
            self.args.append(name)
        elif k in PLAIN or (k == 'ERROR_CODE' and self.p.name == 'MPI_Abort'):
            self.args.append(name)
        elif k in VALUE_MAPS:
            conv = VALUE_MAPS[k]
            if length is not None:
                n = length if length not in ('*', '') else self.size_param()
                if d != 'in' and n is None:
                    return k + ' array out of unknown length'
                if d == 'in' and length not in ('*', '') and not isinstance(n, list):
                    # Locus's values in a copy (ranks may be MPI_PROC_NULL).
                    self.temp_array(p, 'int', n)
                    self.pre.append('for (int i_ = 0; i_ < %s; i_++) %s_l[i_] = abi_%s_in(%s[i_]);'
                                    % (n, name, conv, name))
                    self.args.append('%s_l' % name)
                    return None
                # As it is: an array in of unknown length, or (ranges) of
                # triplets whose strides are no ranks.
                self.args.append(name)
                if d != 'in':
                    # ints both sides: mapped in place afterwards (spawn's
                    # error codes may be MPI_ERRCODES_IGNORE, a null pointer;
                    # they say why a spawn failed, so they map when it failed
                    # for that too, and only then: after a bad argument the
                    # array's length is not to be trusted)
                    if k == 'ERROR_CODE':
                        self.post_always.append(
                            'if ((rc_ == 0 || abi_class_out(rc_) == MPI_ERR_SPAWN) && %s) '
                            'for (int i_ = 0; i_ < %s; i_++) %s[i_] = abi_%s_out(%s[i_]);'
                            % (name, n, name, conv, name))
                    else:
                        self.post.append('if (%s) for (int i_ = 0; i_ < %s; i_++) %s[i_] = abi_%s_out(%s[i_]);'
                                         % (name, n, name, conv, name))
            elif is_ptr and d == 'out':
                self.pre.append('__typeof__(*%s) %s_l = 0;' % (name, name))
                self.args.append('&%s_l' % name)
                self.post.append('if (%s) *%s = abi_%s_out(%s_l);' % (name, name, conv, name))
            elif is_ptr:
                return k + ' inout'
            else:
                self.args.append('abi_%s_in(%s)' % (conv, name))
        elif k in HANDLES:
            ctype, conv = HANDLES[k]
            if length:
                n = length if length != '*' else self.count_param()
                if n is None:
                    return k + ' array of unknown length'
                lp = [q for q in self.params() if q.name == n]
                if lp and '*' in lp[0].c(self.large).split(n)[0]:
                    # A length given by address (MPI_T_event_get_info's
                    # num_elements, in and out): the capacity, the array
                    # maybe NULL (a query of the length alone).
                    n = '(%s && %s ? *%s : 0)' % (name, n, n)
                self.temp_array(p, 'void *', n)
                # The array may be NULL where it is not significant (spawn's
                # infos at a rank other than the root).
                if d in ('in', 'inout'):
                    self.pre.append('for (int i_ = 0; %s && i_ < %s; i_++) %s_l[i_] = abi_%s_in(%s[i_]);'
                                    % (name, n, name, conv, name))
                self.args.append('%s ? %s_l : NULL' % (name, name))
                if d in ('out', 'inout'):
                    (self.post_always if d == 'inout' else self.post).append(
                        'for (int i_ = 0; %s && i_ < %s; i_++) %s[i_] = abi_%s_out(%s_l[i_]);'
                        % (name, n, name, conv, name))
            elif is_ptr:
                self.pre.append('void *%s_l = %s;' % (
                    name, 'abi_%s_in(*%s)' % (conv, name) if d in ('in', 'inout') else 'NULL'))
                self.args.append('&%s_l' % name)
                (self.post if d == 'out' else self.post_always).append(
                    '*%s = abi_%s_out(%s_l);' % (name, conv, name))
            else:
                self.args.append('abi_%s_in(%s)' % (conv, name))
        elif k == 'STATUS':
            if length:
                n = self.status_count()
                if n is None:
                    return 'STATUS array of unknown length'
                self.temp_array(p, 'abi_locus_status_t', n[0])
                # Only the statuses Locus wrote are the program's to change.
                self.pre.append('if (!abi_statuses_ignored(%s)) for (int i_ = 0; i_ < %s; i_++) '
                                '%s_l[i_].source = %s_l[i_].error = ABI_STATUS_UNSET;'
                                % (name, n[0], name, name))
                self.args.append('abi_statuses_ignored(%s) ? NULL : %s_l' % (name, name))
                self.post.append('if (!abi_statuses_ignored(%s)) for (int i_ = 0; i_ < %s; i_++) '
                                 'if (%s_l[i_].source != ABI_STATUS_UNSET) '
                                 'abi_status_out(&%s_l[i_], &%s[i_]);'
                                 % (name, n[1], name, name, name))
            elif d in ('in', 'inout'):
                # A status the program gives: Locus reads (and may set) its own.
                self.pre.append('abi_locus_status_t %s_l;' % name)
                self.pre.append('abi_status_in(%s, &%s_l);' % (name, name))
                self.args.append('&%s_l' % name)
                if d == 'inout':
                    self.post.append('abi_status_out(&%s_l, %s);' % (name, name))
            else:
                # Untouched when Locus leaves it (MPI_Iprobe finding nothing;
                # MPI_ERROR after most calls).
                self.pre.append('abi_locus_status_t %s_l;' % name)
                self.pre.append('%s_l.source = %s_l.error = ABI_STATUS_UNSET;' % (name, name))
                self.args.append('abi_status_ignored(%s) ? NULL : &%s_l' % (name, name))
                self.post.append('if (!abi_status_ignored(%s) && %s_l.source != ABI_STATUS_UNSET) '
                                 'abi_status_out(&%s_l, %s);' % (name, name, name, name))
        else:
            return k
        return None

    def params(self):
        return self.p.c_params(self.large)

    def decls(self):
        """The parameters' declarations: the description's, less a const
        the legacy header's prototype does not have (MPICH 4.0's
        MPI_Pready_list)."""
        decls = [q.c(self.large) for q in self.params()]
        m = re.search(r'\b%s\s+MPI_%s\s*\(([^)]*)\)' % (re.escape(self.p.ret), self.short()),
                      self.legacy_text)
        if m and len(m.group(1).split(',')) == len(decls):
            theirs = m.group(1).split(',')
            decls = [d[len('const '):] if d.startswith('const ') and 'const' not in t else d
                     for d, t in zip(decls, theirs)]
        return decls

    def short(self):
        return self.p.short + ('_c' if self.large else '')

    def size_param(self):
        """The number of processes a call starts (spawn's error codes): its
        maxprocs, or the sum of spawn_multiple's."""
        for q in self.params():
            if q.kind == 'COMM_SIZE' and q.dir == 'in' and not q.length:
                return q.name
        for q in self.params():
            if q.kind == 'COMM_SIZE' and q.dir == 'in' and q.length:
                return 'abi_sum(%s, %s)' % (q.name, q.length)
        return None

    def has_length(self):
        return any(q.kind in ('STRING_LENGTH', 'INFO_VALUE_LENGTH') for q in self.params())

    def count_param(self):
        for q in self.params():
            if q.kind in ('ARRAY_LENGTH', 'ARRAY_LENGTH_NNI', 'ARRAY_LENGTH_PI'):
                return q.name
        return None

    def status_count(self):
        """(array size to allocate, how many to convert back)."""
        n = self.count_param()
        if n is None:
            return None
        out = [q.name for q in self.params() if q.name == 'outcount']
        return (n, '(*outcount == MPI_UNDEFINED ? 0 : *outcount)' if out else n)

    def write(self, idx):
        for q in self.params():
            why = self.param(q, None)
            if why:
                self.missing = why
                return None
        decls = ', '.join(self.decls()) or 'void'
        ltypes = []
        for q in self.params():
            if q.kind in HANDLES:
                ltypes.append('void **' if (q.length or '*' in q.c(self.large).split(q.name)[0])
                              else 'void *')
            elif q.kind == 'STATUS':
                ltypes.append('void *')
            elif q.kind in BUFFERS:
                ltypes.append('const void *' if q.c(self.large).startswith('const') else 'void *')
            else:
                # The parameter's own type (an array parameter is a pointer).
                ltypes.append('__typeof__(%s)' % q.name)
        # A handle's c2f returns MPI_Fint, its f2c the handle; else an error code.
        ret = self.p.ret
        handle_ret = [conv for ctype, conv in HANDLES.values() if ctype == ret]
        lret = 'void *' if handle_ret else 'int'
        cast = '%s (*)(%s)' % (lret, ', '.join(ltypes) or 'void')
        out = ['%s PMPI_%s(%s)' % (ret, self.short(), decls), '{']
        out += ['    ' + s for s in self.temps]
        if self.temps:
            nulls = ' || '.join('!%s_l' % t for t in self.temp_names)
            out.append('    if (%s) {' % nulls)
            out += ['        ' + s for s in self.free]
            out.append('        return abi_no_mem("MPI_%s");' % self.short())
            out.append('    }')
        out += ['    ' + s for s in self.pre]
        out.append('    %s rc_ = ((%s)abi_fn[%d])(%s);' % (lret, cast, idx, ', '.join(self.args)))
        if self.p.name in ATTR_GETS:
            # Predefined attributes whose values are constants of the ABI's.
            key, val = ATTR_GETS[self.p.name]
            out.append('    if (rc_ == 0 && *flag)')
            out.append('        abi_attr_out(abi_keyval_in(%s), %s);' % (key, val))
        if self.post:
            # Under MPI_ERR_IN_STATUS the statuses and requests say more.
            out.append('    if (rc_ == 0 || abi_in_status(rc_)) {')
            out += ['        ' + s for s in self.post]
            out.append('    }')
        out += ['    ' + s for s in self.post_always]
        out += ['    ' + s for s in self.free]
        if handle_ret:
            out.append('    return abi_%s_out(rc_);' % handle_ret[0])
        elif ret == 'MPI_Fint':
            out.append('    return rc_;')
        else:
            out.append('    return abi_err_out(rc_);')
        out.append('}')
        out.append('#pragma weak MPI_%s = PMPI_%s' % (self.short(), self.short()))
        return '\n'.join(out)


def objects_write(lib, out, legacy_text):
    """The legacy library's exported data objects (ompi_mpi_comm_world 512
    bytes, ...: every ompi_mpi_* and every object a predefined handle of
    the header names), defined with the same names and sizes."""
    import subprocess
    nm = subprocess.run(['nm', '-D', '-S', '--defined-only', lib], capture_output=True,
                        text=True, check=True).stdout
    named = set(re.findall(r'OMPI_PREDEFINED_GLOBAL\(\s*\w+\s*,\s*(\w+)\s*\)', legacy_text))
    # Objects of a newer release (abi_compat.h), with their sizes there.
    objs = [(m.group(1), int(m.group(2))) for m in re.finditer(
        r'\b(ompi_\w+);\s*/\*\s*exported object, (\d+) bytes', legacy_text)]
    for line in nm.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in 'BDVR' and (f[3].startswith('ompi_mpi_') or f[3] in named):
            objs.append((f[3], int(f[1], 16)))
    with open(out, 'w') as f:
        f.write('/* Generated by src/api/gen_abi.py from %s: its exported data objects, '
                'same names and sizes. */\n' % os.path.basename(lib))
        for name, size in sorted(set(objs)):
            align = 64 if size >= 64 else 8 if size >= 8 else 1
            f.write('__attribute__((visibility("default"), aligned(%d))) unsigned char %s[%d];\n'
                    % (align, name, size))


def main():
    abi, locus_h, legacy_h, out_c, out_txt, out_h = sys.argv[1:7]
    assert abi in ('mpich', 'openmpi')
    if len(sys.argv) > 8:
        objects_write(sys.argv[7], sys.argv[8], legacy_defines(legacy_h, abi)[1])
    lv, lh, lk = locus_values(locus_h)
    defined, legacy_text = legacy_defines(legacy_h, abi)
    procs = mpiapi.load()
    names, bodies, report = [], [], []
    fortran, by_table = fortran_handles(abi, legacy_h, legacy_text, names)
    bodies.append(fortran)
    by_hand = BY_HAND | BY_HAND_ABI[abi]
    for name in sorted(procs):
        p = procs[name]
        fint_or_handle = p.ret == 'MPI_Fint' or p.ret in [c for c, _ in HANDLES.values()]
        if not p.c or (p.ret != 'int' and not fint_or_handle):
            continue
        for large in ([False, True] if p.large_count else [False]):
            cname = name + ('_c' if large else '')
            if name in SKIP:
                report.append('%-40s not generated: %s' % (cname, SKIP[name]))
                continue
            if cname in by_table:
                report.append('%-40s generated from the legacy mpif.h\'s integers' % cname)
                continue
            if cname in by_hand:
                report.append('%-40s by hand (src/abi/common, src/abi/%s)' % (cname, abi))
                continue
            if re.search(r'#\s*define\s+%s\b' % cname, legacy_text):
                report.append('%-40s not generated: a macro in the legacy header' % cname)
                continue
            g = Gen(p, legacy_text, large)
            body = g.write(len(names))
            if body is None:
                report.append('%-40s not yet: %s' % (cname, g.missing))
                continue
            names.append('PMPI_' + g.short())
            bodies.append(body)
    # Predefined handles: the legacy header's value beside Locus's.
    # The null handles first: a legacy value some other name shares (MPICH
    # makes the types it lacks MPI_DATATYPE_NULL) is the null handle.
    predef = sorted((n for n in lh if n in defined), key=lambda n: (not n.endswith('_NULL'), n))
    classes = sorted(n for n in lv if (n.startswith(('MPI_ERR_', 'MPI_T_ERR_')) or n == 'MPI_SUCCESS')
                     and n in defined)
    with open(out_c, 'w') as f:
        f.write('/* Generated by src/api/gen_abi.py from the API description and the two '
                'mpi.h files: do not edit. */\n')
        f.write('#include "abi_layer.h"\n\n')
        f.write('const char *const abi_fn_names[] = {\n%s\n    NULL\n};\n'
                % '\n'.join('    "%s",' % n for n in names))
        f.write('void *abi_fn[%d];\n\n' % (len(names) + 1))
        f.write('/* Every predefined handle: the legacy value, then Locus\'s. */\n')
        f.write('const abi_pair_t abi_predef[] = {\n%s\n};\n' % '\n'.join(
            '#ifdef %s\n    { (intptr_t)%s, 0x%x, %s },\n#endif' % (n, n, lh[n], lk[n])
            for n in predef))
        f.write('const int abi_npredef = sizeof abi_predef / sizeof abi_predef[0];\n\n')
        f.write('/* Error classes: the legacy value, then Locus\'s. */\n')
        f.write('const abi_pair_t abi_classes[] = {\n%s\n};\n' % '\n'.join(
            '    { %s, %d, 0 },' % (n, lv[n]) for n in classes))
        f.write('const int abi_nclasses = %d;\n\n' % len(classes))
        for m, wanted in sorted(MAP_NAMES.items()):
            pairs = [n for n in sorted(lv) if any(n == w or (w.endswith('_') and n.startswith(w))
                                                 for w in wanted)
                     and re.search(r'\b%s\b' % n, legacy_text)]
            f.write('static const int %s_pairs[][2] = {\n%s\n};\n' % (m, '\n'.join(
                '    { %s, %d },' % (n, lv[n]) for n in pairs)))
            fn = 'abi_bits' if m in BIT_MAPS else 'abi_map'
            # Every call has a rank or a tag: an ordinary one (not negative,
            # as none of the special values is in any ABI) is itself.
            fast = 'v >= 0 ? v : ' if m in ('rank', 'tag') else ''
            f.write('int abi_%s_in(int v) { return %s%s(%s_pairs, %d, v, 1); }\n'
                    % (m, fast, fn, m, len(pairs)))
            f.write('int abi_%s_out(int v) { return %s%s(%s_pairs, %d, v, 0); }\n\n'
                    % (m, fast, fn, m, len(pairs)))
        f.write('\n\n'.join(bodies) + '\n')
    with open(out_h, 'w') as f:
        f.write('/* Generated by src/api/gen_abi.py from Locus\'s mpi.h: its values as '
                'LOCUS_<name>, for the code that also sees a legacy mpi.h. */\n')
        for n, v in sorted(list(lv.items()) + list(lh.items())):
            f.write('#define LOCUS_%s %d\n' % (n, v))
    with open(out_txt, 'w') as f:
        f.write('# %s ABI: %d entry points generated; the rest:\n' % (abi, len(names)))
        f.write('\n'.join(report) + '\n')


if __name__ == '__main__':
    main()
