#include "zerograph/ir/fused_bytes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <onnx/onnx_pb.h>

#include "zerograph/ir/float_convert.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/proto_store.h"
#include "zerograph/ir/tensor.h"

namespace zerograph {
namespace {

using ::testing::HasSubstr;

std::span<const std::byte> AsBytes(const std::string& bytes) {
  return std::as_bytes(std::span(bytes.data(), bytes.size()));
}

std::string Floats(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

// The bytes `fused` writes through a buffer of `buffer_size`, and how many pieces it handed over.
std::string WriteThrough(const FusedBytes& fused, size_t buffer_size, int* pieces) {
  std::vector<std::byte> buffer(buffer_size);
  std::string out;
  *pieces = 0;
  const Status written = fused.Write(buffer, [&](std::span<const std::byte> piece) {
    out.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    ++*pieces;
    return Status::Ok();
  });
  EXPECT_TRUE(written.ok()) << written.ToString();
  return out;
}

class FusedBytesTest : public ::testing::Test {
 protected:
  const Tensor* AddFloats(std::string_view name, const std::vector<float>& values) {
    const std::string bytes = Floats(values);
    return graph_
        .AddInitializer(name, DataType::kFloat32,
                        std::vector<int64_t>{static_cast<int64_t>(values.size())}, AsBytes(bytes))
        ->initializer();
  }

  Graph graph_;
};

// The sources land at their offsets with zeros between and after, the same through a buffer of
// any size; a buffer smaller than the bytes is handed over each time it fills.
TEST_F(FusedBytesTest, LaysTheSourcesOutWithZerosBetween) {
  const Tensor* a = AddFloats("a", {1, 2});
  const Tensor* b = AddFloats("b", {3});
  StatusOr<std::shared_ptr<const FusedBytes>> fused =
      FusedBytes::Make({a, b}, {1, 4}, 6, DataType::kFloat32);
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  ASSERT_EQ((*fused)->size(), 6 * sizeof(float));
  const std::string expected = Floats({0, 1, 2, 0, 3, 0});
  int pieces = 0;
  EXPECT_EQ(WriteThrough(**fused, 1024, &pieces), expected);
  EXPECT_EQ(pieces, 1);
  EXPECT_EQ(WriteThrough(**fused, 5, &pieces), expected);
  EXPECT_EQ(pieces, 5);  // 24 bytes, 5 at a time
}

// A source of another floating dtype is converted (fp32 master copies of fp16 parameters).
TEST_F(FusedBytesTest, ConvertsASourceOfAnotherDtype) {
  const std::string halves =
      *ConvertFloatElements(AsBytes(Floats({1.5f, -2.0f})), DataType::kFloat32, DataType::kFloat16);
  const Tensor* h =
      graph_.AddInitializer("h", DataType::kFloat16, std::vector<int64_t>{2}, AsBytes(halves))
          ->initializer();
  StatusOr<std::shared_ptr<const FusedBytes>> fused =
      FusedBytes::Make({h}, {0}, 4, DataType::kFloat32);
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  int pieces = 0;
  EXPECT_EQ(WriteThrough(**fused, 64, &pieces), Floats({1.5f, -2.0f, 0, 0}));
}

// A source that overlaps the one before or runs past the end is refused, by name.
TEST_F(FusedBytesTest, RefusesASourceThatDoesNotFit) {
  const Tensor* a = AddFloats("a", {1, 2});
  const Tensor* b = AddFloats("b", {3, 4});
  StatusOr<std::shared_ptr<const FusedBytes>> overlapping =
      FusedBytes::Make({a, b}, {0, 1}, 8, DataType::kFloat32);
  ASSERT_FALSE(overlapping.ok());
  EXPECT_THAT(overlapping.status().message(), HasSubstr("'b' does not fit"));
  StatusOr<std::shared_ptr<const FusedBytes>> past_the_end =
      FusedBytes::Make({a}, {3}, 4, DataType::kFloat32);
  ASSERT_FALSE(past_the_end.ok());
  EXPECT_THAT(past_the_end.status().message(), HasSubstr("'a' does not fit"));
}

// An initializer fused from others holds no data in its message; reading its bytes makes them,
// once, and setting plain bytes again replaces the recipe.
TEST_F(FusedBytesTest, AFusedInitializerIsMadeWhenRead) {
  const Tensor* a = AddFloats("a", {5, 6});
  Value* fused =
      graph_.AddInitializer("fused", DataType::kFloat32, std::vector<int64_t>{4}, std::string());
  StatusOr<std::shared_ptr<const FusedBytes>> bytes =
      FusedBytes::Make({a}, {2}, 4, DataType::kFloat32);
  ASSERT_TRUE(bytes.ok());
  StatusOr<std::shared_ptr<const FusedBytes>> too_short =
      FusedBytes::Make({a}, {0}, 3, DataType::kFloat32);
  ASSERT_TRUE(too_short.ok());
  EXPECT_FALSE(graph_.SetInitializerBytes(fused, *too_short).ok());
  ASSERT_TRUE(graph_.SetInitializerBytes(fused, *bytes).ok());
  const Tensor& tensor = *fused->initializer();
  EXPECT_NE(tensor.fused_bytes(), nullptr);
  EXPECT_FALSE(tensor.proto().has_raw_data());
  StatusOr<std::span<const std::byte>> first = tensor.Bytes();
  StatusOr<std::span<const std::byte>> second = tensor.Bytes();
  ASSERT_TRUE(first.ok() && second.ok()) << first.status().ToString();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(first->data()), first->size()),
            Floats({0, 0, 5, 6}));
  EXPECT_EQ(first->data(), second->data());  // made once
  ASSERT_TRUE(graph_.SetInitializerBytes(fused, Floats({1, 2, 3, 4})).ok());
  EXPECT_EQ(tensor.fused_bytes(), nullptr);
  StatusOr<std::span<const std::byte>> plain = tensor.Bytes();
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(plain->data()), plain->size()),
            Floats({1, 2, 3, 4}));
}

