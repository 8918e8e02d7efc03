#!/usr/bin/env bash
# Runs a command and checks its exit code and output, which CTest's PASS_REGULAR_EXPRESSION cannot
# do together (that property ignores the exit code).
#
# Usage: expect_exit.sh CODE [-e REGEX]... [-n REGEX]... [--absent PATH]... -- COMMAND [ARGS...]
#   CODE          the exit code COMMAND must return
#   -e REGEX      an extended regex that must match a line of stdout or stderr (repeatable)
#   -n REGEX      an extended regex that must match no line (repeatable)
#   --absent PATH a file that must not exist afterwards (removed before the run)
# Exits 0 when every check holds, else 1 after saying which failed.
set -uo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 CODE [-e REGEX]... [-n REGEX]... [--absent PATH]... -- COMMAND [ARGS...]" >&2
  exit 1
fi
expected=$1
shift
must=()
must_not=()
absent=()
while [ $# -gt 0 ]; do
  case $1 in
    -e) must+=("$2"); shift 2 ;;
    -n) must_not+=("$2"); shift 2 ;;
    --absent) absent+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "expect_exit.sh: unknown argument '$1'" >&2; exit 1 ;;
  esac
done
[ $# -gt 0 ] || { echo "expect_exit.sh: no command given" >&2; exit 1; }

for path in ${absent[@]+"${absent[@]}"}; do rm -f -- "$path"; done

output_file=$(mktemp)
trap 'rm -f "$output_file"' EXIT
"$@" >"$output_file" 2>&1
actual=$?

echo "\$ $*"
cat "$output_file"
echo "[exit code $actual]"

failed=0
if [ "$actual" -ne "$expected" ]; then
  echo "FAIL: exit code $actual, expected $expected"
  failed=1
fi
for regex in ${must[@]+"${must[@]}"}; do
  if ! grep -Eq -- "$regex" "$output_file"; then
    echo "FAIL: no line of the output matches /$regex/"
    failed=1
  fi
done
for regex in ${must_not[@]+"${must_not[@]}"}; do
  if grep -Eq -- "$regex" "$output_file"; then
    echo "FAIL: a line of the output matches /$regex/, which it must not"
    failed=1
  fi
done
for path in ${absent[@]+"${absent[@]}"}; do
  if [ -e "$path" ]; then
    echo "FAIL: '$path' exists, which must not after this command"
    failed=1
  fi
done
exit $failed
