#!/usr/bin/env python3
"""check_chapters.py — the MPI layer's chapters keep their order.

    check_chapters.py SRC_MPI_DIR CHAPTERS_FILE

SRC_MPI_DIR is src/mpi; CHAPTERS_FILE (written by CMake) has one line per
chapter, bottom first: its name, a tab, and its object files separated by
';'. Checks, and prints every breach:

  - src/mpi holds no .c file at its top level;
  - every chapter folder has its contract header <name>/<name>.h, which
    opens with a comment naming it and saying what the chapter owns;
  - a source includes, of another chapter, only that chapter's contract
    header, and only of a chapter below its own;
  - no object of a chapter refers to a symbol another chapter defines
    unless that chapter lies below (read from the objects with nm, so
    calls through headers' inline functions count where they land).

Since every reference points downwards, the chapters form no circle. Exits
0 when all holds, 1 with the breaches listed.
"""
import os
import re
import shutil
import subprocess
import sys


def read_chapters(path):
    order, objects = [], {}
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                continue
            name, _, objs = line.partition('\t')
            order.append(name)
            objects[name] = [o for o in objs.split(';') if o]
    return order, objects


def nm_tool():
    # gcc-nm reads link-time-optimisation objects too (GIMPLE, no code yet).
    for tool in ('gcc-nm', 'nm'):
        if shutil.which(tool):
            return tool
    sys.exit('check_chapters: neither gcc-nm nor nm found')


def symbols(nm, obj):
    """(defined, undefined) global symbols of one object."""
    out = subprocess.run([nm, obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == 'U':
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in 'TDBRWVCG':
            defined.add(parts[2])
    return defined, undefined


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check_sources(src, order, breaches):
    rank = {c: i for i, c in enumerate(order)}
    top_c = sorted(f for f in os.listdir(src) if f.endswith('.c'))
    for f in top_c:
        breaches.append('src/mpi/%s: a source file at the top level (it belongs in a chapter)' % f)
    for chapter in order:
        folder = os.path.join(src, chapter)
        if not os.path.isdir(folder):
            continue  # a chapter made only in the build tree (generated)
        contract = os.path.join(folder, chapter + '.h')
        if not os.path.exists(contract):
            breaches.append('%s/: no contract header %s.h' % (chapter, chapter))
        else:
            with open(contract) as f:
                head = f.read()
            m = re.match(r'/\*\n \* %s/%s\.h — (.+?)\*/' % (chapter, chapter), head, re.S)
            if not m or m.group(1).count('\n') < 2:
                breaches.append('%s/%s.h: does not open with a comment "%s/%s.h — what it owns" '
                                'of three lines or more' % (chapter, chapter, chapter, chapter))
        for name in sorted(os.listdir(folder)):
            if not name.endswith(('.c', '.h')):
                continue
            with open(os.path.join(folder, name)) as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                other, _, base = inc.rpartition('/')
                if not other:
                    continue  # its own folder, the top level, or another layer's header
                if other not in rank:
                    breaches.append('%s/%s: includes "%s", no chapter\'s' % (chapter, name, inc))
                elif base != other + '.h':
                    breaches.append('%s/%s: includes "%s", not %s\'s contract %s/%s.h'
                                    % (chapter, name, inc, other, other, other))
                elif rank[other] >= rank[chapter]:
                    breaches.append('%s/%s: includes "%s" of a chapter above or beside it'
                                    % (chapter, name, inc))


def check_objects(order, objects, breaches):
    nm = nm_tool()
    rank = {c: i for i, c in enumerate(order)}
    owner = {}
    undefined = []
    for chapter in order:
        for obj in objects[chapter]:
            d, u = symbols(nm, obj)
            for s in d:
                owner[s] = chapter
            undefined.append((chapter, obj, u))
    edges = {}
    for chapter, obj, u in undefined:
        for s in sorted(u):
            o = owner.get(s)
            if o is None or o == chapter:
                continue
            edges.setdefault((chapter, o), []).append(os.path.basename(obj) + ':' + s)
    for (a, b), refs in sorted(edges.items()):
        if rank[b] > rank[a]:
            breaches.append('%s calls up into %s: %s' % (a, b, ', '.join(refs[:6]) +
                                                         (' ...' if len(refs) > 6 else '')))
    return edges


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: check_chapters.py SRC_MPI_DIR CHAPTERS_FILE')
    src, chapters_file = sys.argv[1:]
    order, objects = read_chapters(chapters_file)
    breaches = []
    check_sources(src, order, breaches)
    edges = check_objects(order, objects, breaches)
    uses = {}
    for (a, b) in edges:
        uses.setdefault(a, set()).add(b)
    for c in order:
        print('%-9s uses %s' % (c, ' '.join(x for x in order if x in uses.get(c, ())) or '-'))
    if breaches:
        print('\n%d breach%s of the chapters\' order:' % (len(breaches),
                                                        'es' if len(breaches) > 1 else ''))
        for b in breaches:
            print('  ' + b)
        return 1
    print('\n%d chapters, every reference points downwards: no circle' % len(order))
    return 0


if __name__ == '__main__':
    sys.exit(main())