// Threads that read a fused initializer at once (the graph's sweeps run on several) all get the
// one copy of its bytes that is kept. (Under ThreadSanitizer a racing store fails.)
TEST_F(FusedBytesTest, ThreadsReadingAFusedInitializerAtOnceGetOneCopy) {
  const Tensor* a = AddFloats("a", {1, 2, 3});
  Value* fused =
      graph_.AddInitializer("fused", DataType::kFloat32, std::vector<int64_t>{4096}, std::string());
  StatusOr<std::shared_ptr<const FusedBytes>> bytes =
      FusedBytes::Make({a}, {4000}, 4096, DataType::kFloat32);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(graph_.SetInitializerBytes(fused, std::move(*bytes)).ok());
  const Tensor& tensor = *fused->initializer();
  constexpr int kThreads = 8;
  std::vector<std::span<const std::byte>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&tensor, &seen, t] {
      StatusOr<std::span<const std::byte>> read = tensor.Bytes();
      if (read.ok()) seen[static_cast<size_t>(t)] = *read;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::span<const std::byte>& read : seen) {
    ASSERT_EQ(read.size(), 4096 * sizeof(float));
    EXPECT_EQ(read.data(), seen[0].data());
  }
  float last = 0;
  std::memcpy(&last, seen[0].data() + 4002 * sizeof(float), sizeof(last));
  EXPECT_EQ(last, 3.0f);
}

// A source holding typed data (float_data) is converted as the fused bytes are made, also when
// they are made by reading them (both take the conversion's lock: made in turn, not nested).
TEST(FusedBytesTypedSourceTest, ConvertsATypedSourceWhileMakingTheBytes) {
  auto store = std::make_unique<ProtoStore>();
  store->model->set_ir_version(8);
  onnx::TensorProto* typed = store->model->mutable_graph()->add_initializer();
  typed->set_name("typed");
  typed->set_data_type(static_cast<int>(DataType::kFloat32));
  typed->add_dims(2);
  typed->add_float_data(7.0f);
  typed->add_float_data(8.0f);
  StatusOr<std::unique_ptr<Graph>> graph = Graph::FromModelProto(std::move(store), nullptr);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const Tensor* source = (*graph)->FindValue("typed")->initializer();
  Value* fused =
      (*graph)->AddInitializer("fused", DataType::kFloat32, std::vector<int64_t>{3}, std::string());
  StatusOr<std::shared_ptr<const FusedBytes>> bytes =
      FusedBytes::Make({source}, {1}, 3, DataType::kFloat32);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE((*graph)->SetInitializerBytes(fused, std::move(*bytes)).ok());
  StatusOr<std::span<const std::byte>> made = fused->initializer()->Bytes();
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(made->data()), made->size()),
            Floats({0, 7, 8}));
}

}  // namespace
}  // namespace zerograph
