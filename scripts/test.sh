#!/usr/bin/env bash
# Set up, configure, build and run every test.
# Usage: scripts/test.sh [--sanitize address,undefined | --sanitize thread] [extra ctest args]
#
# With --sanitize the build goes to its own folder (build-asan, build-tsan), with GCC's sanitizers,
# without CUDA and the benchmarks (nothing there runs without a GPU), and ctest runs the subset
# docs/reliability.md explains unless ctest arguments are given.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=
if [ "${1:-}" = "--sanitize" ]; then
  sanitize=${2:?--sanitize needs a list: address,undefined or thread}
  shift 2
fi
scripts/setup.sh
jobs=${ZG_JOBS:-$(nproc)}

# Debug information is line tables only (-g1): backtraces keep their functions, files and lines,
# and the build takes a third less (the full -g's types and variables are most of the objects).
if [ -z "$sanitize" ]; then
  build=${ZG_BUILD_DIR:-build}
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=${ZG_BUILD_TYPE:-RelWithDebInfo} \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" >/dev/null
  cmake --build "$build" -j "$jobs"
  ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"
  exit 0
fi

supp=$PWD/scripts/sanitizers
case $sanitize in
address,undefined | undefined,address | address)
  build=${ZG_BUILD_DIR:-build-asan}
  flags="-fsanitize=$sanitize -fno-omit-frame-pointer -fno-sanitize-recover=all"
  # No LeakSanitizer: every process that loads Open MPI reports its allocations as leaks from
  # "<unknown module>" frames, which no suppression can name (keeping its components loaded with
  # OMPI_MCA/PMIX_MCA_mca_base_component_disable_dlclose did not help). The fuzz targets check
  # leaks in every loader (libFuzzer's -detect_leaks), scripts/sanitizers/lsan.supp is kept for a
  # run by hand (ASAN_OPTIONS=detect_leaks=1).
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:detect_stack_use_after_return=0}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$supp/lsan.supp:print_suppressions=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  # The unit, CLI, checkpoint, ORT-import and multi-rank training tests. Left out: the ONNX node
  # conformance suite (label conformance: 195 s under ASan here, kernels the unit tests run too)
  # and the layering check (no code of ours runs).
  default_args=(-LE conformance -E '^layering\.')
  ;;
thread)
  build=${ZG_BUILD_DIR:-build-tsan}
  flags="-fsanitize=thread -fno-omit-frame-pointer"
  export TSAN_OPTIONS=${TSAN_OPTIONS:-suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1}
  # The code that runs threads, single-process: the thread pool and atomic files (core), Verify's
  # chunks and the bulk name searches (ir), role inference's walk back from the optimizers
  # (models), the parallel model parser and Verify beside role inference and saving (onnx), the
  # sharding pass's candidate sweep and gradient chain walks (passes), the CPU streams, events
  # and executor (runtime), the checkpoint reader and writer (ckpt). Run as programs, not
  # through ctest: only these are built. Left out: everything under mpirun, whose Open MPI
  # progress threads TSan cannot see into.
  tsan_tests=(core/core_test ir/ir_test models/models_test onnx/parallel_model_io_test
    onnx/load_model_test onnx/save_model_test passes/passes_test runtime/runtime_test ckpt/ckpt_test)
  ;;
*)
  echo "test.sh: --sanitize takes address,undefined or thread, not '$sanitize'" >&2
  exit 1
  ;;
esac
# GCC's -Wmaybe-uninitialized misfires on the sanitizers' instrumented code (std::variant copies).
flags="$flags -Wno-maybe-uninitialized"
# Build type Sanitize: -O1, as the sanitizers' documentation advises, and line tables. At -O2 -g
# (and the kernels' -O3) GCC took 2-3x as long per file with ASan + UBSan, half of CI's time.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=${ZG_BUILD_TYPE:-Sanitize} \
  "-DCMAKE_CXX_FLAGS_SANITIZE=-O1 -g1 -DNDEBUG" -DZG_WITH_CUDA=OFF -DZG_BUILD_BENCH=OFF \
  "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_EXE_LINKER_FLAGS=$flags" >/dev/null
if [ "$sanitize" = thread ]; then
  cmake --build "$build" -j "$jobs" --target "${tsan_tests[@]##*/}"
  failed=0
  for t in "${tsan_tests[@]}"; do
    echo "== $t"
    (cd "$build/tests/${t%/*}" && "./${t##*/}" --gtest_brief=1 "$@") || failed=1
  done
  exit $failed
fi
cmake --build "$build" -j "$jobs"
if [ $# -eq 0 ]; then
  set -- "${default_args[@]}"
fi
ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"
