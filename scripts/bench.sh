#!/usr/bin/env bash
# Builds the benchmarks in Release and writes their results into docs/benchmarks.md.
# Usage: scripts/bench.sh [graph-io-bench options]
#   Without options it runs graph-io-bench twice: the graph structure alone at 100k and 1M nodes,
#   and with the zerograph.* training metadata at 10k-100k nodes (see docs/benchmarks.md for why).
# Run it on an otherwise idle machine: the numbers are wall-clock times.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${ZG_BENCH_BUILD_DIR:-build-release}
# Tests are not needed to bench, and leaving them out keeps the configure step short.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DZG_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target graph-io-bench

if [ $# -gt 0 ]; then
  runs=("$*")
else
  # TODO(training-spec speed): move the second run to 100k and 1M nodes once loading the
  # metadata is linear; today one 1M-node load with it takes most of an hour.
  runs=("--nodes 100000 1000000 --reps 5 --no-training-metadata" "--nodes 10000 30000 100000 --reps 3")
fi

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
memory=$(free -g | awk '/^Mem:/ {print $2 " GiB"}')
compiler=$(c++ --version | head -1)
protobuf=$(dpkg-query -W -f='${Version}' libprotobuf-dev 2>/dev/null || echo unknown)
onnx=$(dpkg-query -W -f='${Version}' libonnx-dev 2>/dev/null || echo unknown)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit with uncommitted changes"

results=$(mktemp)
trap 'rm -f "$results"' EXIT
for run in "${runs[@]}"; do
  command="$build/bench/graph-io-bench $run"
  echo "bench: running $command (progress on stderr)"
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  # shellcheck disable=SC2086  # $run is a list of options
  table=$("$build/bench/graph-io-bench" $run)
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  {
    echo "### \`$command\`"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'); load average before / after: $load_before / $load_after"
    echo "(1-, 5-, 15-minute; above 1 per core, other work was competing and every column is inflated)."
    echo
    echo "$table"
    echo
  } >>"$results"
done

{
  cat <<HEADER
# Benchmarks

Written by \`scripts/bench.sh\`; rerun it to refresh this file (it replaces it whole).

- Machine: $cpu, $(nproc) cores, $memory RAM, $(uname -sr)
- Build: Release (\`$build\`), $compiler; libprotobuf $protobuf, libonnx $onnx; commit $commit

## Graph I/O: the IR against bare protobuf (\`bench/graph_io_bench.cc\`)

DESIGN §3 asks a rewrite of a 1M-node graph to take about as long as parsing and writing it, so
loading and saving through the IR should cost at most **1.3x** a bare protobuf round trip.

The graph is synthetic: an MLP-like chain of forward MatMul/Add/Relu, backward nodes and one AdamW
per parameter (11 nodes and 6 initializers per layer), with names as exported models spell them
(\`/model/layers.7/mlp/fc/MatMul\`, \`model.layers.7.mlp.fc.weight.moment1\`), tiny initializers,
and unless \`--no-training-metadata\` is given the \`zerograph.*\` metadata, whose \`state_binding\`
names every parameter and optimizer state (6 entries per layer).

- bare: read the file, \`ParseFromString\` into a heap \`onnx::ModelProto\`, \`SerializeToString\`, write.
- arena: the same with the message on a \`google::protobuf::Arena\`.
- IR: \`LoadModel\`, \`Verify\` (timed apart), \`SaveModel\`.

HEADER
  cat "$results"
} >docs/benchmarks.md
echo "bench: wrote docs/benchmarks.md"
