// generate-models: writes the models of this folder and their datasets. The small ones are
// committed (a test checks that regenerating them gives the same bytes); mlp_wide is too large to
// commit and is generated at build or bench time.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_main.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/models/gpt.h"
#include "zerograph/models/mlp.h"
#include "zerograph/onnx/save_model.h"
#include "zerograph/passes/amp_pass.h"
#include "zerograph/passes/autodiff_pass.h"

namespace zerograph {
namespace {

struct GenerateOptions {
  std::string model = "small";
  std::string out_dir = ".";
  int64_t batch = 0;    // 0: the model's own
  int64_t samples = 0;  // 0: the model's own
  bool no_data = false;
};

// One model this program can write: a graph, and the dataset its inputs are fed from.
struct ModelRecipe {
  std::string name;
  // The graph's file name in the output folder.
  std::string file;
  std::string data_name;
  int64_t samples;
  // Builds the graph with `batch` rows per step (0: the model's own).
  std::function<StatusOr<std::unique_ptr<Graph>>(int64_t batch)> build;
  std::function<Status(int64_t samples, const std::string& path)> write_data;
};

ModelRecipe Mlp(const std::string& data_name, int64_t samples, MlpConfig config) {
  return {config.name,
          config.name + ".onnx",
          data_name,
          samples,
          [config](int64_t batch) {
            MlpConfig batched = config;
            if (batch > 0) batched.batch = batch;
            return BuildMlpTrainingGraph(batched);
          },
          [config](int64_t rows, const std::string& path) {
            return WriteMlpDataset(config, rows, path);
          }};
}

// The demo MLP in mixed precision at `level`: its forward graph through the AMP pass (bf16) and the
// autodiff pass with the demo's loss (MSE against y) and AdamW settings, as `rewrite-graph --train
// --loss mse --label y --amp bf16 --amp-level O1|O2` makes it. Every op of the MLP has a bf16 CPU
// kernel, so no kernel check is needed.
ModelRecipe MlpAmp(const std::string& data_name, int64_t samples, MlpConfig config,
                   AmpPass::Level level) {
  config.name += level == AmpPass::Level::kO1 ? "_bf16_o1" : "_bf16_o2";
  return {config.name,
          config.name + ".onnx",
          data_name,
          samples,
          [config, level](int64_t batch) -> StatusOr<std::unique_ptr<Graph>> {
            MlpConfig batched = config;
            if (batch > 0) batched.batch = batch;
            ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, BuildMlpForwardGraph(batched));
            AmpPass::Options amp;
            amp.low = DataType::kBFloat16;
            amp.level = level;
            ZG_RETURN_IF_ERROR(AmpPass(std::move(amp)).Run(*graph).status());
            AutodiffPass::Options autodiff;
            autodiff.loss = AutodiffPass::Loss::kMeanSquaredError;
            autodiff.label = "y";
            autodiff.optimizer = AutodiffPass::Optimizer::kAdamW;
            autodiff.weight_decay = 0.01f;
            ZG_RETURN_IF_ERROR(AutodiffPass(std::move(autodiff)).Run(*graph).status());
            return graph;
          },
          [config](int64_t rows, const std::string& path) {
            return WriteMlpDataset(config, rows, path);
          }};
}

// A forward graph only: `rewrite-graph --train` makes the training graph. Its batch is symbolic,
// so --batch does not apply.
ModelRecipe Gpt(const std::string& data_name, int64_t samples, GptConfig config) {
  return {config.name,
          config.name + ".forward.onnx",
          data_name,
          samples,
          [config](int64_t) { return BuildGptForwardGraph(config); },
          [config](int64_t rows, const std::string& path) {
            return WriteGptDataset(config, rows, path);
          }};
}

std::vector<ModelRecipe> Recipes() {
  MlpConfig sgd = MlpDemoConfig();
  sgd.name = "mlp_demo_sgd";
  sgd.optimizer = MlpOptimizer::kSgd;
  // The demo's 100 samples are the seed test's; a few hundred rows are enough to bench the wide
  // one, and for the GPT to see each row a few times in 100 steps of 8.
  return {
      Mlp("mlp_demo_data", 100, MlpDemoConfig()),
      Mlp("mlp_demo_data", 100, sgd),
      MlpAmp("mlp_demo_data", 100, MlpDemoConfig(), AmpPass::Level::kO1),
      MlpAmp("mlp_demo_data", 100, MlpDemoConfig(), AmpPass::Level::kO2),
      Mlp("mlp_wide_data", 256, MlpWideConfig()),
      Gpt("gpt_tiny_data", 256, GptTinyConfig()),
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
                 "Which model to write: mlp_demo, mlp_demo_sgd, mlp_demo_bf16_o1, "
                 "mlp_demo_bf16_o2, mlp_wide (training graphs), "
                 "gpt_tiny (a forward graph, for rewrite-graph --train), small (the committed "
                 "ones: all but mlp_wide) or all")
      ->check(CLI::IsMember({"mlp_demo", "mlp_demo_sgd", "mlp_demo_bf16_o1", "mlp_demo_bf16_o2",
                             "mlp_wide", "gpt_tiny", "small", "all"}))
      ->capture_default_str();
  app.add_option("--out-dir", options.out_dir,
                 "Folder to write the model's .onnx and its dataset into")
      ->capture_default_str()
      ->type_name("DIR");
  app.add_option("--batch", options.batch,
                 "Rows per step (the MLPs' static batch dimension; the GPT's is symbolic)")
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
    if (options.samples > 0) recipe.samples = options.samples;

    const std::string model_path = (std::filesystem::path(options.out_dir) / recipe.file).string();
    ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, recipe.build(options.batch));
    ZG_RETURN_IF_ERROR(SaveModel(*graph, model_path));
    std::cout << "wrote " << model_path << "\n";

    if (options.no_data) continue;
    bool done = false;
    for (const std::string& name : data_written) done = done || name == recipe.data_name;
    if (done) continue;
    const std::string data_path =
        (std::filesystem::path(options.out_dir) / recipe.data_name).string() + ".safetensors";
    ZG_RETURN_IF_ERROR(recipe.write_data(recipe.samples, data_path));
    data_written.push_back(recipe.data_name);
    std::cout << "wrote " << data_path << "\n";
  }
  return Status::Ok();
}

}  // namespace
}  // namespace zerograph

int main(int argc, char** argv) {
  CLI::App app("Writes zerograph's models (.onnx) and their datasets (.safetensors).",
               "generate-models");
  zerograph::GenerateOptions options;
  zerograph::SetUpGenerate(app, options);
  if (auto exit_code = zerograph::cli::ParseCommandLine(app, argc, argv)) return *exit_code;
  return zerograph::cli::RunAndExit([&] { return zerograph::RunGenerate(options); });
}
