// generate-models: writes the training graphs of this folder and their datasets. The small ones are
// committed (a test checks that regenerating them gives the same bytes); mlp_wide is too large to
// commit and is generated at build or bench time.

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_main.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/models/mlp.h"
#include "zerograph/onnx/save_model.h"

namespace zerograph {
namespace {

struct GenerateOptions {
  std::string model = "small";
  std::string out_dir = ".";
  int64_t batch = 0;    // 0: the model's own
  int64_t samples = 0;  // 0: the model's own
  bool no_data = false;
};

// One file this program can write: a graph, and the dataset its inputs are fed from.
struct ModelRecipe {
  std::string name;
  MlpConfig config;
  std::string data_name;
  int64_t samples;
};

std::vector<ModelRecipe> Recipes() {
  MlpConfig sgd = MlpDemoConfig();
  sgd.name = "mlp_demo_sgd";
  sgd.optimizer = MlpOptimizer::kSgd;
  // The demo's 100 samples are the seed test's; a few hundred rows are enough to bench the wide
  // one.
  return {
      {"mlp_demo", MlpDemoConfig(), "mlp_demo_data", 100},
      {"mlp_demo_sgd", sgd, "mlp_demo_data", 100},
      {"mlp_wide", MlpWideConfig(), "mlp_wide_data", 256},
  };
}

bool Selected(const std::string& choice, const std::string& model) {
  if (choice == "all") return true;
  if (choice == "small") return model != "mlp_wide";
  return choice == model;
}

void SetUpGenerate(CLI::App& app, GenerateOptions& options) {
  cli::SetUpCommon(app);
  app.add_option("--model", options.model,
                 "Which graph to write: mlp_demo, mlp_demo_sgd, mlp_wide, small (the committed "
                 "ones: mlp_demo and mlp_demo_sgd) or all")
      ->check(CLI::IsMember({"mlp_demo", "mlp_demo_sgd", "mlp_wide", "small", "all"}))
      ->capture_default_str();
  app.add_option("--out-dir", options.out_dir, "Folder to write <model>.onnx and its dataset into")
      ->capture_default_str()
      ->type_name("DIR");
  app.add_option("--batch", options.batch, "Rows per step (the graphs' batch dimension)")
      ->check(cli::AtLeast(1))
      ->type_name("B");
  app.add_option("--samples", options.samples, "Rows in the dataset")
      ->check(cli::AtLeast(1))
      ->type_name("N");
  app.add_flag("--no-data", options.no_data, "Write only the graphs, no datasets");
}

Status RunGenerate(const GenerateOptions& options) {
  std::error_code error;
  std::filesystem::create_directories(options.out_dir, error);
  if (error) {
    return UnavailableError(
        StrCat("cannot create folder '", options.out_dir, "': ", error.message()));
  }
  std::vector<std::string> data_written;
  for (ModelRecipe& recipe : Recipes()) {
    if (!Selected(options.model, recipe.name)) continue;
    if (options.batch > 0) recipe.config.batch = options.batch;
    if (options.samples > 0) recipe.samples = options.samples;

    const std::string model_path = (std::filesystem::path(options.out_dir) / recipe.name).string();
    ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, BuildMlpTrainingGraph(recipe.config));
    ZG_RETURN_IF_ERROR(SaveModel(*graph, model_path + ".onnx"));
    std::cout << "wrote " << model_path << ".onnx\n";

    if (options.no_data) continue;
    bool done = false;
    for (const std::string& name : data_written) done = done || name == recipe.data_name;
    if (done) continue;
    const std::string data_path =
        (std::filesystem::path(options.out_dir) / recipe.data_name).string() + ".safetensors";
    ZG_RETURN_IF_ERROR(WriteMlpDataset(recipe.config, recipe.samples, data_path));
    data_written.push_back(recipe.data_name);
    std::cout << "wrote " << data_path << "\n";
  }
  return Status::Ok();
}

}  // namespace
}  // namespace zerograph

int main(int argc, char** argv) {
  CLI::App app("Writes zerograph's training graphs (.onnx) and their datasets (.safetensors).",
               "generate-models");
  zerograph::GenerateOptions options;
  zerograph::SetUpGenerate(app, options);
  if (auto exit_code = zerograph::cli::ParseCommandLine(app, argc, argv)) return *exit_code;
  return zerograph::cli::RunAndExit([&] { return zerograph::RunGenerate(options); });
}
