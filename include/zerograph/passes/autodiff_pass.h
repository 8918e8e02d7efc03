#ifndef ZEROGRAPH_PASSES_AUTODIFF_PASS_H_
#define ZEROGRAPH_PASSES_AUTODIFF_PASS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/passes/pass.h"

namespace zerograph {

// Turns a forward model into a training graph of docs/formats.md's convention, so that every
// later pass and the executor take it as they take a hand-written one:
//
//   forward (role 0) → loss (role 256) → backward (role 1, AppendBackward) → optimizer (role 2)
//
// The loss is computed on one forward output against a new label input; the trained parameters
// are the floating initializers that reach the loss (less the frozen ones), updated by one
// multi-tensor optimizer node with zero-initialized states `<param>.m1` / `<param>.m2`. The graph
// then outputs only the loss and the `.new` values (forward nodes that computed only the dropped
// outputs are erased), and its metadata names the data inputs (the forward graph's inputs, then
// the label), `lr`, `step` and the state binding.
class AutodiffPass : public GraphPass {
 public:
  enum class Loss {
    kMeanSquaredError,  // ReduceMean((y − label)²) over every element (ONNX Runtime's MSELoss)
    kCrossEntropy,      // SoftmaxCrossEntropyLoss, reduction mean: scores [N, C, d...]
    kOutput,            // `loss_on` already is the loss, a floating scalar
  };
  enum class Optimizer { kAdamW, kAdam, kSgd };

  struct Options {
    Loss loss = Loss::kCrossEntropy;
    // The forward output the loss is computed on (the loss itself with kOutput); empty: the
    // graph's only output.
    std::string loss_on;
    // The new graph input holding the labels.
    std::string label = "labels";
    // Default: int64 for cross-entropy, the output's dtype for MSE.
    std::optional<DataType> label_dtype;
    // Dims as numbers or symbolic names ("batch"). Default: the output's shape for MSE, less
    // axis 1 (the classes) for cross-entropy.
    std::optional<std::vector<std::string>> label_shape;
    // Cross-entropy: labels equal to this do not count.
    std::optional<int64_t> ignore_index;
    // Initializers that stay fixed.
    std::vector<std::string> frozen;
    Optimizer optimizer = Optimizer::kAdamW;
    // AdamW's form: 0 PyTorch's, 1 Hugging Face's / ONNX Runtime's adam_mode=1.
    int64_t adam_mode = 0;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float epsilon = 1e-8f;
    // Default: PyTorch's, 0.01 for AdamW and 0 for Adam and SGD. Adam and SGD add it as L2
    // (wd·param added to the gradient).
    std::optional<float> weight_decay;
    bool bias_correction = true;
    // Dynamic loss scaling (fp16): the loss's gradient starts from this scale instead of 1, held
    // in the state initializer `zg.loss_scale` (with its step counter `zg.loss_scale.good_steps`),
    // which the gradient-control pass divides back out and adapts. nullopt: no scaling.
    std::optional<float> loss_scale;
  };

  explicit AutodiffPass(Options options) : options_(std::move(options)) {}

  std::string_view name() const override { return "autodiff"; }
  std::string StatsString() const override;

 protected:
  StatusOr<bool> RunImpl(Graph& graph) override;

 private:
  struct Stats {
    int64_t forward_nodes = 0;
    int64_t backward_nodes = 0;
    int64_t trained = 0;
    int64_t constant = 0;  // floating initializers frozen or not reaching the loss
    int64_t trained_elements = 0;
    int64_t dead_nodes = 0;  // read by nothing once the forward graph's outputs are dropped
  };

  Options options_;
  Stats stats_;
};

// "mse", "cross-entropy", "output" / "adamw", "adam", "sgd": the CLI's spellings.
std::optional<AutodiffPass::Loss> LossFromName(std::string_view name);
std::optional<AutodiffPass::Optimizer> OptimizerFromName(std::string_view name);

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_AUTODIFF_PASS_H_
