#!/usr/bin/env python3
"""gen_c.py — generates the mechanical part of Locus's C interface from the
API description (mpi_api.json, read through mpiapi.py).

    gen_c.py OUT_DIR [MPI_API_JSON]

writes

    OUT_DIR/mpi_bindings.h    the prototype of every implementation the
                           generated entry points call (mpi_impl.h
                           includes it, so a hand-written implementation
                           that strays from it does not compile)
    OUT_DIR/mpi_bindings.c    the entry points: PMPI_X and its profiling name
                           MPI_X (a weak alias) for every form of every
                           generated procedure
    OUT_DIR/mpi_bindings.txt  what is generated, and what is written by hand
                           with the reason

What is mechanical:

  * The MPI_THREAD_MULTIPLE lock: every entry point starts with
    LOCUS_ENTRY_CS() (mpi_impl.h), which holds it until the return.

  * The int/large-count twins. MPI_X and MPI_X_c (and the deprecated
    MPI_X_x, where the standard kept one) call one implementation that
    takes the large form's arguments. An int array of the classic form
    and the MPI_Count / MPI_Aint array of the large one reach it as a
    locus_ivec_t (either width); an int result that does not fit is
    MPI_UNDEFINED in the classic form, the standard's rule for counts.
  * The blocking, nonblocking and persistent forms of one operation
    (MPI_Bcast, MPI_Ibcast, MPI_Bcast_init; MPI_Put, MPI_Rput): one
    implementation, told the form (locus_how_t) and given the union of
    their arguments (MPI_INFO_NULL, NULL or MPI_STATUS_IGNORE where a form
    has no such argument).
  * The send modes (MODES below): one implementation, told the mode.

The implementation of procedure family F is locus_<f>_impl (lower case),
written by hand in F's chapter; its last argument is the name of the
entry point called, for the error reports.

  * The argument checks that are pure kind rules, for the procedures of
    CHECKED (every other one is written by hand): MPI is initialized
    (unless the standard allows the call before MPI_Init: NO_INIT), the
    first handle of a kind that names the call's object (a communicator,
    group, operation, window or session) is a live one, of that kind's
    error class, an error code is one in use and every pointer to a scalar
    the call writes is not NULL (MPI_ERR_ARG). The implementation, locus_<x>_impl, gets the
    object in place of the handle and returns an error class or
    MPI_SUCCESS; the entry point raises the error through the object's
    error handler (MPI_COMM_WORLD's when there is none). The tool
    interface (MPI_T_*) has its own rules: MPI_T_init_thread first, and
    its error codes returned, never raised.
"""
import os
import sys

import mpiapi

# ---------------------------------------------------------------------------
# What stays written by hand, with the reason (their twins are in the
# chapters' own files).
HAND = {
    'MPI_Op_create': 'the two forms take different callback types (MPI_User_function '
                     'and MPI_User_function_c), which the operation must remember',
    'MPI_Register_datarep': 'callbacks of two types (io/file_datarep.c)',
    'MPI_Type_get_envelope': 'the large form returns one count more (num_large_counts)',
    'MPI_Type_get_contents': 'the large form fills one array more (array_of_large_counts)',
    'MPI_Buffer_detach': 'the int form reports a buffer larger than INT_MAX as MPI_ERR_COUNT '
                         'through the error handler of the buffer\'s owner',
    'MPI_Comm_detach_buffer': 'as MPI_Buffer_detach',
    'MPI_Win_shared_query': 'the int form clamps a displacement unit above INT_MAX',
}
HAND_PREFIX = {
    'MPI_File_': 'MPI-IO is written by hand in io/ (file_calls.c and its neighbours)',
}

