#!/bin/sh
# legacy_fortran.sh WORKDIR LOCUSRUN SOURCE mpich|openmpi
# A Fortran program built with a legacy MPI's mpif90 (SOURCE, once with
# `use mpi` and once with mpif.h) runs under locusrun on Locus's library,
# through the Fortran half of that ABI's layer (libmpichfort.so.12 or
# libmpi_mpifh.so.40, src/abi/fortran) over its C half, with no option;
# --no-abi-swap keeps the MPI's own libraries. Skipped (77) only without
# the MPI's mpif90.
set -u
work=$1 locusrun=$2 src=$3 abi=$4
case $abi in
    mpich) fc=mpif90.mpich own="MPICH" layer="MPICH" ;;
    openmpi) fc=mpif90.openmpi own="Open MPI" layer="Open MPI" ;;
    *) echo "FAILED: unknown ABI $abi"; exit 1 ;;
esac
command -v $fc >/dev/null || { echo "SKIPPED: no $fc"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }
mkdir -p "$work" || fail "cannot create $work"
for style in use_mpi mpif_h; do
    prog=$work/legacy_fortran_${abi}_$style
    flags=""
    [ $style = mpif_h ] && flags=-DMPIF_H
    # shellcheck disable=SC2086
    $fc -O1 $flags "$src" -o "$prog" || fail "$fc $flags"
    out=$("$locusrun" --oversubscribe -n 2 "$prog" 2>&1) || fail "$style: exit status $?: $out"
    printf '%s\n' "$out"
    case "$out" in *"library: Locus MPI"*"through its $layer ABI layer"*) ;;
        *) fail "$style: not Locus's library";; esac
    case "$out" in *" No Errors"*) ;; *) fail "$style: no ' No Errors'";; esac
    out=$("$locusrun" --no-abi-swap --oversubscribe -n 2 "$prog" 2>&1) ||
        fail "$style --no-abi-swap: $out"
    case "$out" in *"library: $own"*" No Errors"*) ;;
        *) fail "$style: --no-abi-swap did not keep $own: $out";; esac
    echo "$style --no-abi-swap: $own's own library, No Errors"
done
exit 0
