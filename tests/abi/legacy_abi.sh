#!/bin/sh
# legacy_abi.sh WORKDIR LOCUSRUN SOURCE mpich|openmpi
# Programs built against a legacy MPI's ABI (its compiler wrapper, and
# Debian's NetPIPE for it) run under locusrun on Locus's library, through
# its layer for that ABI (libmpich.so.12 or libmpi.so.40 beside
# liblocusmpi), with no option; --no-abi-swap keeps the MPI's own library
# (Open MPI's over locusrun's PMIx, served unasked, since it would start
# every rank as a singleton without). Skipped (77) only without the MPI's
# compiler wrapper.
set -u
work=$1 locusrun=$2 src=$3 abi=$4
case $abi in
    mpich) cc=mpicc.mpich np=NPmpich2 own="MPICH" layer="MPICH" pm="" ;;
    openmpi) cc=mpicc.openmpi np=NPopenmpi own="Open MPI" layer="Open MPI" pm="" ;;
    *) echo "FAILED: unknown ABI $abi"; exit 1 ;;
esac
command -v $cc >/dev/null || { echo "SKIPPED: no $cc"; exit 77; }
prog=$work/legacy_check_$abi
$cc -O1 "$src" -o "$prog" || { echo "FAILED: $cc"; exit 1; }
fail() { echo "FAILED: $*"; exit 1; }
out=$("$locusrun" --oversubscribe -n 3 "$prog" 2>&1) || fail "exit status $?: $out"
printf '%s\n' "$out"
case "$out" in *"library: Locus MPI"*"through its $layer ABI layer"*) ;;
    *) fail "not Locus's library";; esac
case "$out" in *" No Errors"*) ;; *) fail "no ' No Errors'";; esac
# shellcheck disable=SC2086
out=$("$locusrun" --no-abi-swap $pm --oversubscribe -n 2 "$prog" 2>&1) ||
    fail "--no-abi-swap: $out"
case "$out" in *"library: $own"*" No Errors"*) ;;
    *) fail "--no-abi-swap did not keep $own: $out";; esac
echo "--no-abi-swap: $own's own library"
if [ "$abi" = openmpi ]; then
    out=$("$locusrun" --no-abi-swap --mpi pmi1 -n 2 "$prog" 2>&1) && fail "--mpi pmi1 accepted"
    case "$out" in *"locusrun: --mpi: "*"built with Open MPI"*"give --mpi pmix"*) ;;
        *) fail "--no-abi-swap --mpi pmi1: $out";; esac
    echo "--no-abi-swap --mpi pmi1: refused in one line"
fi
if command -v $np >/dev/null; then
    res=$work/np_$abi.out
    # Its integrity check (-i: every byte compared), sizes 1 B to 1 MiB, both
    # with blocking and with preposted receives.
    for mode in "" "-a"; do
        out=$("$locusrun" -n 2 $np $mode -i -n 20 -u 1048576 -o "$res" 2>&1) ||
            fail "$np $mode: $out"
        case "$out" in *"Integrity check passed"*) ;; *) fail "$np -i $mode: $out";; esac
    done
    echo "$np on Locus: integrity checks passed, 1 B to 1 MiB"
    # That it was the layer: it names Locus's library when that is missing.
    out=$(LOCUS_ABI_LIBMPI=/nonexistent/liblocusmpi.so.0 "$locusrun" -n 1 $np -u 8 -o "$res" 2>&1)
    case "$out" in *"locus ($layer ABI): cannot load Locus's library"*) ;;
        *) fail "$np did not load the $layer-ABI layer: $out";; esac
else
    echo "$np not installed: not run"
fi
exit 0
