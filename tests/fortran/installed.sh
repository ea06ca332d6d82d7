#!/bin/sh
# installed.sh BUILD_DIR PREFIX TEST_SRC_DIR [EXTRA_FLAGS]
# Installs the build into PREFIX and uses it as a user would: mpifort,
# mpif90 and mpif77 find mpif.h, mpi.mod and liblocusmpifort under the
# prefix (-show says so), a `use mpi` and an mpif.h program and a C
# program using mpi_abi_fort.h build there and run under the installed
# locusrun. EXTRA_FLAGS: a sanitized build's -fsanitize= (its libraries
# need the sanitizer runtime in the program).
set -u
build=$1 prefix=$2 src=$3 extra=${4:-}
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null || fail "cmake --install"
inc=$(cd "$prefix" && pwd -P)
for f in include/mpif.h include/mpi.mod include/mpi_abi_fort.h include/mpi.h \
         bin/mpifort bin/mpif90 bin/mpif77; do
    [ -e "$prefix/$f" ] || fail "$f not installed"
done
ls "$prefix"/lib*/liblocusmpifort.so.0 >/dev/null 2>&1 || fail "liblocusmpifort.so.0 not installed"
for w in mpifort mpif90 mpif77; do
    show=$("$prefix/bin/$w" -show x.f90) || fail "$w -show"
    case "$show" in
    *"-I$inc/include"*"x.f90"*"-llocusmpifort -llocusmpi"*) ;;
    *) fail "$w -show: $show" ;;
    esac
done
work=$prefix/work
mkdir -p "$work" && cd "$work" || fail "no work folder"
# shellcheck disable=SC2086
"$prefix/bin/mpifort" $extra -O2 "$src/ping_pong.f90" -o ping_pong || fail "mpifort ping_pong.f90"
# shellcheck disable=SC2086
"$prefix/bin/mpif77" $extra -w "$src/f77_ring.f" -o f77_ring ||
    fail "mpif77 f77_ring.f"
# shellcheck disable=SC2086
"$prefix/bin/mpicc" $extra -c "$src/handles_c.c" -o handles_c.o || fail "mpicc handles_c.c"
# shellcheck disable=SC2086
"$prefix/bin/mpif90" $extra "$src/handles.f90" handles_c.o -o handles || fail "mpif90 handles.f90"
for p in ping_pong f77_ring handles; do
    out=$("$prefix/bin/locusrun" -n 2 --oversubscribe "./$p" 2>&1)
    rc=$?
    printf '%s\n' "$out" | tail -3
    [ $rc -eq 0 ] || fail "$p exited with $rc"
    case "$out" in *" No Errors"*) ;; *) fail "$p: no ' No Errors'" ;; esac
done
rm -rf "$prefix"
echo " No Errors"
