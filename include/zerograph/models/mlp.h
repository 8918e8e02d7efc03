#ifndef ZEROGRAPH_MODELS_MLP_H_
#define ZEROGRAPH_MODELS_MLP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"

namespace zerograph {

enum class MlpOptimizer {
  kAdamW,  // org.zerograph AdamW: states m1, m2 per parameter; inputs lr and step
  kSgd,    // org.zerograph SGD: no states; input lr only
};

// A multi-layer perceptron trained on mean squared error: the test model of the seed
// (docs/architecture.md §1, seed-spec §4.7) and larger relatives for benchmarks.
struct MlpConfig {
  // The graph's name (GraphProto.name).
  std::string name = "mlp_demo";
  // Rows per step (the graph's static batch dimension).
  int64_t batch = 4;
  // Input width, hidden widths, output width: widths.size() - 1 linear layers.
  std::vector<int64_t> widths = {16, 16, 8};
  // Linear layers with a bias (Gemm) or without (MatMul).
  bool bias = false;
  // Relu on the input before the first layer, and after the last (the seed has both); relu sits
  // between layers always.
  bool relu_input = true;
  bool relu_output = true;
  MlpOptimizer optimizer = MlpOptimizer::kAdamW;
  // Seed of the weights (the dataset uses seed + 1).
  uint32_t seed = 2024;
};

// The seed's DPDemoNet: relu, Linear(16,16), relu, Linear(16,8), relu; batch 4; AdamW.
MlpConfig MlpDemoConfig();
// 8 layers of width 1024 with bias, relu between (about 8.4M parameters); batch 32; AdamW.
MlpConfig MlpWideConfig();

// Builds the forward graph of `config` alone, nodes without `__op_role`: input x, the parameters
// and forward nodes of BuildMlpTrainingGraph (the same weights), output the last layer's
// activation (h<layers> with relu_output, else z<layers-1>). `rewrite-graph --train --loss mse
// --label y` (or the AutodiffPass) makes it a training graph like BuildMlpTrainingGraph's.
StatusOr<std::unique_ptr<Graph>> BuildMlpForwardGraph(const MlpConfig& config);

// Builds the training graph of `config` (docs/formats.md): forward, loss, backward and optimizer
// nodes in that order, each with `__op_role`; value types for every value; `zerograph.*` metadata.
// Inputs x [batch, widths.front()], y [batch, widths.back()], lr (float scalar), step (int64
// scalar, AdamW only). Parameters w<i> [in, out] (Xavier-uniform, deterministic) and b<i> [out]
// (zeros); states <param>.m1 and <param>.m2 (zeros); outputs loss, then every new parameter and
// state, bound back in `zerograph.state_binding` ("w0.new" replaces "w0").
StatusOr<std::unique_ptr<Graph>> BuildMlpTrainingGraph(const MlpConfig& config);

// A deterministic regression dataset for `config`: x [samples, in] uniform in [-1, 1), y
// [samples, out] uniform in [0, 1) (the output passes a relu in the demo), row-major.
struct MlpDataset {
  int64_t samples = 0;
  std::vector<float> x;
  std::vector<float> y;
};
MlpDataset MakeMlpDataset(const MlpConfig& config, int64_t samples);

// Writes MakeMlpDataset as safetensors with tensors "x" and "y", named like the graph inputs.
Status WriteMlpDataset(const MlpConfig& config, int64_t samples, const std::string& path);

}  // namespace zerograph

#endif  // ZEROGRAPH_MODELS_MLP_H_
