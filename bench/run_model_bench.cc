// run-model-bench: the time of one run of an ONNX model on the CPU, as graph-exec --run-once runs
// it, repeated in one process. The model is loaded, planned and fed `input_N.pb` from the input
// folder once (PreparedRun, the same code as --run-once; none of that is timed); then one
// untimed warm-up run and `--reps` timed runs, each Executor::Run, which returns when the compute
// stream is done. Prints the median and the other order statistics, in milliseconds, as one line
// of `key=value` pairs for bench/gpt_vs_onnxruntime.py to read:
//
//   run-model-bench MODEL --input-dir DIR --reps 10 [--output-dir OUT]
//
// Threads: zerograph's CPU kernels run on the compute stream's one thread; MatMul and Gemm call
// OpenBLAS, which uses OPENBLAS_NUM_THREADS threads (all cores when unset). The line says how
// many OpenBLAS has (-1: not OpenBLAS), read after the warm-up run has loaded it.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "runtime/kernels/cpu/blas.h"
#include "zerograph/core/status.h"
#include "zerograph/tools/run_once.h"

namespace zerograph::runtime {
namespace {

struct Options {
  std::string model;
  std::string input_dir;
  std::string output_dir;
  int reps = 10;
};

double Quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(position);
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

Status Bench(const Options& options) {
  const auto load_start = std::chrono::steady_clock::now();
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<PreparedRun> run,
                      PreparedRun::Prepare(options.model, options.input_dir));
  const double prepare_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start)
          .count();
  ZG_RETURN_IF_ERROR(run->Run());  // warm-up: first touch of every buffer, BLAS threads started
  std::vector<double> ms;
  for (int i = 0; i < options.reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    ZG_RETURN_IF_ERROR(run->Run());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  if (!options.output_dir.empty()) ZG_RETURN_IF_ERROR(run->WriteOutputs(options.output_dir));
  ZG_ASSIGN_OR_RETURN(const Blas* blas, Blas::Get());
  std::printf(
      "median_ms=%.3f min_ms=%.3f q1_ms=%.3f q3_ms=%.3f max_ms=%.3f reps=%d prepare_ms=%.1f "
      "blas_threads=%d\n",
      Quantile(ms, 0.5), Quantile(ms, 0), Quantile(ms, 0.25), Quantile(ms, 0.75), Quantile(ms, 1),
      options.reps, prepare_ms, blas->NumThreads());
  return Status::Ok();
}

}  // namespace
}  // namespace zerograph::runtime

int main(int argc, char** argv) {
  CLI::App app("Times repeated runs of an ONNX model as graph-exec --run-once runs it.",
               "run-model-bench");
  zerograph::runtime::Options options;
  app.add_option("model", options.model, "the ONNX model")->required()->check(CLI::ExistingFile);
  app.add_option("--input-dir", options.input_dir, "folder of input_N.pb, as for --run-once")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--output-dir", options.output_dir, "write output_N.pb of the last run here");
  app.add_option("--reps", options.reps, "timed runs after one warm-up")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  const zerograph::Status status = zerograph::runtime::Bench(options);
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
    return status.ExitCode();
  }
  return 0;
}
