#!/bin/sh
# abi_swap.sh WORKDIR LOCUSRUN LOCUS_LIBDIR SOURCE
# A program compiled and linked with MPICH 5's ABI wrapper (mpicc_abi from
# `pip install mpich`) runs under locusrun on Locus's library: the loader
# picks Locus's libmpi_abi.so.1 and MPI_Get_library_version says Locus.
# Skipped (exit 77) only when the MPICH wheel cannot be installed (offline).
set -u
work=$1 locusrun=$2 libdir=$3 src=$4
prefix=$work/mpich-abi
if [ ! -x "$prefix/bin/mpicc_abi" ]; then
    rm -rf "$prefix"
    if ! python3 -m pip install -q --no-deps --prefix "$prefix" "mpich==5.0.*" >/dev/null 2>&1; then
        echo "SKIPPED: cannot install the MPICH 5 wheel (offline?)"
        exit 77
    fi
fi
prog=$work/abi_hello
"$prefix/bin/mpicc_abi" "$src" -o "$prog" || { echo "FAILED: mpicc_abi"; exit 1; }
# Without Locus first on the path the binary uses MPICH's library...
ldd "$prog" | grep -q "$prefix/lib/libmpi_abi.so.1" || { echo "FAILED: not linked to MPICH's libmpi_abi"; ldd "$prog"; exit 1; }
# ...with it, Locus's.
LD_LIBRARY_PATH=$libdir ldd "$prog" | grep -q "$libdir/libmpi_abi.so.1" || {
    echo "FAILED: Locus's libmpi_abi.so.1 not chosen"; LD_LIBRARY_PATH=$libdir ldd "$prog"; exit 1; }
out=$(LD_LIBRARY_PATH=$libdir "$locusrun" --oversubscribe -n 3 "$prog" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "FAILED: exit status $rc"; exit 1; }
case "$out" in *"library: Locus MPI"*) ;; *) echo "FAILED: not Locus's library"; exit 1 ;; esac
case "$out" in *" No Errors"*) exit 0 ;; esac
echo "FAILED: no ' No Errors'"
exit 1
