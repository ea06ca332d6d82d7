#!/bin/sh
# run_mpi_test.sh [--expect-fail REGEX | --expect-output REGEX] CMD... :
# runs an MPI test command.
#
# Passes when CMD exits 0 and printed " No Errors" (MPICH's convention)
# (and, with --expect-output, a line matching REGEX), or with --expect-fail
# when CMD exits non-zero and its output matches REGEX (grep -E). Either way it fails when a shared-memory segment of Locus
# (/dev/shm/locus.*.<pid>) appeared during the run and the process that
# created it is gone: a leak (segments of other jobs running at the same
# time belong to live processes). Exit 77 from CMD is passed on (a skip).
expect=""
want=""
if [ "${1:-}" = "--expect-fail" ]; then
    expect=$2
    shift 2
elif [ "${1:-}" = "--expect-output" ]; then
    want=$2
    shift 2
fi
segs() { ls /dev/shm 2>/dev/null | grep '^locus\..*\.[0-9][0-9]*$'; }
before=$(segs)
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 77 ] && exit 77
for f in $(segs); do
    case " $(echo $before) " in *" $f "*) continue ;; esac
    pid=${f##*.}
    kill -0 "$pid" 2>/dev/null && continue
    # Listed while its owner (another job's, under ctest -j) was unlinking
    # it and exiting, or removed by that job's launcher a moment later:
    # only a segment still there a second later is a leak.
    [ -e "/dev/shm/$f" ] && sleep 1
    if [ -e "/dev/shm/$f" ]; then
        echo "FAILED: /dev/shm/$f left behind" >&2
        exit 1
    fi
done
if [ -n "$expect" ]; then
    if [ $rc -eq 0 ]; then
        echo "FAILED: expected a failing exit status" >&2
        exit 1
    fi
    printf '%s\n' "$out" | grep -Eq "$expect" && exit 0
    echo "FAILED: output lacks '$expect'" >&2
    exit 1
fi
if [ $rc -ne 0 ]; then
    echo "FAILED: exit status $rc" >&2
    exit 1
fi
if [ -n "$want" ] && ! printf '%s\n' "$out" | grep -Eq "$want"; then
    echo "FAILED: output lacks '$want'" >&2
    exit 1
fi
case "$out" in
*" No Errors"*) exit 0 ;;
esac
echo "FAILED: no ' No Errors' line" >&2
exit 1
