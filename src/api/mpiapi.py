"""mpiapi.py — Locus's description of the MPI API (mpi_api.json, derived
from the MPI Forum's apis.json by derive_mpi_api.py), as Python objects
for the generators: gen_c.py (the C twins and their profiling names),
gen_fortran.py (the Fortran binding) and the checks in tests/api.

A procedure has a name ("MPI_Send"), a C return type, its parameters in
the standard's order, and says which languages express it (c, f90 —
`use mpi` and mpif.h — and f08). One with a large-count form
(large_count) exists in C as MPI_X and MPI_X_c; a parameter's C
declaration may differ between the two (c and c_large), and a few exist
only in the large form (large_only).
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PATH = os.path.join(HERE, 'mpi_api.json')


class Param:
    def __init__(self, d):
        self.name = d['name']
        self.kind = d['kind']
        self.dir = d['dir']                   # in, out, inout
        self.length = d.get('len')            # an array's length: a parameter, a constant or '*'
        self.const = d.get('const', False)
        self.large_only = d.get('large_only', False)
        self.c_small = tidy(d['c']) if d.get('c') else None
        self.c_large = tidy(d.get('c_large') or d.get('c') or '') or None

    def c(self, large=False):
        """The C declaration in one form (None: not in that form)."""
        if large:
            return self.c_large
        return None if self.large_only else self.c_small

    def differs(self):
        """1 when the two C forms declare this parameter differently."""
        return self.large_only or self.c_small != self.c_large

    def __repr__(self):
        return 'Param(%s %s)' % (self.kind, self.name)


class Procedure:
    def __init__(self, d):
        self.name = d['name']                 # MPI_Send
        self.short = self.name[4:]            # Send
        self.ret = d['return']
        self.large_count = d['large_count']
        self.c = d['c']
        self.f90 = d['f90']
        self.mpif = d['mpif']
        self.f08 = d['f08']
        self.params = [Param(p) for p in d['params']]

    def c_params(self, large=False):
        return [p for p in self.params if p.c(large)]

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        return None

    def c_names(self):
        """Every C entry point: MPI_X and, with a large-count form, MPI_X_c."""
        if not self.c:
            return []
        return [self.name] + ([self.name + '_c'] if self.large_count else [])

    def __repr__(self):
        return 'Procedure(%s)' % self.name


def tidy(decl):
    """pympistandard writes `const void* buf`; C style here is `const void *buf`."""
    return re.sub(r'\s*(\*+)\s*', r' \1', decl.strip()).replace(' *', ' *', 1)


def split_decl(decl):
    """'const MPI_Count counts[]' -> ('const MPI_Count', '', 'counts', '[]');
    'int *flag' -> ('int', '*', 'flag', '')."""
    m = re.match(r'^(.*?)\s*(\**)\s*(\w+)\s*((?:\[\w*\])*)$', decl)
    if not m:
        raise ValueError('cannot read the C declaration ' + decl)
    return m.group(1), m.group(2), m.group(3), m.group(4)


def load(path=DEFAULT_PATH):
    """The procedures by name, in the description's (alphabetical) order."""
    with open(path) as f:
        data = json.load(f)
    procs = {}
    for d in data['procedures']:
        p = Procedure(d)
        procs[p.name] = p
    return procs


def source(path=DEFAULT_PATH):
    with open(path) as f:
        return json.load(f)['source']
