#!/bin/sh
# Runs an MPI test command line; passes when it exits 0 and printed
# " No Errors" (MPICH's convention). A shared-memory segment of the
# collectives (/dev/shm/locus-coll-<pid>-<ctx>) that appeared during the
# run and whose creating process is gone was leaked: that fails too
# (segments of other jobs running at the same time belong to live ranks).
before=$(ls /dev/shm 2>/dev/null | grep '^locus-coll-')
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then
    echo "FAILED: exit status $rc" >&2
    exit 1
fi
for f in $(ls /dev/shm 2>/dev/null | grep '^locus-coll-'); do
    case " $(echo $before) " in *" $f "*) continue ;; esac
    pid=$(echo "$f" | cut -d- -f3)
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "FAILED: /dev/shm/$f left behind" >&2
        exit 1
    fi
done
case "$out" in
*" No Errors"*) exit 0 ;;
esac
echo "FAILED: no ' No Errors' line" >&2
exit 1
