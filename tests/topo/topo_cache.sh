#!/bin/sh
# LOCUS_TOPO_CACHE: the first load of this machine's topology writes one
# entry, later loads read it and describe the machine exactly as discovery
# does; other allowed CPUs make another entry; a damaged entry is rewritten;
# a directory others may write to is not used.
# usage: topo_cache.sh LOCUS_BINARY
set -u
locus=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
entries() { ls "$dir/c" 2>/dev/null | grep -c '^topo-.*\.xml$'; }

LOCUS_TOPO_CACHE=off "$locus" topo --json > "$dir/live.json" || fail "locus topo (no cache)"
[ -e "$dir/c" ] && fail "LOCUS_TOPO_CACHE=off made a directory"
LOCUS_TOPO_CACHE=$dir/c "$locus" topo --json > "$dir/first.json" || fail "first load"
[ "$(entries)" = 1 ] || fail "first load left $(entries) entries: $(ls "$dir/c")"
[ "$(stat -c %a "$dir/c")" = 700 ] || fail "cache directory mode $(stat -c %a "$dir/c")"
LOCUS_TOPO_CACHE=$dir/c "$locus" topo --json > "$dir/second.json" || fail "cached load"
cmp -s "$dir/live.json" "$dir/first.json" || fail "first load differs from discovery"
cmp -s "$dir/live.json" "$dir/second.json" || fail "cached load differs from discovery"
[ "$(entries)" = 1 ] || fail "the cached load wrote another entry"

# A damaged entry: discovery again, the same answer, the entry rewritten.
f=$(ls "$dir"/c/topo-*.xml)
echo "not xml" > "$f"
LOCUS_TOPO_CACHE=$dir/c "$locus" topo --json > "$dir/third.json" || fail "load over a damaged entry"
cmp -s "$dir/live.json" "$dir/third.json" || fail "load over a damaged entry differs"
grep -q "<topology" "$f" || fail "the damaged entry was not rewritten"

# Other allowed CPUs (a taskset, as a job's cgroup would): another entry.
if command -v taskset > /dev/null && [ "$(nproc)" -gt 1 ]; then
    LOCUS_TOPO_CACHE=$dir/c taskset -c 0 "$locus" topo --json > /dev/null || fail "taskset load"
    [ "$(entries)" = 2 ] || fail "a narrower CPU set shares the entry ($(entries) entries)"
fi

# hwloc told to do something else: no cache.
HWLOC_COMPONENTS=-linux,linux LOCUS_TOPO_CACHE=$dir/h "$locus" topo --json > /dev/null 2>&1
[ -n "$(ls "$dir/h" 2>/dev/null)" ] && fail "an HWLOC_* variable did not turn the cache off"

# A directory others may write to is not trusted.
mkdir -m 777 "$dir/open" && chmod 777 "$dir/open"
LOCUS_TOPO_CACHE=$dir/open "$locus" topo --json > "$dir/open.json" || fail "load with an open directory"
[ -z "$(ls "$dir/open")" ] || fail "wrote into a world-writable directory"
cmp -s "$dir/live.json" "$dir/open.json" || fail "load with an open directory differs"
echo "topo cache: OK"
