#!/bin/sh
# expect_fatal.sh PATTERN CMD... : passes when CMD fails (non-zero exit)
# and its output matches PATTERN (grep -E).
pat=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -eq 0 ]; then
    echo "FAILED: expected a failing exit status" >&2
    exit 1
fi
printf '%s\n' "$out" | grep -Eq "$pat" || { echo "FAILED: output lacks '$pat'" >&2; exit 1; }
exit 0
