#!/bin/sh
# legacy_abi.sh WORKDIR LOCUSRUN SOURCE
# Programs built against MPICH's ABI (mpicc.mpich, Debian's NPmpich2) run
# under locusrun on Locus's library, through its MPICH-ABI layer
# (libmpich.so.12 beside liblocusmpi), with no option; --no-abi-swap keeps
# MPICH's own library. Skipped (77) only without MPICH's compiler wrapper.
set -u
work=$1 locusrun=$2 src=$3
command -v mpicc.mpich >/dev/null || { echo "SKIPPED: no mpicc.mpich (libmpich-dev)"; exit 77; }
prog=$work/legacy_check_mpich
mpicc.mpich -O1 "$src" -o "$prog" || { echo "FAILED: mpicc.mpich"; exit 1; }
fail() { echo "FAILED: $*"; exit 1; }
out=$("$locusrun" --oversubscribe -n 3 "$prog" 2>&1) || fail "exit status $?: $out"
printf '%s\n' "$out"
case "$out" in *"library: Locus MPI"*"through its MPICH ABI layer"*) ;; *) fail "not Locus's library";; esac
case "$out" in *" No Errors"*) ;; *) fail "no ' No Errors'";; esac
out=$("$locusrun" --no-abi-swap --oversubscribe -n 2 "$prog" 2>&1) || fail "--no-abi-swap: $out"
case "$out" in *"library: MPICH"*" No Errors"*) ;; *) fail "--no-abi-swap did not keep MPICH: $out";; esac
echo "--no-abi-swap: MPICH's own library"
if command -v NPmpich2 >/dev/null; then
    np=$work/np.out
    # Its integrity check (-i: every byte compared), sizes 1 B to 1 MiB, both
    # with blocking and with preposted receives.
    for mode in "" "-a"; do
        out=$("$locusrun" -n 2 NPmpich2 $mode -i -n 20 -u 1048576 -o "$np" 2>&1) ||
            fail "NPmpich2 $mode: $out"
        case "$out" in *"Integrity check passed"*) ;; *) fail "NPmpich2 -i $mode: $out";; esac
        [ -s "$np" ] || fail "NPmpich2 wrote no results"
    done
    echo "NPmpich2 on Locus: integrity checks passed, 1 B to 1 MiB"
    # That it was the layer: it names Locus's library when that is missing.
    out=$(LOCUS_ABI_LIBMPI=/nonexistent/liblocusmpi.so.0 "$locusrun" -n 1 NPmpich2 -u 8 -o "$np" 2>&1)
    case "$out" in *"locus (MPICH ABI): cannot load Locus's library"*) ;;
        *) fail "NPmpich2 did not load the MPICH-ABI layer: $out";; esac
else
    echo "NPmpich2 not installed (netpipe-mpich2): not run"
fi
exit 0