# Operations that come in several modes, one implementation for all: the
# procedure -> (the procedure whose implementation serves it, the mode, its
# first argument: a constant of the chapter's contract header).
MODES = {
    'MPI_Send': ('MPI_Send', 'P2P_STANDARD'),
    'MPI_Ssend': ('MPI_Send', 'P2P_SYNC'),
    'MPI_Rsend': ('MPI_Send', 'P2P_READY'),
    'MPI_Bsend': ('MPI_Send', 'P2P_BUFFERED'),
    'MPI_Group_union': ('MPI_Group_union', 'LOCUS_GROUP_UNION'),
    'MPI_Group_intersection': ('MPI_Group_union', 'LOCUS_GROUP_INTERSECTION'),
    'MPI_Group_difference': ('MPI_Group_union', 'LOCUS_GROUP_DIFFERENCE'),
    'MPI_Group_range_incl': ('MPI_Group_range_incl', '0'),
    'MPI_Group_range_excl': ('MPI_Group_range_incl', '1'),
    'MPI_Comm_connect': ('MPI_Comm_connect', '0'),
    'MPI_Comm_accept': ('MPI_Comm_connect', '1'),
    'MPI_Publish_name': ('MPI_Publish_name', '0'),
    'MPI_Lookup_name': ('MPI_Publish_name', '1'),
    'MPI_Unpublish_name': ('MPI_Publish_name', '2'),
    'MPI_Win_flush': ('MPI_Win_flush', '0'),
    'MPI_Win_flush_local': ('MPI_Win_flush', '1'),
    'MPI_Win_flush_all': ('MPI_Win_flush_all', '0'),
    'MPI_Win_flush_local_all': ('MPI_Win_flush_all', '1'),
    'MPI_T_category_get_cvars': ('MPI_T_category_get_cvars', '0'),
    'MPI_T_category_get_pvars': ('MPI_T_category_get_cvars', '1'),
    'MPI_T_category_get_categories': ('MPI_T_category_get_cvars', '2'),
}
MODE_HEADERS = ['pt2pt/pt2pt.h']

# Families generated although none of their forms has a large-count twin.
EXTRA_FAMILIES = {'MPI_Barrier'}

# ---------------------------------------------------------------------------
# Checked entry points: the procedures whose checks are generated.
CHECKED = {
    # comm/
    'MPI_Comm_rank', 'MPI_Comm_size', 'MPI_Comm_test_inter', 'MPI_Comm_remote_size',
    'MPI_Comm_group', 'MPI_Comm_remote_group', 'MPI_Group_size', 'MPI_Group_rank',
    'MPI_Group_incl', 'MPI_Group_excl', 'MPI_Group_translate_ranks', 'MPI_Group_compare',
    'MPI_Group_union', 'MPI_Group_intersection', 'MPI_Group_difference',
    'MPI_Group_range_incl', 'MPI_Group_range_excl', 'MPI_Comm_dup_with_info',
    'MPI_Comm_set_info', 'MPI_Comm_get_info', 'MPI_Comm_split_type',
    # topo/
    'MPI_Cart_create', 'MPI_Cart_map', 'MPI_Graph_create', 'MPI_Graph_map',
    # datatype/
    'MPI_Op_commutative',
    # env/
    'MPI_Error_string', 'MPI_Error_class', 'MPI_Add_error_class', 'MPI_Add_error_code',
    'MPI_Add_error_string', 'MPI_Comm_create_errhandler', 'MPI_Comm_set_errhandler',
    'MPI_Comm_get_errhandler', 'MPI_Comm_call_errhandler', 'MPI_Errhandler_free',
    'MPI_Get_processor_name', 'MPI_Get_version', 'MPI_Get_library_version',
    # Info: the implementations take the handle and raise nothing (the
    # other chapters use them with their own infos).
    'MPI_Info_create', 'MPI_Info_set', 'MPI_Info_delete', 'MPI_Info_get_string', 'MPI_Info_get',
    'MPI_Info_get_valuelen', 'MPI_Info_get_nkeys', 'MPI_Info_get_nthkey', 'MPI_Info_dup',
    # init/
    'MPI_Query_thread', 'MPI_Is_thread_main',
    # dynproc/
    'MPI_Comm_get_parent', 'MPI_Comm_connect', 'MPI_Comm_accept', 'MPI_Open_port',
    'MPI_Close_port', 'MPI_Publish_name', 'MPI_Lookup_name', 'MPI_Unpublish_name',
    'MPI_Comm_join',
    # rma/
    'MPI_Win_fence', 'MPI_Win_post', 'MPI_Win_start', 'MPI_Win_complete', 'MPI_Win_wait',
    'MPI_Win_test', 'MPI_Win_lock', 'MPI_Win_unlock', 'MPI_Win_lock_all', 'MPI_Win_unlock_all',
    'MPI_Win_flush', 'MPI_Win_flush_local', 'MPI_Win_flush_all', 'MPI_Win_flush_local_all',
    'MPI_Win_sync', 'MPI_Win_create_errhandler', 'MPI_Win_set_errhandler',
    'MPI_Win_get_errhandler', 'MPI_Win_call_errhandler', 'MPI_Win_set_attr',
    'MPI_Win_delete_attr', 'MPI_Win_get_attr', 'MPI_Win_set_name', 'MPI_Win_get_group',
    'MPI_Win_set_info', 'MPI_Win_get_info',
    # session/
    'MPI_Session_get_num_psets', 'MPI_Session_get_nth_pset', 'MPI_Session_get_pset_info',
    'MPI_Session_get_info', 'MPI_Group_from_session_pset', 'MPI_Session_set_errhandler',
    'MPI_Session_get_errhandler', 'MPI_Session_call_errhandler',
    # mpit/
    'MPI_T_finalize', 'MPI_T_category_get_num', 'MPI_T_category_get_cvars',
    'MPI_T_category_get_pvars', 'MPI_T_category_get_categories', 'MPI_T_category_get_events',
    'MPI_T_category_changed', 'MPI_T_event_get_num', 'MPI_T_source_get_num',
    'MPI_T_cvar_get_num', 'MPI_T_pvar_get_num', 'MPI_T_category_get_index',
    'MPI_T_event_get_index', 'MPI_T_cvar_get_index', 'MPI_T_pvar_get_index',
    'MPI_T_pvar_session_create',
}
# ... of them, those the standard allows before MPI_Init and after
# MPI_Finalize.
NO_INIT = {
    # Groups work before and after the library runs (MPI_GROUP_EMPTY).
    'MPI_Group_size', 'MPI_Group_rank', 'MPI_Group_translate_ranks', 'MPI_Group_compare',
    # What a program may ask of the library at any time.
    'MPI_Error_string', 'MPI_Error_class', 'MPI_Get_processor_name', 'MPI_Get_version',
    'MPI_Get_library_version',
    # Info objects, for the sessions and MPI_T (MPI-4).
    'MPI_Info_create', 'MPI_Info_set', 'MPI_Info_delete', 'MPI_Info_get_string', 'MPI_Info_get',
    'MPI_Info_get_valuelen', 'MPI_Info_get_nkeys', 'MPI_Info_get_nthkey', 'MPI_Info_dup',
    # Sessions need no MPI_Init (MPI-4 11.3).
    'MPI_Session_get_num_psets', 'MPI_Session_get_nth_pset', 'MPI_Session_get_pset_info',
    'MPI_Session_get_info', 'MPI_Group_from_session_pset', 'MPI_Session_set_errhandler',
    'MPI_Session_get_errhandler', 'MPI_Session_call_errhandler',
}

