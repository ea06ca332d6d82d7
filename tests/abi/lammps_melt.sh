#!/bin/sh
# lammps_melt.sh WORKDIR LOCUSRUN
# Debian's LAMMPS (lmp, built against Open MPI) runs its melt example on
# Locus through the Open MPI-ABI layer with no option, at 1, 2 and 4 ranks,
# and its thermo table matches the one Open MPI's own mpirun gives at the
# same rank count: the same numbers to the last printed digit (or within
# 1e-9 relative), since both decompose the box the same way. `info
# communication` at the end names the library that ran. Skipped (77) only
# without lmp or the melt example (packages lammps, lammps-examples).
set -u
work=$1 locusrun=$2
melt=/usr/share/lammps/examples/melt/in.melt
command -v lmp >/dev/null || { echo "SKIPPED: no lmp (Debian package lammps)"; exit 77; }
[ -r "$melt" ] || { echo "SKIPPED: no $melt (Debian package lammps-examples)"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }
mkdir -p "$work" || fail "cannot create $work"
input=$work/lammps_melt.in
{ cat "$melt"; printf '\ninfo communication\n'; } >"$input" || fail "cannot write $input"
# Open MPI's own launcher: mpirun.openmpi, Debian's unambiguous name (plain
# mpirun may be MPICH's through the alternatives).
ompirun=$(command -v mpirun.openmpi || true)
[ -n "$ompirun" ] || echo "note: no mpirun.openmpi: Locus's runs are not compared with Open MPI's"

# thermo FILE: the thermo table, from the `Step Temp E_pair ...` header to
# the line before `Loop time`.
thermo() {
    awk '/^ *Step +Temp +E_pair/ { on = 1 } /^Loop time/ { on = 0 } on' "$1"
}

# same A B: equal tables, or numbers within 1e-9 relative where only the
# last digits differ; prints the first line that differs otherwise.
same() {
    awk -v rel=1e-9 '
        NR == FNR { a[FNR] = $0; na = FNR; next }
        { b[FNR] = $0; nb = FNR }
        function near(x, y,   d, m) {
            if (x == y) return 1
            if (x !~ /^[-+0-9.eE]+$/ || y !~ /^[-+0-9.eE]+$/) return 0
            d = x - y; if (d < 0) d = -d
            m = (x < 0 ? -x : x); if ((y < 0 ? -y : y) > m) m = (y < 0 ? -y : y)
            return d <= rel * m
        }
        END {
            n = (na > nb ? na : nb)
            if (na == 0) { print "no thermo table"; exit 1 }
            for (i = 1; i <= n; i++) {
                if (a[i] == b[i]) continue
                nx = split(a[i], x); ny = split(b[i], y)
                ok = (nx == ny)
                for (k = 1; ok && k <= nx; k++) ok = near(x[k], y[k])
                if (!ok) {
                    printf "line %d differs:\n  Locus:    %s\n  Open MPI: %s\n", i, a[i], b[i]
                    exit 1
                }
            }
        }' "$1" "$2"
}

for np in 1 2 4; do
    over=""
    [ "$np" -gt 2 ] && over=--oversubscribe
    loc=$work/lammps_melt_locus_np$np.out
    # shellcheck disable=SC2086
    timeout 120 "$locusrun" $over -np $np lmp -in "$input" -log none >"$loc" 2>&1
    rc=$?
    [ $rc = 0 ] || { tail -n 20 "$loc"; fail "np $np: locusrun exit status $rc"; }
    grep -q "MPI version: Locus MPI.*through its Open MPI ABI layer" "$loc" ||
        { grep "MPI version" "$loc"; fail "np $np: not Locus's library through the Open MPI layer"; }
    lines=$(thermo "$loc" | wc -l)
    [ "$lines" -gt 1 ] || fail "np $np: no thermo table in $loc"
    if [ -z "$ompirun" ]; then
        echo "np $np: Locus (Open MPI ABI layer), exit 0, $((lines - 1)) thermo rows (no Open MPI to compare)"
        continue
    fi
    own=$work/lammps_melt_openmpi_np$np.out
    timeout 120 "$ompirun" --allow-run-as-root --oversubscribe -np $np lmp -in "$input" \
        -log none >"$own" 2>&1
    rc=$?
    [ $rc = 0 ] || { tail -n 20 "$own"; fail "np $np: Open MPI's mpirun exit status $rc"; }
    grep -q "MPI version: Open MPI" "$own" || fail "np $np: Open MPI's run did not run Open MPI"
    thermo "$loc" >"$loc.thermo"
    thermo "$own" >"$own.thermo"
    same "$loc.thermo" "$own.thermo" || fail "np $np: thermo differs from Open MPI's"
    echo "np $np: Locus (Open MPI ABI layer), exit 0, $((lines - 1)) thermo rows equal to Open MPI's"
done
echo " No Errors"
