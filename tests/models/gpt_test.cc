#include "zerograph/models/gpt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>
#include <nlohmann/json.hpp>

#include "onnx/test_models.h"
#include "zerograph/ckpt/safetensors.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/verify.h"
#include "zerograph/onnx/save_model.h"
#include "zerograph/runtime/tensor_proto.h"
#include "zerograph/tools/run_once.h"

namespace zerograph {
namespace {

using onnx_test::TempFolder;

std::unique_ptr<Graph> Build(const GptConfig& config) {
  StatusOr<std::unique_ptr<Graph>> graph = BuildGptForwardGraph(config);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(graph).value() : nullptr;
}

std::map<std::string, int> CountOps(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node* node : graph.nodes()) ++counts[std::string(node->op_type())];
  return counts;
}

// The dims of graph input or output `value` as the file writes them: a number, or the symbol.
std::vector<std::string> WrittenDims(Graph& graph, bool input, size_t index) {
  std::vector<std::string> dims;
  EXPECT_TRUE(graph
                  .WithModelProto(nullptr,
                                  [&](const onnx::ModelProto& model, const Graph::HeldFields&) {
                                    const onnx::ValueInfoProto& info =
                                        input ? model.graph().input(static_cast<int>(index))
                                              : model.graph().output(static_cast<int>(index));
                                    for (const auto& dim : info.type().tensor_type().shape().dim())
                                      dims.push_back(dim.has_dim_param() ? dim.dim_param()
                                                                         : StrCat(dim.dim_value()));
                                    return Status::Ok();
                                  })
                  .ok());
  return dims;
}

// Runs `model_path` on `ids` ([rows, seq]) through graph-exec's --run-once path and returns the
// logits [rows, vocab, seq], row-major.
std::vector<float> RunForward(const std::string& model_path, const TempFolder& folder,
                              const std::vector<int64_t>& ids, int64_t seq) {
  onnx::TensorProto input;
  input.set_name("ids");
  input.set_data_type(onnx::TensorProto::INT64);
  input.add_dims(static_cast<int64_t>(ids.size()) / seq);
  input.add_dims(seq);
  input.set_raw_data(ids.data(), ids.size() * sizeof(int64_t));
  EXPECT_TRUE(onnx_test::WriteBytesFile(input.SerializeAsString(), folder.Path("input_0.pb")).ok());
  Status run = runtime::RunOnce(model_path, folder.path(), folder.Path("out"));
  EXPECT_TRUE(run.ok()) << run.ToString();
  onnx::TensorProto output;
  std::ifstream file(folder.Path("out/output_0.pb"), std::ios::binary);
  EXPECT_TRUE(output.ParseFromIstream(&file));
  StatusOr<runtime::HostTensorData> data = runtime::ReadTensorProto(output);
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  if (!data.ok()) return {};
  std::vector<float> logits(data->bytes.size() / sizeof(float));
  std::memcpy(logits.data(), data->bytes.data(), data->bytes.size());
  return logits;
}

// The tiny GPT has the reference's architecture: per layer 2 LayerNorms, 6 MatMuls (q, k, v,
// scores, weighted values, projection) and 2 for the MLP, one Softmax and one Erf (the GELU);
// one more LayerNorm and the tied head; the graph verifies.
TEST(GptTest, TinyStructure) {
  std::unique_ptr<Graph> graph = Build(GptTinyConfig());
  ASSERT_NE(graph, nullptr);
  EXPECT_TRUE(Verify(*graph).ok());
  EXPECT_EQ(graph->name(), "gpt_tiny");
  EXPECT_EQ(graph->OpsetVersion(""), 17);
  std::map<std::string, int> ops = CountOps(*graph);
  EXPECT_EQ(ops["LayerNormalization"], 5);
  EXPECT_EQ(ops["MatMul"], 2 * 8 + 1);
  EXPECT_EQ(ops["Softmax"], 2);
  EXPECT_EQ(ops["Erf"], 2);
  EXPECT_EQ(ops["Gather"], 2);
  for (const Node* node : graph->nodes()) EXPECT_FALSE(node->has_role()) << node->name();
}

// The batch is symbolic and named on the input and on the logits, which are [batch, vocab, seq].
TEST(GptTest, BatchIsSymbolic) {
  std::unique_ptr<Graph> graph = Build(GptTinyConfig());
  ASSERT_NE(graph, nullptr);
  ASSERT_EQ(graph->inputs().size(), 1u);
  ASSERT_EQ(graph->outputs().size(), 1u);
  EXPECT_EQ(graph->inputs()[0]->name(), "ids");
  EXPECT_EQ(graph->outputs()[0]->name(), "logits");
  EXPECT_EQ(WrittenDims(*graph, /*input=*/true, 0), (std::vector<std::string>{"batch", "8"}));
  EXPECT_EQ(WrittenDims(*graph, /*input=*/false, 0),
            (std::vector<std::string>{"batch", "64", "8"}));
}

// The float initializers, which training updates, are named and shaped as ONNX Runtime's
// reference GPT's parameters (so the two can share checkpoints' names); the other initializers
// are int64 (positions and shapes).
TEST(GptTest, ParametersAreTheReferences) {
  std::ifstream file(StrCat(ZG_SOURCE_DIR, "/tests/data/ort_reference/gpt_tiny/reference.json"));
  const nlohmann::json reference = nlohmann::json::parse(file);
  std::unique_ptr<Graph> graph = Build(GptTinyConfig());
  ASSERT_NE(graph, nullptr);
  std::vector<std::string> names;
  for (const Value* value : graph->initializers()) {
    if (value->dtype() == DataType::kFloat32) {
      names.emplace_back(value->name());
    } else {
      EXPECT_EQ(value->dtype(), DataType::kInt64) << value->name();
    }
  }
  EXPECT_EQ(names, reference["parameters"].get<std::vector<std::string>>());
  EXPECT_EQ(graph->FindValue("wte")->type()->dims, (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(graph->FindValue("h1.fc.w")->type()->dims, (std::vector<int64_t>{32, 128}));
}

// A bad size is refused with the sizes named.
TEST(GptTest, HeadsNotDividingWidthAreRefused) {
  GptConfig config = GptTinyConfig();
  config.heads = 3;
  StatusOr<std::unique_ptr<Graph>> graph = BuildGptForwardGraph(config);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("width 32 is not a multiple of its 3 heads"),
            std::string::npos)
      << graph.status().ToString();
}

// Saved and run: one graph takes 1 row and 3 rows (the batch is not baked in anywhere), rows do
// not see each other, and attention is causal: changing the token at position t leaves the
// logits of positions before t as they were and changes those at t. (Equal up to rounding: BLAS
// may sum a product of 3 rows in another order than one of 1; a leak would move logits by ~0.1.)
TEST(GptTest, ForwardRunsOnAnyBatchAndIsCausal) {
  const GptConfig config = GptTinyConfig();
  const int64_t seq = config.seq, vocab = config.vocab;
  std::unique_ptr<Graph> graph = Build(config);
  ASSERT_NE(graph, nullptr);
  TempFolder folder;
  const std::string model = folder.Path("gpt.onnx");
  ASSERT_TRUE(SaveModel(*graph, model).ok());

  const std::vector<int64_t> row = {5, 9, 13, 17, 21, 25, 29, 33};
  std::vector<int64_t> three = row;
  for (int64_t t = 0; t < seq; ++t) three.push_back((t * 7) % vocab);
  three.insert(three.end(), row.begin(), row.end());
  three[2 * seq + 4] = 60;  // row 2 differs from row 0 from position 4 on
  const std::vector<float> one_row = RunForward(model, folder, row, seq);
  const std::vector<float> three_rows = RunForward(model, folder, three, seq);
  ASSERT_EQ(one_row.size(), static_cast<size_t>(vocab * seq));
  ASSERT_EQ(three_rows.size(), static_cast<size_t>(3 * vocab * seq));

  // Logits are [row, vocab, seq]: element (r, v, t) at (r * vocab + v) * seq + t.
  auto at = [&](const std::vector<float>& logits, int64_t r, int64_t v, int64_t t) {
    return logits[static_cast<size_t>((r * vocab + v) * seq + t)];
  };
  constexpr float kRounding = 1e-6f;
  int changed_at_4 = 0;
  for (int64_t v = 0; v < vocab; ++v) {
    for (int64_t t = 0; t < seq; ++t) {
      EXPECT_NEAR(at(one_row, 0, v, t), at(three_rows, 0, v, t), kRounding)
          << "row 0, v " << v << " t " << t;
      if (t < 4) {
        EXPECT_NEAR(at(three_rows, 0, v, t), at(three_rows, 2, v, t), kRounding)
            << "v " << v << " t " << t;
      }
    }
    changed_at_4 += std::abs(at(three_rows, 0, v, 4) - at(three_rows, 2, v, 4)) > 1e-3f ? 1 : 0;
  }
  EXPECT_GT(changed_at_4, vocab / 2);
}

// The dataset: labels are the ids shifted by one token, every token is in the vocabulary, most
// next tokens follow the row's stride, and the same config gives the same bytes.
TEST(GptTest, DatasetCountsWithNoise) {
  const GptConfig config = GptTinyConfig();
  const int64_t seq = config.seq, samples = 200;
  GptDataset data = MakeGptDataset(config, samples);
  ASSERT_EQ(data.ids.size(), static_cast<size_t>(samples * seq));
  ASSERT_EQ(data.labels.size(), data.ids.size());
  int64_t follows = 0, pairs = 0;
  for (int64_t r = 0; r < samples; ++r) {
    const int64_t* ids = data.ids.data() + r * seq;
    const int64_t* labels = data.labels.data() + r * seq;
    const int64_t stride = (ids[1] - ids[0] + config.vocab) % config.vocab;
    for (int64_t t = 0; t < seq; ++t) {
      ASSERT_GE(ids[t], 0);
      ASSERT_LT(labels[t], config.vocab);
      if (t + 1 < seq) {
        EXPECT_EQ(labels[t], ids[t + 1]) << "row " << r << " t " << t;
      }
      follows += (labels[t] - ids[t] + config.vocab) % config.vocab == stride ? 1 : 0;
      ++pairs;
    }
  }
  // 1/16 noise touches about 2 of every 16 pairs, and a noisy first pair misleads the stride.
  EXPECT_GT(follows, pairs * 6 / 10);
  EXPECT_LT(follows, pairs);
  GptDataset again = MakeGptDataset(config, samples);
  EXPECT_EQ(again.ids, data.ids);
  EXPECT_EQ(again.labels, data.labels);
}

// The written file holds `ids` and `labels`, int64 [samples, seq], as the graph's input is named.
TEST(GptTest, WritesDatasetAsSafetensors) {
  const GptConfig config = GptTinyConfig();
  TempFolder folder;
  const std::string path = folder.Path("data.safetensors");
  ASSERT_TRUE(WriteGptDataset(config, 16, path).ok());
  StatusOr<std::unique_ptr<SafetensorsFile>> file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  for (const char* name : {"ids", "labels"}) {
    const SafetensorsFile::TensorInfo* tensor = (*file)->Find(name);
    ASSERT_NE(tensor, nullptr) << name;
    EXPECT_EQ(tensor->dtype, DataType::kInt64);
    EXPECT_EQ(tensor->shape, (std::vector<int64_t>{16, 8}));
  }
  GptDataset data = MakeGptDataset(config, 16);
  const SafetensorsFile::TensorInfo* ids = (*file)->Find("ids");
  ASSERT_EQ(ids->bytes.size(), data.ids.size() * sizeof(int64_t));
  EXPECT_EQ(std::memcmp(ids->bytes.data(), data.ids.data(), ids->bytes.size()), 0);
}

}  // namespace
}  // namespace zerograph
