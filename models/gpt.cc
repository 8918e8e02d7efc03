#include "zerograph/models/gpt.h"

#include <cmath>
#include <initializer_list>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "zerograph/ckpt/safetensors.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/verify.h"

#include "uniform_random.h"

namespace zerograph {
namespace {

constexpr DataType kF32 = DataType::kFloat32;
constexpr DataType kI64 = DataType::kInt64;
// GPT-2's initializer range: weights have this standard deviation.
constexpr float kInitStd = 0.02f;
// Added to the scores of future positions; exp() of it, after the row maximum is subtracted, is 0.
constexpr float kMaskValue = -1e9f;

Status CheckConfig(const GptConfig& config) {
  ZG_RETURN_IF_NOT(!config.name.empty(), "GPT graph needs a name");
  for (int64_t size : {config.layers, config.width, config.heads, config.vocab, config.seq}) {
    ZG_RETURN_IF_NOT(size >= 1, "GPT sizes must be positive: layers ", config.layers, ", width ",
                     config.width, ", heads ", config.heads, ", vocab ", config.vocab, ", seq ",
                     config.seq);
  }
  ZG_RETURN_IF_NOT(config.width % config.heads == 0, "GPT width ", config.width,
                   " is not a multiple of its ", config.heads, " heads");
  return Status::Ok();
}

// Writes the graph's nodes and parameters; one member per piece of the architecture.
class GptBuilder {
 public:
  GptBuilder(const GptConfig& config, Graph& graph)
      : config_(config), b_(graph, /*default_opset=*/17), rng_(config.seed) {
    // The exporter's view: a forward model carries no training annotations.
    b_.SetRole(std::nullopt);
  }

  void Build() {
    const int64_t width = config_.width, seq = config_.seq;
    Value* ids = b_.Input("ids", kI64, {TensorType::kUnknownDim, seq});
    b_.graph().SetDimParam(ids, 0, "batch");

    Value* wte = Weight("wte", {config_.vocab, width});
    Value* wpe = Weight("wpe", {seq, width});
    std::vector<int64_t> positions(static_cast<size_t>(seq));
    for (int64_t i = 0; i < seq; ++i) positions[static_cast<size_t>(i)] = i;
    Value* pos = Ints("pos", positions);
    MakeAttentionConstants();

    Value* x =
        b_.Op("Add", {b_.Op("Gather", {wte, ids}, "tok"), b_.Op("Gather", {wpe, pos}, "pe")}, "x0");
    for (int64_t layer = 0; layer < config_.layers; ++layer) x = Block(StrCat("h", layer, "."), x);
    x = LayerNorm("lnf", x);
    // The LM head is the token embedding, transposed: [batch, seq, width] @ [width, vocab].
    Value* wte_t = b_.Op("Transpose", {wte}, "wte.T", {Attr("perm", std::vector<int64_t>{1, 0})});
    Value* logits_bsv = b_.Op("MatMul", {x, wte_t}, "logits.bsv");
    Value* logits =
        b_.Op("Transpose", {logits_bsv}, "logits", {Attr("perm", std::vector<int64_t>{0, 2, 1})});
    b_.SetType(logits, kF32, {TensorType::kUnknownDim, config_.vocab, seq});
    b_.Output(logits);
    b_.graph().SetDimParam(logits, 0, "batch");
  }

 private:
  // A trained matrix (or table), uniform with standard deviation kInitStd.
  Value* Weight(std::string_view name, std::vector<int64_t> dims) {
    const float limit = kInitStd * std::sqrt(3.0f);
    return b_.Initializer(name, dims, UniformVector(rng_, dims[0] * dims[1], -limit, limit));
  }
  Value* Filled(std::string_view name, int64_t size, float value) {
    return b_.Initializer(name, {size}, std::vector<float>(static_cast<size_t>(size), value));
  }
  // A 1-D int64 initializer: not floating, so never trained.
  Value* Ints(std::string_view name, std::span<const int64_t> values) {
    const int64_t dims[] = {static_cast<int64_t>(values.size())};
    return b_.graph().AddInitializer(b_.graph().UniqueValueName(name), kI64, dims,
                                     std::as_bytes(values));
  }
  Value* Ints(std::string_view name, std::initializer_list<int64_t> values) {
    return Ints(name, std::span<const int64_t>(values.begin(), values.size()));
  }

