#include "zerograph/train/dataset.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "zerograph/ckpt/safetensors.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/training_spec.h"

namespace zerograph {
namespace {

class DatasetTest : public ::testing::Test {
 protected:
  // A graph taking x [2,3] per rank, and a file of `samples` rows whose values are row*10 + col.
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("zg_dataset_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    GraphBuilder b(graph_);
    Value* x = b.Input("x", DataType::kFloat32, {2, 3});
    b.Output(b.SetType(b.Op("Identity", {x}, "loss"), DataType::kFloat32, {2, 3}));
    spec_.loss = "loss";
    spec_.data_inputs = {"x"};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(int64_t samples, DataType dtype = DataType::kFloat32, int64_t width = 3) {
    values_.clear();
    for (int64_t r = 0; r < samples; ++r) {
      for (int64_t c = 0; c < width; ++c) values_.push_back(static_cast<float>(r * 10 + c));
    }
    std::string path = (dir_ / "data.safetensors").string();
    SafetensorsWriteEntry entry{"x", dtype, {samples, width}, std::as_bytes(std::span(values_))};
    if (dtype != DataType::kFloat32) entry.bytes = entry.bytes.first(values_.size() * 2);
    EXPECT_TRUE(WriteSafetensors(path, std::span(&entry, 1)).ok());
    return path;
  }

  std::vector<float> Rows(const Dataset& data, int64_t step, int64_t rank) {
    std::vector<float> out(6);
    EXPECT_TRUE(data.Rows("x", step, rank, std::as_writable_bytes(std::span(out))).ok());
    return out;
  }

  std::filesystem::path dir_;
  Graph graph_;
  TrainingSpec spec_;
  std::vector<float> values_;
};

// Two ranks split each global batch of 4 rows contiguously, and batches wrap around the file.
TEST_F(DatasetTest, SplitsGlobalBatchAcrossRanks) {
  auto data = Dataset::Open(Write(6), graph_, spec_, /*nranks=*/2);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ((*data)->global_batch(), 4);
  EXPECT_EQ(Rows(**data, 0, 0), (std::vector<float>{0, 1, 2, 10, 11, 12}));
  EXPECT_EQ(Rows(**data, 0, 1), (std::vector<float>{20, 21, 22, 30, 31, 32}));
  // Step 1 covers samples 4, 5, 0, 1.
  EXPECT_EQ(Rows(**data, 1, 0), (std::vector<float>{40, 41, 42, 50, 51, 52}));
  EXPECT_EQ(Rows(**data, 1, 1), (std::vector<float>{0, 1, 2, 10, 11, 12}));
}

// A row of the wrong width is refused, naming the tensor.
TEST_F(DatasetTest, RejectsWrongShape) {
  auto data = Dataset::Open(Write(6, DataType::kFloat32, 4), graph_, spec_, 1);
  ASSERT_FALSE(data.ok());
  EXPECT_NE(data.status().message().find("tensor 'x' has shape [6,4]"), std::string_view::npos)
      << data.status().message();
}

// A dtype other than the input's is refused.
TEST_F(DatasetTest, RejectsWrongDtype) {
  auto data = Dataset::Open(Write(6, DataType::kFloat16), graph_, spec_, 1);
  ASSERT_FALSE(data.ok());
  EXPECT_NE(data.status().message().find("float16"), std::string_view::npos);
}

// A data input missing from the file is refused.
TEST_F(DatasetTest, RejectsMissingInput) {
  spec_.data_inputs = {"x", "y"};
  GraphBuilder(graph_).Input("y", DataType::kFloat32, {2, 1});
  auto data = Dataset::Open(Write(6), graph_, spec_, 1);
  ASSERT_FALSE(data.ok());
  EXPECT_NE(data.status().message().find("no tensor 'y'"), std::string_view::npos);
}

// Fewer samples than one global batch cannot train.
TEST_F(DatasetTest, RejectsTooFewSamples) {
  auto data = Dataset::Open(Write(3), graph_, spec_, 2);
  ASSERT_FALSE(data.ok());
  EXPECT_NE(data.status().message().find("fewer than one global batch of 4"),
            std::string_view::npos);
}

// An exported model's symbolic batch dimension is bound to --batch / ranks, and a symbolic row
// dimension to the file's.
TEST_F(DatasetTest, BindsSymbolicDimensions) {
  Graph graph;
  GraphBuilder(graph).Input("x", DataType::kFloat32,
                            {TensorType::kUnknownDim, TensorType::kUnknownDim});
  auto data = Dataset::Open(Write(6), graph, spec_, /*nranks=*/2, /*global_batch=*/4);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ((*data)->rows_per_rank(), 2);
  EXPECT_EQ((*data)->inputs().front().second.shape, (runtime::Shape{2, 3}));
  EXPECT_EQ(Rows(**data, 1, 1), (std::vector<float>{0, 1, 2, 10, 11, 12}));
}

// A symbolic batch needs --batch, and one that splits evenly over the ranks.
TEST_F(DatasetTest, SymbolicBatchNeedsADivisibleGlobalBatch) {
  Graph graph;
  GraphBuilder(graph).Input("x", DataType::kFloat32, {TensorType::kUnknownDim, 3});
  auto missing = Dataset::Open(Write(6), graph, spec_, 2);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(
                "symbolic batch dimension: give the global batch with --batch"),
            std::string_view::npos)
      << missing.status().message();
  auto uneven = Dataset::Open(Write(6), graph, spec_, 2, /*global_batch=*/3);
  ASSERT_FALSE(uneven.ok());
  EXPECT_NE(uneven.status().message().find("--batch 3 does not split evenly over 2 ranks"),
            std::string_view::npos)
      << uneven.status().message();
}

}  // namespace
}  // namespace zerograph
