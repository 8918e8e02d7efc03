#!/usr/bin/env bash
# expect_failure.sh CODE REGEX ABSENT COMMAND...: runs COMMAND and passes when it exits with CODE,
# its stderr matches REGEX (grep -E), and afterwards neither ABSENT nor a temporary file of it
# exists. CTest's PASS_REGULAR_EXPRESSION alone would ignore the exit code.
set -u
if [ $# -lt 4 ]; then
  echo "usage: expect_failure.sh CODE REGEX ABSENT COMMAND..." >&2
  exit 2
fi
code=$1 regex=$2 absent=$3
shift 3
rm -f -- "$absent"  # a leftover from an older build must not decide this run
stderr_file=$(mktemp)
trap 'rm -f -- "$stderr_file"' EXIT
"$@" 2>"$stderr_file"
actual=$?
cat -- "$stderr_file"
fail=0
if [ "$actual" -ne "$code" ]; then
  echo "FAIL: exit code $actual, expected $code"
  fail=1
fi
if ! grep -Eq -- "$regex" "$stderr_file"; then
  echo "FAIL: stderr does not match: $regex"
  fail=1
fi
if [ -e "$absent" ]; then
  echo "FAIL: $absent exists"
  fail=1
fi
for leftover in "$(dirname -- "$absent")/.$(basename -- "$absent")".*tmp-*; do
  if [ -e "$leftover" ]; then
    echo "FAIL: temporary file $leftover left behind"
    fail=1
  fi
done
exit "$fail"
