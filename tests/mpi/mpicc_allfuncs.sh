#!/bin/sh
# mpicc_allfuncs.sh MPICC SOURCE OUT LAUNCHER... : compiles SOURCE with the
# build-tree mpicc (checking -show first), then runs it on 1 and 4 ranks.
set -u
mpicc=$1 src=$2 out=$3
shift 3
show=$("$mpicc" -show "$src" -o "$out") || { echo "FAILED: mpicc -show"; exit 1; }
case "$show" in
*-llocusmpi*) ;;
*) echo "FAILED: mpicc -show lacks -llocusmpi: $show"; exit 1 ;;
esac
"$mpicc" -Wall -Wextra -Werror -I"$(dirname "$src")/.." "$src" -o "$out" || { echo "FAILED: mpicc"; exit 1; }
"$out" | grep -q " No Errors" || { echo "FAILED: singleton run"; exit 1; }
exec sh "$(dirname "$0")/../run_mpi_test.sh" "$@" 4 "$out"
