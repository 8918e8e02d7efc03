#!/usr/bin/env bash
# Runs every ```sh block of a Markdown page as written, in order, in a scratch folder holding
# `build/` (the build tree), `models/` (the committed models), `tests/` (the committed test data,
# such as ONNX Runtime's reference artifacts) and an empty `out/`, with the programs on PATH and
# mpirun given the flags this machine needs (--oversubscribe; as root, --allow-run-as-root). A block that fails fails the test, naming the block and its first line.
#
# Usage: check_docs_examples.sh PAGE.md BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
page=$1 build=$2 source=$3 work=$4
rm -rf "$work" && mkdir -p "$work/out"
ln -s "$build" "$work/build"
ln -s "$source/models" "$work/models"
ln -s "$source/tests" "$work/tests"
export PATH="$build/apps:$build/models:$PATH"
mpirun_flags="--oversubscribe"
[ "$(id -u)" -eq 0 ] && mpirun_flags+=" --allow-run-as-root"
real_mpirun=$(command -v mpirun)
mkdir -p "$work/.bin"
printf '#!/bin/sh\nexec %s %s "$@"\n' "$real_mpirun" "$mpirun_flags" >"$work/.bin/mpirun"
chmod +x "$work/.bin/mpirun"
export PATH="$work/.bin:$PATH"

blocks=$(awk '/^```sh$/ {n++; inside=1; next} /^```$/ {inside=0; next} inside {print n "\t" $0}' "$page")
[ -n "$blocks" ] || { echo "FAIL: no sh examples in $page"; exit 1; }
count=$(cut -f1 <<<"$blocks" | sort -un | wc -l)
cd "$work"
for n in $(cut -f1 <<<"$blocks" | sort -un); do
  script=$(awk -F'\t' -v n="$n" '$1 == n {sub(/^[^\t]*\t/, ""); print}' <<<"$blocks")
  echo "== example $n of $count: $(head -1 <<<"$script")"
  if ! bash -euo pipefail -c "$script" >"out/example-$n.log" 2>&1; then
    cat "out/example-$n.log"
    echo "FAIL: example $n of $page failed: $(head -1 <<<"$script")"
    exit 1
  fi
done
echo "OK: $count examples of $(basename "$page") ran as written"
