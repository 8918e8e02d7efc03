// checkpoint-convert: converts a checkpoint between kinds (unbalanced, balanced, consolidated) and
// rank counts, streaming a chunk at a time (zerograph/ckpt/checkpoint_convert.h).

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_main.h"
#include "zerograph/ckpt/checkpoint.h"
#include "zerograph/ckpt/checkpoint_convert.h"
#include "zerograph/core/output_path.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"
#include "zerograph/onnx/load_model.h"

namespace zerograph {
namespace {

struct CheckpointConvertOptions {
  std::string input;
  std::string output;
  std::string to;
  int64_t nranks = 0;  // 0: keep the input's rank count
  std::string graph;
  bool dry_run = false;
  bool with_states = false;
  std::string weights = "params";
  int64_t max_file_bytes = int64_t{5} << 30;
};

void SetUpCheckpointConvert(CLI::App& app, CheckpointConvertOptions& options) {
  cli::SetUpCommon(app);
  app.add_option("IN", options.input, "Checkpoint folder to convert")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("OUT", options.output,
                 "Folder to create for the result (it must not exist); --to consolidated writes "
                 "OUT/model.safetensors there")
      ->required();
  app.add_option("--to", options.to, "Kind of checkpoint to write")
      ->required()
      ->check(CLI::IsMember({"balanced", "unbalanced", "consolidated"}));
  app.add_option("--nranks", options.nranks, "Rank count of the result (default: the input's)")
      ->check(cli::AtLeast(1))
      ->type_name("M");
  app.add_option("--graph", options.graph,
                 "Rewritten graph whose layout an unbalanced result must match")
      ->check(CLI::ExistingFile);
  app.add_flag("--dry-run", options.dry_run, "Print the copy plan and byte counts, write nothing");
  app.add_flag("--with-states", options.with_states,
               "--to consolidated: also write the optimizer states");
  app.add_option("--weights", options.weights,
                 "--to consolidated: 'params' (the parameters in their own dtype) or 'master' "
                 "(their fp32 master copies, where --master-weights kept them)")
      ->check(CLI::IsMember({"params", "master"}))
      ->capture_default_str();
  app.add_option("--max-file-bytes", options.max_file_bytes,
                 "--to consolidated: start a new model-0000i-of-0000k.safetensors above this many "
                 "bytes")
      ->check(cli::AtLeast(1))
      ->capture_default_str()
      ->type_name("N");
}

// A one-line progress bar on stderr ("\r"-rewritten): bytes done of total and the rate. Redrawn at
// most every 100 ms, so a fast conversion does not spend its time printing. The rate counts from
// construction, so it includes opening and verifying the input.
class ProgressBar {
 public:
  ProgressBar() : start_(Clock::now()) {}
  // Ends the line when a bar was drawn and not finished (the conversion failed midway), so that
  // the error message starts on a line of its own.
  ~ProgressBar() {
    if (drawn_ && !finished_) std::fputc('\n', stderr);
  }

  void Update(int64_t done, int64_t total) {
    const Clock::time_point now = Clock::now();
    const bool last = done >= total;
    if (!last && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    drawn_ = true;
    finished_ = last;
    constexpr int kWidth = 30;
    const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1;
    const int filled = static_cast<int>(fraction * kWidth);
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
    constexpr double kMiB = 1 << 20;
    std::fprintf(stderr, "\r[%.*s%*s] %3d%%  %.0f / %.0f MiB  %.0f MiB/s", filled,
                 "##############################", kWidth - filled, "",
                 static_cast<int>(fraction * 100), static_cast<double>(done) / kMiB,
                 static_cast<double>(total) / kMiB, rate / kMiB);
    if (last) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool drawn_ = false;
  bool finished_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

Status RunCheckpointConvert(const CheckpointConvertOptions& options) {
  const std::string inputs[] = {options.input};
  ZG_RETURN_IF_ERROR(CheckOutputPath("OUT", options.output, OutputKind::kFolder, inputs));
  ConvertOptions convert;
  ZG_ASSIGN_OR_RETURN(convert.to, ParseCheckpointKind(options.to));
  convert.nranks = options.nranks;
  convert.dry_run = options.dry_run;
  convert.with_states = options.with_states;
  convert.master_weights = options.weights == "master";
  convert.max_file_bytes = options.max_file_bytes;
  convert.out = &std::cout;
  // Only a person watching a terminal wants the bar; logs and tests see nothing.
  ProgressBar bar;
  if (::isatty(STDERR_FILENO)) {
    convert.progress = [&bar](int64_t done, int64_t total) { bar.Update(done, total); };
  }
  StateModel target;
  if (!options.graph.empty()) {
    ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, LoadModel(options.graph));
    StatusOr<StateModel> model = StateModel::FromGraph(*graph);
    if (!model.ok())
      return std::move(model).status().WithContext(StrCat("--graph '", options.graph, "'"));
    target = std::move(*model);
    convert.target = &target;
  }
  return ConvertCheckpoint(options.input, options.output, convert);
}

}  // namespace
}  // namespace zerograph

int main(int argc, char** argv) {
  CLI::App app(
      "Converts a zerograph checkpoint between kinds (unbalanced, balanced, consolidated) and rank "
      "counts, streaming: memory stays bounded by a chunk, not by the model.",
      "checkpoint-convert");
  zerograph::CheckpointConvertOptions options;
  zerograph::SetUpCheckpointConvert(app, options);
  if (auto exit_code = zerograph::cli::ParseCommandLine(app, argc, argv)) return *exit_code;
  return zerograph::cli::RunAndExit([&] { return zerograph::RunCheckpointConvert(options); });
}
