#!/bin/sh
# hdf5_abi.sh WORKDIR LOCUSRUN SOURCE
# Parallel HDF5 as Debian ships it (libhdf5-mpich-dev: built for MPICH's
# ABI) on Locus: hdf5_check.c built with h5pcc.mpich writes a dataset
# collectively at 4 ranks and reads it back by another decomposition and
# through HDF5's POSIX driver, on Locus's library through its MPICH layer
# (LOCUS_VERBOSE's line from each rank says so); two-phase collective
# I/O on and off (romio_cb_write, as HDF5 users set it). Skipped (77) without
# h5pcc.mpich.
set -u
work=$1 locusrun=$2 src=$3
command -v h5pcc.mpich >/dev/null || { echo "SKIPPED: no h5pcc.mpich (libhdf5-mpich-dev)"; exit 77; }
prog=$work/hdf5_check
h5pcc.mpich -O1 "$src" -o "$prog" || { echo "FAILED: h5pcc.mpich"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for hints in "" "romio_cb_write=disable"; do
    out=$(LOCUS_VERBOSE=1 "$locusrun" --oversubscribe -n 4 "$prog" "$dir/grid.h5" 64 4096 \
              $hints 2>&1) ||
        { echo "FAILED: exit status $?: $out"; exit 1; }
    printf '%s\n' "$out" | grep -v "^locus: rank"
    n=$(printf '%s\n' "$out" | grep -c "^locus: rank [0-3] of 4")
    [ "$n" = 4 ] || { echo "FAILED: not 4 ranks on Locus's library ($n): $out"; exit 1; }
    case "$out" in *" No Errors"*) ;; *) echo "FAILED: no ' No Errors'"; exit 1 ;; esac
    [ -e "$dir/grid.h5" ] && { echo "FAILED: the file was not removed"; exit 1; }
done
