#!/bin/sh
# Runs an MPI test command line; passes when it exits 0 and printed
# " No Errors" (MPICH's convention).
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then
    echo "FAILED: exit status $rc" >&2
    exit 1
fi
case "$out" in
*" No Errors"*) exit 0 ;;
esac
echo "FAILED: no ' No Errors' line" >&2
exit 1