  Value* Scalar(std::string_view name, float value) {
    return b_.Op("Constant", {}, name, {Attr("value_float", value)});
  }

  // What every layer shares: the score scale, the causal mask, the head shapes and GELU's scalars.
  // The reshapes copy the leading dims (0), so the batch stays whatever the input's is.
  void MakeAttentionConstants() {
    const int64_t seq = config_.seq, head_width = config_.width / config_.heads;
    scale_ = Scalar("scale", 1.0f / std::sqrt(static_cast<float>(head_width)));
    std::vector<float> mask(static_cast<size_t>(seq * seq), 0.0f);
    for (int64_t row = 0; row < seq; ++row) {
      for (int64_t col = row + 1; col < seq; ++col) {
        mask[static_cast<size_t>(row * seq + col)] = kMaskValue;
      }
    }
    Value* mask_flat = b_.Op("Constant", {}, "mask.flat", {Attr("value_floats", mask)});
    mask_ = b_.Op("Reshape", {mask_flat, Ints("mask.shape", {seq, seq})}, "mask");
    shape_heads_ = Ints("shape_heads", {0, 0, config_.heads, head_width});
    shape_merged_ = Ints("shape_bsd", {0, 0, config_.width});
    sqrt2_ = Scalar("gelu.sqrt2", std::sqrt(2.0f));
    one_ = Scalar("gelu.one", 1.0f);
    half_ = Scalar("gelu.half", 0.5f);
  }

  // x [batch, seq, width] -> LayerNormalization over the last axis, with its scale and bias. The
  // mean and inverse deviation outputs are there for a backward pass to reuse, as ONNX Runtime's
  // exported graphs have them.
  Value* LayerNorm(const std::string& name, Value* x) {
    Value* scale = Filled(name + ".w", config_.width, 1.0f);
    Value* bias = Filled(name + ".b", config_.width, 0.0f);
    const std::string outputs[] = {name, name + ".mean", name + ".inv_std"};
    Value* const inputs[] = {x, scale, bias};
    return b_
        .AddNode("LayerNormalization", inputs, outputs, {Attr("axis", -1), Attr("epsilon", 1e-5f)})
        ->output(0);
  }

  // x @ w + b, w [in, out] and b [out] trained.
  Value* Linear(const std::string& name, Value* x, int64_t in, int64_t out) {
    Value* w = Weight(name + ".w", {in, out});
    Value* bias = Filled(name + ".b", out, 0.0f);
    return b_.Op("Add", {b_.Op("MatMul", {x, w}, name + ".mm"), bias}, name);
  }

  // Gelu(x) = x · (1 + erf(x / √2)) / 2, in the ops torch.onnx.export writes below opset 20 (whose
  // Gelu ONNX 1.12's checker does not know).
  Value* Gelu(const std::string& name, Value* x) {
    Value* erf = b_.Op("Erf", {b_.Op("Div", {x, sqrt2_}, name + ".scaled")}, name + ".erf");
    Value* gate = b_.Op("Mul", {x, b_.Op("Add", {erf, one_}, name + ".erf1")}, name + ".x_erf1");
    return b_.Op("Mul", {gate, half_}, name);
  }