# The kinds of handle that name a call's object: its C type, how a handle
# becomes it, when it is not a live one, the class of that, how an error
# is raised on it and where its error handler is kept (%s: the object). The kinds that own an error
# handler come first: they win when a call names several.
OBJECTS = {
    'COMMUNICATOR': ('locus_comm_t', 'locus_comm_of', '!locus_comm_valid(%s)', 'MPI_ERR_COMM',
                     'locus_mpi_err(%s, err, fn)', '%s->errh'),
    'WINDOW': ('locus_win_t', 'locus_win_of', '!%s', 'MPI_ERR_WIN', 'locus_win_err(%s, err, fn)',
               '%s->comm->errh'),
    'SESSION': ('locus_session_t', 'locus_session_of', '!%s', 'MPI_ERR_SESSION',
                'locus_session_err(%s, err, fn)', '%s->errh'),
    'GROUP': ('locus_group_t', 'locus_group_of', '!%s', 'MPI_ERR_GROUP',
              'locus_mpi_err(NULL, err, fn)', None),
    'OPERATION': ('locus_op_t', 'locus_op_of', '!%s', 'MPI_ERR_OP', 'locus_mpi_err(NULL, err, fn)',
                  None),
}
# MPI_<object>_set/get/call_errhandler, the same on every object that has
# a handler, need no implementation of their own (%s: the handler's place
# and the second argument); call raises the code on the object.
HANDLER_CALLS = {
    'set_errhandler': 'locus_errh_set_handle(&%s, %s)',
    'get_errhandler': 'locus_errh_get_handle(%s, %s)',
    'call_errhandler': None,
}
OBJECT_HEADERS = ['comm/comm.h', 'datatype/datatype.h', 'rma/rma.h', 'session/session.h',
                  'mpit/mpit.h']
