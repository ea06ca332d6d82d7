#!/usr/bin/env python3
"""runpath_check.py BUILD_DIR: no ELF file Locus builds (bin/, lib/,
lib/abi/) has an empty or relative entry in its RUNPATH or RPATH. The
loader reads an empty entry as the current directory: every library of
every process would be looked for first wherever the job was started, and
a library planted there would be loaded (CMake pads the build-tree
RUNPATH of installed targets that way unless told otherwise)."""
import os
import subprocess
import sys


def elf_files(build):
    for sub in ("bin", "lib", os.path.join("lib", "abi")):
        d = os.path.join(build, sub)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else ():
            p = os.path.join(d, name)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        yield p


def search_paths(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                         timeout=60).stdout
    for line in out.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            yield line[line.index("[") + 1:line.rindex("]")]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    bad, seen, with_path = [], 0, 0
    for path in elf_files(sys.argv[1]):
        seen += 1
        for value in search_paths(path):
            with_path += 1
            for entry in value.split(":"):
                if not entry or not (entry.startswith("/") or entry.startswith("$ORIGIN")):
                    bad.append("%s: %r in %r" % (path, entry, value))
    print("%d ELF files, %d with a search path" % (seen, with_path))
    if seen == 0 or with_path == 0:
        print("FAILED: no ELF file with a search path under %s: nothing was checked"
              % sys.argv[1])
        return 1
    if bad:
        print("FAILED: empty or relative search path entries:\n  " + "\n  ".join(bad))
        return 1
    print("No Errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
