#!/bin/sh
# Runs an MPI test command line; passes when it exits 0 and printed
# " No Errors" (MPICH's convention). A shared-memory segment of the
# collectives (/dev/shm/locus.<jobid>.coll.<ctx>.<pid>) that appeared during the
# run and whose creating process is gone was leaked: that fails too
# (segments of other jobs running at the same time belong to live ranks).
# Under locusrun the proxy's sweep of /dev/shm/locus.<jobid>.* hides such a
# leak; coll_shm_name checks during the run that segments are unlinked.
before=$(ls /dev/shm 2>/dev/null | grep '^locus\..*\.coll\.[0-9]*\.[0-9]*$')
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then
    echo "FAILED: exit status $rc" >&2
    exit 1
fi
for f in $(ls /dev/shm 2>/dev/null | grep '^locus\..*\.coll\.[0-9]*\.[0-9]*$'); do
    case " $(echo $before) " in *" $f "*) continue ;; esac
    pid=${f##*.}
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
