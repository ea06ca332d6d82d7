#!/usr/bin/env python3
"""derive_mpi_api.py — writes mpi_api.json, Locus's description of the MPI
API, from the MPI Forum's own (the apis.json that PyPI's pympistandard
ships, extracted from the standard's LaTeX sources).

    pip install pympistandard==0.2.0
    python3 src/api/derive_mpi_api.py > src/api/mpi_api.json

Run by hand when the standard moves; the build reads only the committed
mpi_api.json (no network at build time). What it keeps of each procedure:
its C name and return type, whether it has a large-count (`_c`) form,
which languages express it, and for every parameter its name, kind,
direction, length and the C declaration in each form, rendered by
pympistandard's own ISO C expression. The standard's prose (descriptions)
is left out.
"""
import hashlib
import json
import os
import sys

try:
    import pympistandard as std
except ImportError:
    sys.exit('derive_mpi_api.py: needs pympistandard (pip install pympistandard==0.2.0)')


def c_text(decl):
    """An ISO C declaration as pympistandard renders it, in C (its
    variadic parameter is LaTeX's \\ldots)."""
    return None if decl is None else decl.replace('\\ldots', '...')


def param_entry(raw, small, large):
    """raw: the parameter as apis.json has it; small/large: its ISO C
    declarations in the int and the large-count form (None: not in C)."""
    small, large = c_text(small), c_text(large)
    e = {'name': raw['name'], 'kind': raw['kind'], 'dir': raw['param_direction']}
    if raw['length'] is not None:
        e['len'] = raw['length']
    if raw['constant']:
        e['const'] = True
    if raw['optional']:
        e['optional'] = True
    if raw['large_only']:
        e['large_only'] = True
    if raw['root_only']:
        e['root_only'] = True
    if raw['func_type']:
        e['func_type'] = raw['func_type']
    e['c'] = small
    if large is not None and large != small:
        e['c_large'] = large
    return e


def procedure_entry(proc):
    raw = proc._parseset
    attrs = raw['attributes']
    forms = proc.express.all_iso_c
    # forms: MPI_X, PMPI_X, then (with a large-count form) MPI_X_c, PMPI_X_c
    small = {p._parseset['name']: str(p) for p in forms[0].parameters} if attrs['c_expressible'] else {}
    large = {}
    if proc.has_embiggenment():
        large = {p._parseset['name']: str(p) for p in forms[2].parameters}
    # The Fortran ierror argument is no parameter of the C binding.
    params = [param_entry(p, small.get(p['name']), large.get(p['name']))
              for p in raw['parameters'] if 'c_parameter' not in p['suppress']]
    e = {'name': raw['name'], 'return': forms[0].return_type if attrs['c_expressible'] else None,
         'large_count': proc.has_embiggenment(),
         'c': attrs['c_expressible'], 'f90': attrs['f90_expressible'],
         'mpif': attrs['f90_expressible'] and not attrs['not_with_mpif'],
         'f08': attrs['f08_expressible'], 'params': params}
    return e


def main():
    std.use_api_version(1, force_bundled=True)
    data_path = os.path.join(os.path.dirname(std.__file__), 'data', 'apis.json')
    with open(data_path, 'rb') as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    procs = sorted(std.PROCEDURES.values(), key=lambda p: p._parseset['name'])
    out = sys.stdout
    out.write('{"source": %s,\n' % json.dumps(
        'pympistandard %s, data/apis.json sha256 %s' % (std.__version__, digest)))
    out.write(' "procedures": [\n')
    for i, p in enumerate(procs):
        out.write('  ' + json.dumps(procedure_entry(p), sort_keys=False))
        out.write(',\n' if i + 1 < len(procs) else '\n')
    out.write(' ]}\n')


if __name__ == '__main__':
    main()