# Pointers a call writes that may be NULL (or are no scalar).
UNCHECKED_OUT_KINDS = {'STATUS', 'BUFFER', 'C_BUFFER', 'C_BUFFER2', 'C_BUFFER3', 'C_BUFFER4',
                       'STRING', 'STRING_ARRAY', 'STRING_2DARRAY', 'ATTRIBUTE_VAL',
                       'ATTRIBUTE_VAL_10', 'EXTRA_STATE', 'EXTRA_STATE2', 'LOGICAL_VOID',
                       'TOOL_MPI_OBJ', 'TOOL_VAR_VALUE', 'F90_STATUS', 'F08_STATUS'}


class Checked:
    """One checked entry point: its procedure, the parameter naming its
    object (or None), the pointers to check."""

    def __init__(self, proc, procs):
        self.proc = proc
        self.mode = MODES.get(proc.name)
        # The implementation's parameters are its root's (MODES).
        self.root = procs[self.mode[0]] if self.mode else proc
        self.impl = 'locus_%s_impl' % (self.mode[0][4:] if self.mode else proc.short).lower()
        self.tool = proc.short.startswith('T_')
        # The object is the handle that owns an error handler, where the
        # call has one (MPI_Win_post's window, not its group).
        objs = [p for p in proc.c_params()
                if not self.tool and p.dir == 'in' and p.kind in OBJECTS and
                '[' not in p.c() and '*' not in p.c()]
        objs.sort(key=lambda p: list(OBJECTS).index(p.kind))
        self.obj = objs[0] if objs else None
        self.codes = [p for p in proc.c_params() if p.kind == 'ERROR_CODE' and p.dir == 'in']
        verb = proc.name.split('_', 2)[-1]
        self.handler_call = verb if self.obj and OBJECTS[self.obj.kind][5] and \
            verb in HANDLER_CALLS else None
        self.outs = [p for p in proc.c_params()
                     if p.dir in ('out', 'inout') and p.kind not in UNCHECKED_OUT_KINDS and
                     '*' in p.c() and '[' not in p.c() and p.c().count('*') == 1]

    def impl_params(self):
        out = ['int mode'] if self.mode else []
        for p in self.root.c_params():
            if self.obj and p.name == self.obj.name:
                out.append('%s *%s' % (OBJECTS[p.kind][0], p.name))
            else:
                out.append(p.c())
        return out


def checked_prototype(ch):
    if ch.handler_call:
        return []
    lines = wrap_call('int ' + ch.impl, ch.impl_params() or ['void'], '')
    lines[-1] += ';'
    return lines


def checked_entry(ch):
    p = ch.proc
    name = p.name
    decls = [q.c() for q in p.c_params()]
    lines = ['LOCUS_PMPI_WEAK(%s)' % p.short]
    lines += wrap_call('%s P%s' % (p.ret, name), decls or ['void'], '')
    lines.append('{')
    lines.append('    LOCUS_ENTRY_CS();')
    if ch.tool:
        lines.append('    MPIT_CHECK_INIT();')
        for q in ch.outs:
            lines.append('    if (!%s)' % q.name)
            lines.append('        return MPI_T_ERR_INVALID;')
        mode = [ch.mode[1]] if ch.mode else []
        lines += wrap_call('return ' + ch.impl, mode + [q.name for q in p.c_params()], '    ')
        lines[-1] += ';'
        lines.append('}')
        lines.append('')
        return lines
    lines.append('    static const char fn[] = "%s";' % name)
    if name not in NO_INIT:
        lines.append('    LOCUS_CHECK_INIT(fn);')
    raise_ = 'locus_mpi_err(NULL, err, fn)'
    conds = []
    args = []
    if ch.obj:
        ctype, conv, invalid, cls, raise_, slot = OBJECTS[ch.obj.kind]
        obj = ch.obj.name + '_o'
        lines.append('    %s *%s = %s(%s);' % (ctype, obj, conv, ch.obj.name))
        conds.append((invalid % obj, cls))
        raise_ = raise_ % obj if '%s' in raise_ else raise_
    for q in ch.codes:
        conds.append(('!locus_err_code_known(%s)' % q.name, 'MPI_ERR_ARG'))
    for q in ch.outs:
        conds.append(('!%s' % q.name, 'MPI_ERR_ARG'))
    if ch.mode:
        args.append(ch.mode[1])
    for q in p.c_params():
        args.append(q.name + '_o' if q is ch.obj else q.name)
    other = p.c_params()[1].name if ch.handler_call else None
    if ch.handler_call == 'call_errhandler':
        code_raise = raise_.replace('err, fn', other + ', fn')
        done = ['    else {', '        %s;  /* what the call is for */' % code_raise,
                '        err = MPI_SUCCESS;', '    }']
    elif ch.handler_call:
        call = HANDLER_CALLS[ch.handler_call] % (slot % obj, other)
        done = ['    else', '        err = %s;' % call]
    else:
        done = ['    else'] + wrap_call('err = ' + ch.impl, args, '        ')
        done[-1] += ';'
    if conds:
        lines.append('    int err;')
        first = True
        for cond, cls in conds:
            lines.append('    %sif (%s)' % ('' if first else 'else ', cond))
            lines.append('        err = %s;' % cls)
            first = False
        lines += done
    else:
        lines += wrap_call('int err = ' + ch.impl, args, '    ')
        lines[-1] += ';'
    lines.append('    return err == MPI_SUCCESS ? MPI_SUCCESS : %s;' % raise_)
    lines.append('}')
    lines.append('')
    return lines


