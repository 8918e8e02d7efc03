// make-big-checkpoint: writes a synthetic unbalanced checkpoint of any size, for benchmarking
// checkpoint-convert (bench/convert_bench.sh) without training a model that large. The model is an
// MLP-like stack of fp32 [rows, cols] weights trained by AdamW (two states each), fused into
// buckets of `--params-per-bucket` weights and sharded over `--nranks` ranks exactly as
// sharding-stage1 lays them out, so the checkpoint is what graph-exec --save would write for it.
// The bytes are a cheap deterministic pattern; the files go through the library's writer.
//
//   make-big-checkpoint OUT --nranks 4 --layers 24 --rows 4096 --cols 2048 --params-per-bucket 4
//
// writes 24 · 4096 · 2048 · 3 · 4 bytes = 2.25 GiB of tensor data into OUT.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "zerograph/ckpt/checkpoint.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/layout_manifest.h"

namespace zerograph {
namespace {

struct Options {
  std::string out;
  int64_t nranks = 4;
  int64_t layers = 24;
  int64_t rows = 4096;
  int64_t cols = 2048;
  int64_t params_per_bucket = 4;
};

// The state model of the synthetic MLP, with the layout sharding-stage1 would give it.
StateModel MakeModel(const Options& options) {
  StateModel model;
  LayoutManifest layout;
  layout.nranks = options.nranks;
  const int64_t numel = options.rows * options.cols;
  const int64_t padded = PaddedNumel(numel, DataType::kFloat32, options.nranks);
  for (int64_t first = 0; first < options.layers; first += options.params_per_bucket) {
    LayoutManifest::Bucket bucket;
    bucket.id = static_cast<int64_t>(layout.buckets.size());
    bucket.dtype = DataType::kFloat32;
    bucket.optimizer = "org.zerograph.AdamW";
    bucket.param_buffer = StrCat("fused@bucket", bucket.id);
    for (int j = 0; j < 2; ++j) {
      bucket.state_buffers.push_back(StrCat("fused@bucket", bucket.id, ".state", j));
      bucket.state_dtypes.push_back(DataType::kFloat32);
    }
    const int64_t last = std::min(options.layers, first + options.params_per_bucket);
    for (int64_t i = first; i < last; ++i) {
      LayoutManifest::Param p;
      p.name = StrCat("model.layers.", i, ".fc.weight");
      p.shape = {options.rows, options.cols};
      p.offset = bucket.total;
      p.numel = numel;
      p.padded = padded;
      p.states = {StrCat(p.name, ".moment1"), StrCat(p.name, ".moment2")};
      bucket.total += padded;
      model.canonical.push_back({p.name, DataType::kFloat32, p.shape, true});
      for (const std::string& s : p.states)
        model.canonical.push_back({s, DataType::kFloat32, p.shape, false});
      bucket.params.push_back(std::move(p));
    }
    bucket.shard_size = bucket.total / options.nranks;
    model.buffers.push_back({bucket.param_buffer, DataType::kFloat32, {bucket.total}});
    for (const std::string& s : bucket.state_buffers)
      model.buffers.push_back({s, DataType::kFloat32, {bucket.total}});
    layout.buckets.push_back(std::move(bucket));
  }
  model.layout = std::move(layout);
  auto by_name = [](const StateTensor& a, const StateTensor& b) { return a.name < b.name; };
  std::sort(model.buffers.begin(), model.buffers.end(), by_name);
  std::sort(model.canonical.begin(), model.canonical.end(), by_name);
  return model;
}

Status Run(const Options& options) {
  namespace fs = std::filesystem;
  std::error_code error;
  ZG_RETURN_IF_NOT(!fs::exists(options.out, error), "OUT '", options.out, "' already exists");
  ZG_RETURN_IF_NOT(options.layers > 0 && options.rows > 0 && options.cols > 0 &&
                       options.nranks > 0 && options.params_per_bucket > 0,
                   "sizes must be positive");
  const StateModel model = MakeModel(options);
  const CheckpointPlan plan = PlanCheckpoint(CheckpointKind::kUnbalanced, model, options.nranks);

  CheckpointManifest manifest;
  manifest.kind = CheckpointKind::kUnbalanced;
  manifest.step = 0;
  manifest.next_step = 1;
  manifest.nranks = options.nranks;
  manifest.global_batch = 64;
  manifest.lr_schedule = "constant(0.001)";
  manifest.layout = model.layout;
  manifest.model = model;
  manifest.model_hash = model.ModelHash();
  manifest.tensors = plan.tensors;

  if (!fs::create_directories(options.out, error) || error) {
    return UnavailableError(StrCat("cannot create '", options.out, "': ", error.message()));
  }
  // Element i of a tensor holds a float made from i and the tensor's name: cheap and not zero.
  PieceSource fill = [](const CheckpointTensor& tensor, int64_t begin, int64_t end,
                        std::span<std::byte> out) -> Status {
    const float base = static_cast<float>(tensor.name.size() % 7) * 0.125f;
    std::vector<float> values(static_cast<size_t>(end - begin));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = base + static_cast<float>((begin + static_cast<int64_t>(i)) & 1023) * 1e-3f;
    std::memcpy(out.data(), values.data(), out.size());
    return Status::Ok();
  };
  int64_t total = 0;
  for (size_t i = 0; i < plan.files.size(); ++i) {
    ZG_ASSIGN_OR_RETURN(CheckpointManifest::File file,
                        WriteCheckpointFile(options.out, plan, i, fill));
    total += file.bytes;
    manifest.files.push_back(std::move(file));
  }
  std::ofstream json(StrCat(options.out, "/manifest.json"), std::ios::binary | std::ios::trunc);
  json << manifest.ToJson();
  json.flush();
  if (!json.good())
    return UnavailableError(StrCat("cannot write '", options.out, "/manifest.json'"));
  std::printf("wrote %lld bytes in %zu files to %s\n", static_cast<long long>(total),
              plan.files.size(), options.out.c_str());
  return Status::Ok();
}

}  // namespace
}  // namespace zerograph

int main(int argc, char** argv) {
  CLI::App app("Writes a synthetic unbalanced checkpoint (AdamW-trained MLP weights) of any size.",
               "make-big-checkpoint");
  zerograph::Options options;
  app.add_option("OUT", options.out, "Checkpoint folder to create")->required();
  app.add_option("--nranks", options.nranks, "Ranks of the layout")->capture_default_str();
  app.add_option("--layers", options.layers, "Weights")->capture_default_str();
  app.add_option("--rows", options.rows, "Rows of each weight")->capture_default_str();
  app.add_option("--cols", options.cols, "Columns of each weight")->capture_default_str();
  app.add_option("--params-per-bucket", options.params_per_bucket, "Weights fused per bucket")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  zerograph::Status status = zerograph::Run(options);
  if (!status.ok()) {
    std::fprintf(stderr, "make-big-checkpoint: %s\n", status.ToString().c_str());
    return 2;
  }
  return 0;
}
