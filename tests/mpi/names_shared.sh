#!/bin/sh
# Two launches, one name service: `locusrun --name-server` in the
# background, its LOCUS_NAME_SERVER given to a publisher's launch and to a
# client's (tests/mpi/names.c publish/lookup); the server ends on SIGTERM
# and nothing of it is left.
#   names_shared.sh LOCUSRUN PROGRAM
set -u
locusrun=$1 prog=$2
tmp=$(mktemp -d)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAILED: $*"; exit 1; }
"$locusrun" --name-server > "$tmp/ns" &
server=$!
for i in $(seq 50); do
    [ -s "$tmp/ns" ] && break
    sleep 0.1
done
line=$(cat "$tmp/ns")
case "$line" in LOCUS_NAME_SERVER=*@*) ;; *) fail "--name-server printed '$line'";; esac
export "$line"
name="locus-shared-$$"
timeout 60 "$locusrun" -n 1 "$prog" publish "$name" > "$tmp/pub" 2>&1 &
pub=$!
out=$(timeout 60 "$locusrun" -n 1 "$prog" lookup "$name" 2>&1) || fail "lookup's launch: $out"
wait $pub || fail "publisher's launch: $(cat "$tmp/pub")"
case "$out" in *" No Errors"*) ;; *) fail "lookup: $out";; esac
grep -q " No Errors" "$tmp/pub" || fail "publisher: $(cat "$tmp/pub")"
echo "a name published in one launch was found from another"
kill -TERM "$server"
wait "$server"; rc=$?
server=
[ "$rc" = 0 ] || fail "--name-server exited $rc on SIGTERM"
out=$("$locusrun" --name-server extra 2>&1) && fail "--name-server extra accepted"
case "$out" in *"--name-server takes no other argument"*) ;; *) fail "bad usage: $out";; esac
echo " No Errors"