HOW = {'blocking': 'LOCUS_HOW_BLOCKING', 'nonblocking': 'LOCUS_HOW_NONBLOCKING',
       'persistent': 'LOCUS_HOW_PERSISTENT'}
# What a form passes for an argument of its family that it does not have.
ABSENT = {'REQUEST': 'NULL', 'INFO': 'MPI_INFO_NULL', 'STATUS': 'MPI_STATUS_IGNORE'}


def hand_reason(name):
    if name in HAND:
        return HAND[name]
    for prefix, why in HAND_PREFIX.items():
        if name.startswith(prefix):
            return why
    return None


# ---------------------------------------------------------------------------
# Families: which procedures share an implementation, in which form.

def lcfirst(s):
    return s[:1].lower() + s[1:]


def ends_with_request(proc):
    ps = proc.c_params()
    return bool(ps) and ps[-1].kind == 'REQUEST' and ps[-1].dir == 'out'


def family_members(procs, base):
    """[(procedure, form)] of base's family: itself (blocking), its
    nonblocking sibling (MPI_I<x> or MPI_R<x>: base's arguments, maybe
    without a status, and a request) and its persistent one (MPI_<X>_init)."""
    members = [(base, 'blocking')]
    own = [p.name for p in base.c_params() if p.kind != 'STATUS']
    for prefix in ('MPI_I', 'MPI_R'):
        sib = procs.get(prefix + lcfirst(base.short))
        if sib and ends_with_request(sib) and \
                [p.name for p in sib.c_params()][:len(own)] == own:
            members.append((sib, 'nonblocking'))
    init = procs.get(base.name + '_init')
    if init and ends_with_request(init):
        members.append((init, 'persistent'))
    return members


def union_params(members):
    """The family's arguments: the blocking form's, then any info and
    request the other forms add."""
    out = list(members[0][0].params)
    names = {p.name for p in out}
    extra = []
    for proc, _ in members[1:]:
        for p in proc.params:
            if p.name not in names:
                names.add(p.name)
                extra.append(p)
    extra.sort(key=lambda p: p.kind == 'REQUEST')
    return out + extra


class Family:
    def __init__(self, root, members, mode_root=None):
        self.root = root                  # the blocking procedure
        self.members = members            # [(procedure, form)]
        self.params = union_params(members)
        self.mode_root = mode_root        # MODES: the procedure whose implementation serves it
        self.impl = 'locus_%s_impl' % (mode_root or root).short.lower()
        self.has_how = len(members) > 1 or any(
            f != 'blocking' for _, f in members) or root.name in EXTRA_FAMILIES


def build_families(procs):
    generated = {n for n, p in procs.items()
                 if p.c and p.large_count and not hand_reason(n)}
    families = []
    taken = set()
    # A family's root is its blocking form: the one no sibling names.
    sibling_of = set()
    for n in sorted(generated | EXTRA_FAMILIES):
        for proc, form in family_members(procs, procs[n])[1:]:
            sibling_of.add(proc.name)
    for n in sorted(generated | EXTRA_FAMILIES):
        if n in sibling_of or n in taken:
            continue
        members = family_members(procs, procs[n])
        for proc, _ in members:
            if proc.name not in generated and proc.name not in EXTRA_FAMILIES and \
                    proc.large_count:
                sys.exit('gen_c: %s is generated but its sibling %s is not' % (n, proc.name))
            taken.add(proc.name)
        mode_root = procs[MODES[n][0]] if n in MODES else None
        families.append(Family(procs[n], members, mode_root))
    left = generated - taken
    if left:
        sys.exit('gen_c: no family for %s' % ', '.join(sorted(left)))
    return families


