#!/bin/sh
# mpifort_build.sh MPIFORT SOURCE OUT LAUNCHER... : builds SOURCE with the
# build-tree mpifort and no flags of the test's own (what a user types, so
# that what the wrapper adds is what is tested), then runs OUT under
# LAUNCHER through tests/run_mpi_test.sh. A build that fails is the test's
# failure, not the build tree's.
set -u
mpifort=$1 src=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
dir=$(dirname "$out")
mkdir -p "$dir" && cd "$dir" || { echo "FAILED: no folder $dir"; exit 1; }
"$mpifort" "$src" -o "$out" || { echo "FAILED: mpifort $src"; exit 1; }
exec sh "$here/../run_mpi_test.sh" "$@" "$out"