  // [batch, seq, width] -> [batch, heads, seq, head_width]
  Value* SplitHeads(const std::string& name, Value* x) {
    Value* split = b_.Op("Reshape", {x, shape_heads_}, name + ".r");
    return b_.Op("Transpose", {split}, name + ".t",
                 {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
  }

  // Pre-LayerNorm block: x + attention(ln1(x)), then that + mlp(ln2(that)).
  Value* Block(const std::string& p, Value* x) {
    const int64_t width = config_.width;
    Value* n1 = LayerNorm(p + "ln1", x);
    Value* q = SplitHeads(p + "q", Linear(p + "q", n1, width, width));
    Value* k = SplitHeads(p + "k", Linear(p + "k", n1, width, width));
    Value* v = SplitHeads(p + "v", Linear(p + "v", n1, width, width));
    Value* k_t =
        b_.Op("Transpose", {k}, p + "kT", {Attr("perm", std::vector<int64_t>{0, 1, 3, 2})});
    Value* scores = b_.Op("Mul", {b_.Op("MatMul", {q, k_t}, p + "qk"), scale_}, p + "qk.s");
    Value* masked = b_.Op("Add", {scores, mask_}, p + "qk.m");
    Value* attn = b_.Op("Softmax", {masked}, p + "attn", {Attr("axis", -1)});
    Value* heads = b_.Op("Transpose", {b_.Op("MatMul", {attn, v}, p + "av")}, p + "av.t",
                         {Attr("perm", std::vector<int64_t>{0, 2, 1, 3})});
    Value* merged = b_.Op("Reshape", {heads, shape_merged_}, p + "o");
    Value* res1 = b_.Op("Add", {x, Linear(p + "proj", merged, width, width)}, p + "res1");

    Value* n2 = LayerNorm(p + "ln2", res1);
    Value* hidden = Gelu(p + "act", Linear(p + "fc", n2, width, 4 * width));
    return b_.Op("Add", {res1, Linear(p + "fc2", hidden, 4 * width, width)}, p + "res2");
  }

  const GptConfig& config_;
  GraphBuilder b_;
  std::mt19937 rng_;
  Value* scale_ = nullptr;
  Value* mask_ = nullptr;
  Value* shape_heads_ = nullptr;
  Value* shape_merged_ = nullptr;
  Value* sqrt2_ = nullptr;
  Value* one_ = nullptr;
  Value* half_ = nullptr;
};

}  // namespace

GptConfig GptTinyConfig() { return GptConfig(); }

StatusOr<std::unique_ptr<Graph>> BuildGptForwardGraph(const GptConfig& config) {
  ZG_RETURN_IF_ERROR(CheckConfig(config));
  auto graph = std::make_unique<Graph>();
  graph->SetName(config.name);
  GptBuilder(config, *graph).Build();
  ZG_RETURN_IF_ERROR(Verify(*graph).WithContext("generated GPT graph"));
  return graph;
}

GptDataset MakeGptDataset(const GptConfig& config, int64_t samples) {
  std::mt19937 rng(config.seed + 1);
  const int64_t seq = config.seq;
  const auto vocab = static_cast<uint32_t>(config.vocab);
  GptDataset data;
  data.samples = samples;
  data.ids.reserve(static_cast<size_t>(samples * seq));
  data.labels.reserve(static_cast<size_t>(samples * seq));
  std::vector<int64_t> row(static_cast<size_t>(seq + 1));
  for (int64_t sample = 0; sample < samples; ++sample) {
    // Integer draws only (no std distributions, whose results the standard leaves open): the
    // modulo's bias is far below what the model can notice.
    const uint32_t start = rng() % vocab;
    const uint32_t stride = 1 + rng() % 3;
    for (size_t i = 0; i < row.size(); ++i) {
      const bool noise = rng() >> 28 == 0;  // 1 in 16
      const uint32_t counted = (start + stride * static_cast<uint32_t>(i)) % vocab;
      row[i] = noise ? rng() % vocab : counted;
    }
    data.ids.insert(data.ids.end(), row.begin(), row.end() - 1);
    data.labels.insert(data.labels.end(), row.begin() + 1, row.end());
  }
  return data;
}

Status WriteGptDataset(const GptConfig& config, int64_t samples, const std::string& path) {
  ZG_RETURN_IF_ERROR(CheckConfig(config));
  ZG_RETURN_IF_NOT(samples >= 1, "dataset needs at least 1 sample, got ", samples);
  GptDataset data = MakeGptDataset(config, samples);
  const SafetensorsWriteEntry tensors[] = {
      {"ids", kI64, {samples, config.seq}, std::as_bytes(std::span(data.ids))},
      {"labels", kI64, {samples, config.seq}, std::as_bytes(std::span(data.labels))},
  };
  const std::pair<std::string, std::string> metadata[] = {
      {"generator", "zerograph generate-models"},
      {"seed", StrCat(config.seed + 1)},
  };
  return WriteSafetensors(path, tensors, metadata);
}

}  // namespace zerograph
