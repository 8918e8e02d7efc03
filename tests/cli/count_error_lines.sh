#!/usr/bin/env bash
# Runs a command, prints its output and then "N error line(s)" (lines starting with "error:"), and
# exits with the command's exit code. For checking that several ranks report an error once.
out=$("$@" 2>&1)
code=$?
printf '%s\n' "$out"
echo "$(grep -c '^error:' <<<"$out") error line(s)"
exit "$code"
