// graph-exec: trains a (rewritten) graph on every rank, saving and loading checkpoints. Today it
// checks its command line and says that the executor is not there yet.

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_main.h"
#include "zerograph/core/status.h"

namespace zerograph {
namespace {

struct GraphExecOptions {
  std::string graph;
  std::string data;
  int64_t steps = 0;
  int64_t batch = 0;  // 0: not given
  double lr = 1e-3;
  std::string lr_schedule = "constant";
  int64_t warmup_steps = 0;
  std::string save_dir;
  int64_t save_every = 0;  // 0: save once, after the last step
  std::string save_format = "unbalanced";
  std::string load_dir;
  std::string trace;
  std::string loss_log;
  std::string device = "cpu";
  // --run-once: run an inference model once on inputs from a folder (kernel checks).
  std::string run_once_model;
  std::string input_dir;
  std::string output_dir;
};

void SetUpGraphExec(CLI::App& app, GraphExecOptions& options) {
  cli::SetUpCommon(app);
  app.add_option("GRAPH", options.graph, "Training graph to run (.onnx, usually rewritten)")
      ->check(CLI::ExistingFile);
  CLI::Option* data =
      app.add_option("--data", options.data, "Training data (safetensors, one tensor per input)")
          ->check(CLI::ExistingFile);
  CLI::Option* steps = app.add_option("--steps", options.steps, "Number of optimizer steps")
                           ->check(cli::AtLeast(1))
                           ->type_name("K");
  app.add_option("--batch", options.batch, "Global batch size, split evenly across ranks")
      ->check(cli::AtLeast(1))
      ->type_name("B");
  app.add_option("--lr", options.lr, "Peak learning rate")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->type_name("F");
  app.add_option("--lr-schedule", options.lr_schedule, "Learning-rate schedule")
      ->check(CLI::IsMember({"constant", "linear-warmup", "cosine"}))
      ->capture_default_str();
  app.add_option("--warmup-steps", options.warmup_steps,
                 "Steps of linear warmup from 0 to --lr (linear-warmup, cosine)")
      ->check(cli::AtLeast(0))
      ->capture_default_str()
      ->type_name("N");
  CLI::Option* save =
      app.add_option("--save", options.save_dir, "Write checkpoints into this folder")
          ->type_name("DIR");
  app.add_option("--save-every", options.save_every, "Save a checkpoint every S steps")
      ->check(cli::AtLeast(1))
      ->needs(save)
      ->type_name("S");
  app.add_option("--save-format", options.save_format, "Checkpoint kind to write")
      ->check(CLI::IsMember({"unbalanced", "balanced"}))
      ->needs(save)
      ->capture_default_str();
  CLI::Option* load = app.add_option("--load", options.load_dir, "Resume from this checkpoint")
                          ->check(CLI::ExistingDirectory);
  CLI::Option* trace =
      app.add_option("--trace", options.trace, "Write a Chrome trace (one lane per stream)")
          ->type_name("FILE");
  CLI::Option* loss_log =
      app.add_option("--loss-log", options.loss_log, "Write each step's loss, with its exact bits")
          ->type_name("FILE");
  app.add_option("--device", options.device, "Where to run")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  CLI::Option* run_once =
      app.add_option("--run-once", options.run_once_model,
                     "Instead of training, run this model once on --input-dir, writing outputs to "
                     "--output-dir")
          ->check(CLI::ExistingFile)
          ->excludes(data, steps, save, load, trace, loss_log);
  CLI::Option* input_dir =
      app.add_option("--input-dir", options.input_dir, "Inputs for --run-once (one file each)")
          ->check(CLI::ExistingDirectory)
          ->needs(run_once);
  CLI::Option* output_dir =
      app.add_option("--output-dir", options.output_dir, "Where --run-once writes its outputs")
          ->needs(run_once)
          ->type_name("DIR");
  run_once->needs(input_dir, output_dir);

  // Which options are required depends on the mode, which CLI11 cannot say by itself.
  app.callback([&options, run_once] {
    if (run_once->count() > 0) {
      if (!options.graph.empty()) throw CLI::ExcludesError("GRAPH", "--run-once");
      return;
    }
    if (options.graph.empty()) throw CLI::RequiredError("GRAPH");
    if (options.data.empty()) throw CLI::RequiredError("--data");
    if (options.steps == 0) throw CLI::RequiredError("--steps");
  });
}

Status RunGraphExec(const GraphExecOptions& options) {
  return UnimplementedError(
      options.run_once_model.empty()
          ? "graph-exec: the executor is not implemented yet; this build checks the command line "
            "and stops (training, checkpoints and traces come with the executor issues)"
          : "graph-exec: the executor is not implemented yet, so --run-once cannot run a model "
            "(it comes with the executor issues)");
}

}  // namespace
}  // namespace zerograph

int main(int argc, char** argv) {
  CLI::App app(
      "Runs a training graph for K steps on every rank (launch N ranks with mpirun -np N), "
      "saving and loading sharded checkpoints.",
      "graph-exec");
  zerograph::GraphExecOptions options;
  zerograph::SetUpGraphExec(app, options);
  if (auto exit_code = zerograph::cli::ParseCommandLine(app, argc, argv)) return *exit_code;
  return zerograph::cli::RunAndExit([&] { return zerograph::RunGraphExec(options); });
}