# ---------------------------------------------------------------------------
# How one argument reaches the implementation.

INT_TYPES = {'int', 'MPI_Aint', 'MPI_Count', 'MPI_Offset'}


class Arg:
    """One argument of one form: its parameter in the entry point, the
    locals and statements around the call, the expression passed."""

    def __init__(self):
        self.decl = None
        self.locals = []
        self.after = []
        self.expr = None


def impl_decl(p):
    """The implementation's parameter for p (a family's union member)."""
    large = p.c(True)
    small = p.c(False)
    if small and large and small != large:
        sb, sp, sn, sa = mpiapi.split_decl(small)
        lb, lp, ln, la = mpiapi.split_decl(large)
        sbase = sb.replace('const ', '')
        if sa and sbase == 'int':
            return 'locus_ivec_t %s' % p.name     # an int array or a wide one
    return large


def convert(p, large, present):
    """The Arg for parameter p in one form (present: the form has it)."""
    a = Arg()
    if not present:
        a.expr = ABSENT.get(p.kind)
        if a.expr is None:
            sys.exit('gen_c: no stand-in for a missing %s argument %s' % (p.kind, p.name))
        return a
    decl = p.c(large)
    a.decl = decl
    other = p.c(not large) if not p.large_only else None
    if not other or other == p.c(True) and decl == p.c(True):
        a.expr = p.name
        return a
    want = p.c(True)
    sb, sp, sn, sa = mpiapi.split_decl(decl)
    wb, wp, wn, wa = mpiapi.split_decl(want)
    sbase, wbase = sb.replace('const ', ''), wb.replace('const ', '')
    if impl_decl(p).startswith('locus_ivec_t'):
        a.expr = '(locus_ivec_t){ %s, %d }' % (p.name, 0 if sbase == 'int' and not large else 1)
        return a
    if large:
        a.expr = p.name
        return a
    if sbase not in INT_TYPES or wbase not in INT_TYPES:
        sys.exit('gen_c: %s: cannot convert %s to %s' % (p.name, decl, want))
    if not sp and not sa:                        # a scalar widened on the way in
        a.expr = p.name
        return a
    if sbase != 'int':                           # MPI_Aint to MPI_Count: the same width
        a.expr = '(%s)%s' % (('const ' if 'const' in sb else '') + wbase + ' *', p.name)
        return a
    # An int result (or position) through a wide local.
    tmp = '%s_w' % p.name
    init = '%s ? *%s : 0' % (p.name, p.name) if p.dir == 'inout' else '0'
    a.locals.append('%s %s = %s;' % (wbase, tmp, init))
    a.expr = '%s ? &%s : NULL' % (p.name, tmp)
    a.after.append('if (rc == MPI_SUCCESS && %s)' % p.name)
    a.after.append('    *%s = %s > INT_MAX || %s < INT_MIN ? MPI_UNDEFINED : (int)%s;'
                   % (p.name, tmp, tmp, tmp))
    return a


def wrap_call(head, args, indent):
    """`head(args)` broken at 100 columns."""
    line = indent + head + '('
    lines = []
    for i, a in enumerate(args):
        piece = a + (', ' if i + 1 < len(args) else ')')
        if len(line) + len(piece) > 100:
            lines.append(line.rstrip())
            line = indent + ' ' * (len(head) + 1)
        line += piece
    if not args:
        line += ')'
    lines.append(line)
    return lines


def entry_point(fam, proc, form, large, suffix):
    """The lines of PMPI_<proc><suffix>."""
    name = proc.name + suffix
    present = {p.name for p in proc.params if p.c(large)}
    args = [convert(p, large, p.name in present) for p in fam.params]
    head = 'int P%s' % name
    decls = [p.c(large) for p in proc.params if p.c(large)]
    lines = ['LOCUS_PMPI_WEAK(%s)' % name[4:]]
    lines += wrap_call(head, decls or ['void'], '')
    lines.append('{')
    lines.append('    LOCUS_ENTRY_CS();')
    for a in args:
        lines += ['    ' + s for s in a.locals]
    call = []
    if fam.mode_root:
        call.append(MODES[fam.root.name][1])
    if fam.has_how:
        call.append(HOW[form])
    call += [a.expr for a in args]
    call.append('"%s"' % name)
    after = [s for a in args for s in a.after]
    if after:
        lines += wrap_call('int rc = ' + fam.impl, call, '    ')
        lines[-1] += ';'
        lines += ['    ' + s for s in after]
        lines.append('    return rc;')
    else:
        lines += wrap_call('return ' + fam.impl, call, '    ')
        lines[-1] += ';'
    lines.append('}')
    lines.append('')
    return lines


