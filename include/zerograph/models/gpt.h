#ifndef ZEROGRAPH_MODELS_GPT_H_
#define ZEROGRAPH_MODELS_GPT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"

namespace zerograph {

// A decoder-only transformer in the shape of GPT-2, small enough to commit and to train in a
// test. Only its forward graph is built: the loss, backward and optimizer come from
// `rewrite-graph --train`, as they would for a model exported by another tool.
struct GptConfig {
  // The graph's name (GraphProto.name).
  std::string name = "gpt_tiny";
  int64_t layers = 2;
  // Model width; heads divide it.
  int64_t width = 32;
  int64_t heads = 2;
  int64_t vocab = 64;
  // Tokens per row (the graph's static sequence dimension, and the rows of the position table).
  int64_t seq = 8;
  // Seed of the weights (the dataset uses seed + 1).
  uint32_t seed = 2024;
};

// 2 layers, width 32, 2 heads, vocab 64, sequence 8: the sizes of the ONNX Runtime reference
// (tests/data/ort_reference/gpt_tiny).
GptConfig GptTinyConfig();

// Builds the forward graph of `config`, ONNX opset 17, nodes without `__op_role`:
//
//   ids int64 [batch, seq]        (batch symbolic: dim_param "batch")
//   x = Gather(wte, ids) + Gather(wpe, pos)
//   per layer l:  x += proj(attention(LayerNorm(x)))      causal, `heads` heads
//                 x += fc2(Gelu(fc(LayerNorm(x))))         hidden width 4 * width
//   logits = Transpose(LayerNorm(x) @ Transpose(wte))    float [batch, vocab, seq]
//
// so that SoftmaxCrossEntropyLoss takes the logits with labels [batch, seq]. Attention is
// Softmax((q k^T) * head_dim^-1/2 + mask) v with mask 0 on and below the diagonal and -1e9 above;
// Gelu is exact, written with Erf as torch.onnx.export writes it below opset 20.
// Reshapes copy the batch with 0, so any batch runs the same graph. The float initializers are
// the parameters (`rewrite-graph --train` trains every one that reaches the loss), named as the
// reference's: wte, wpe, h<l>.ln1.w, h<l>.q.w, ..., lnf.b. What is not trained is an int64
// initializer (positions, reshape shapes) or a Constant node (the mask, scalars). Weights are
// uniform with GPT-2's standard deviation 0.02, biases 0, LayerNorm scales 1.
StatusOr<std::unique_ptr<Graph>> BuildGptForwardGraph(const GptConfig& config);

// A deterministic synthetic language to train `config` on: each row counts through the vocabulary
// from a random start with a random stride of 1, 2 or 3 (mod vocab), and each token is replaced by
// a random one with probability 1/16. `ids` are a row's first `seq` tokens and `labels` the `seq`
// after the first (the next token at each position), both int64 [samples, seq], row-major. After
// two tokens the stride is known, so the loss falls from ln(vocab) towards the noise's share.
struct GptDataset {
  int64_t samples = 0;
  std::vector<int64_t> ids;
  std::vector<int64_t> labels;
};
GptDataset MakeGptDataset(const GptConfig& config, int64_t samples);

// Writes MakeGptDataset as safetensors with tensors "ids" and "labels".
Status WriteGptDataset(const GptConfig& config, int64_t samples, const std::string& path);

}  // namespace zerograph

#endif  // ZEROGRAPH_MODELS_GPT_H_
