// checkpoint-convert: converts a checkpoint between kinds (unbalanced, balanced, consolidated) and
// rank counts. Today it checks its command line and says that conversion is not there yet.

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_main.h"
#include "zerograph/core/status.h"

namespace zerograph {
namespace {

struct CheckpointConvertOptions {
  std::string input;
  std::string output;
  std::string to;
  int64_t nranks = 0;  // 0: keep the input's rank count
  std::string graph;
  bool dry_run = false;
};

void SetUpCheckpointConvert(CLI::App& app, CheckpointConvertOptions& options) {
  cli::SetUpCommon(app);
  app.add_option("IN", options.input, "Checkpoint folder to convert")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("OUT", options.output,
                 "Where to write the result: a checkpoint folder, or model.safetensors for "
                 "--to consolidated")
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
  app.add_flag("--dry-run", options.dry_run, "Say what would be written, write nothing");
}

Status RunCheckpointConvert(const CheckpointConvertOptions&) {
  return UnimplementedError(
      "checkpoint-convert: checkpoint conversion is not implemented yet (it comes with the "
      "checkpoint issues); this build checks the command line and stops");
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