def prototype(fam):
    params = []
    if fam.mode_root:
        params.append('int mode')
    if fam.has_how:
        params.append('locus_how_t how')
    params += [impl_decl(p) for p in fam.params]
    params.append('const char *fn')
    lines = wrap_call('int ' + fam.impl, params, '')
    lines[-1] += ';'
    return lines


def x_form(procs, proc):
    """MPI_<X>_x, the MPI-3 large-count form the standard kept, when its
    arguments are the large form's."""
    x = procs.get(proc.name + '_x')
    if x and [p.c() for p in x.c_params()] == [p.c(True) for p in proc.c_params(True)]:
        return x
    return None


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit('usage: gen_c.py OUT_DIR [MPI_API_JSON]')
    out_dir = sys.argv[1]
    path = sys.argv[2] if len(sys.argv) == 3 else mpiapi.DEFAULT_PATH
    procs = mpiapi.load(path)
    families = build_families(procs)
    banner = '/* Generated by src/api/gen_c.py from src/api/mpi_api.json: do not edit. */'

    h = [banner, '#ifndef LOCUS_MPI_BINDINGS_H', '#define LOCUS_MPI_BINDINGS_H', '',
         '/* The hand-written implementations behind the generated entry points',
         ' * (mpi_bindings.c); in mpi_impl.h, after what they need. */', '']
    seen = set()
    for fam in families:
        if fam.impl in seen:
            continue
        seen.add(fam.impl)
        h += prototype(fam)
    checked = [Checked(procs[n], procs) for n in sorted(CHECKED)]
    for ch in checked:
        if ch.impl not in seen:
            seen.add(ch.impl)
            h += checked_prototype(ch)
    h += ['', '#endif']

    c = [banner, '#include <limits.h>', '#include <stddef.h>', '', '#include "mpi_impl.h"']
    c += ['#include "%s"' % hdr for hdr in sorted(set(MODE_HEADERS + OBJECT_HEADERS))]
    c += ['', '_Static_assert(sizeof(MPI_Aint) == sizeof(MPI_Count),',
          '               "an MPI_Aint array stands in for an MPI_Count one");', '']
    report_gen = []
    xs = set()
    for fam in families:
        for proc, form in fam.members:
            c += entry_point(fam, proc, form, False, '')
            report_gen.append('%s -> %s' % (proc.name, fam.impl))
            if proc.large_count:
                c += entry_point(fam, proc, form, True, '_c')
                report_gen.append('%s_c -> %s' % (proc.name, fam.impl))
                x = x_form(procs, proc)
                if x:
                    c += entry_point(fam, x, form, True, '')
                    report_gen.append('%s -> %s' % (x.name, fam.impl))
                    xs.add(x.name)
    for ch in checked:
        c += checked_entry(ch)
        report_gen.append('%s -> %s (checked)' % (ch.proc.name, ch.impl))
    hand = sorted((n, hand_reason(n)) for n, p in procs.items()
                  if p.c and p.large_count and hand_reason(n))
    rep = ['The C entry points generated from the API description (src/api/gen_c.py)', '',
           'generated (%d):' % len(report_gen)]
    rep += ['  ' + r for r in report_gen]
    rep += ['', 'large-count twins written by hand (%d):' % len(hand)]
    rep += ['  %s: %s' % r for r in hand]

    os.makedirs(out_dir, exist_ok=True)
    write(os.path.join(out_dir, 'mpi_bindings.h'), h)
    write(os.path.join(out_dir, 'mpi_bindings.c'), c)
    write(os.path.join(out_dir, 'mpi_bindings.txt'), rep)


def write(path, lines):
    """Rewrites path only when it changes, so the build redoes nothing
    after a generator run that changed nothing."""
    text = '\n'.join(lines) + '\n'
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == '__main__':
    main()
