#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "passes/autodiff/gradient_check.h"
#include "passes/autodiff/rule_test_graph.h"
#include "zerograph/core/num_elements.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/tensor_type.h"
#include "zerograph/passes/autodiff.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/executor.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::autodiff {
namespace {

using ShapeRulesTest = RuleTest;

// --- Views: the gradient is dY reshaped back.

// Reshape with an inferred dim: dY reshaped back to [2,3,4].
TEST_F(ShapeRulesTest, Reshape) {
  Check(Op("Reshape", {Param("x", {2, 3, 4}), Ints("shape", {2}, {-1, 6})}));
}

// Flatten with the default axis, axis 2 and a negative axis.
TEST_F(ShapeRulesTest, Flatten) {
  for (int64_t axis : {1, 2, -1}) {
    SCOPED_TRACE(axis);
    NewGraph(17);
    Check(Op("Flatten", {Param("x", {2, 3, 4})}, {Attr("axis", axis)}));
  }
}

// Squeeze-13 with axes as an input (one negative), and without axes.
TEST_F(ShapeRulesTest, SqueezeAxesInput) {
  Check(Op("Squeeze", {Param("x", {2, 1, 3, 1}), Ints("axes", {2}, {1, -1})}));
}
TEST_F(ShapeRulesTest, SqueezeAllOnes) { Check(Op("Squeeze", {Param("x", {1, 3, 1})})); }
// Squeeze-11 with axes as an attribute.
TEST_F(ShapeRulesTest, SqueezeAxesAttribute) {
  NewGraph(11);
  Check(Op("Squeeze", {Param("x", {2, 1, 3})}, {Attr("axes", std::vector<int64_t>{1})}));
}

// Unsqueeze-13 with axes as an input (one negative); Unsqueeze-11 with the attribute.
TEST_F(ShapeRulesTest, UnsqueezeAxesInput) {
  Check(Op("Unsqueeze", {Param("x", {2, 3}), Ints("axes", {2}, {0, -1})}));
}
TEST_F(ShapeRulesTest, UnsqueezeAxesAttribute) {
  NewGraph(11);
  Check(Op("Unsqueeze", {Param("x", {2, 3})}, {Attr("axes", std::vector<int64_t>{1})}));
}

// Transpose by a permutation that is not its own inverse, and by the default (reversed) one.
TEST_F(ShapeRulesTest, TransposePerm) {
  Check(Op("Transpose", {Param("x", {2, 3, 4})}, {Attr("perm", std::vector<int64_t>{1, 2, 0})}));
}
TEST_F(ShapeRulesTest, TransposeDefault) { Check(Op("Transpose", {Param("x", {2, 3, 4})})); }

// Expand [3,1] to [2,3,4]: summed over the new and the broadcast axes.
TEST_F(ShapeRulesTest, Expand) {
  Check(Op("Expand", {Param("x", {3, 1}), Ints("shape", {3}, {2, 3, 4})}));
}

// --- Joining and splitting.

// Concat of three inputs of different sizes, along axis 1 and along -1.
TEST_F(ShapeRulesTest, Concat) {
  Check(Op("Concat", {Param("a", {2, 1, 3}), Param("b", {2, 4, 3}), Param("c", {2, 2, 3})},
           {Attr("axis", 1)}));
}
TEST_F(ShapeRulesTest, ConcatNegativeAxis) {
  Check(Op("Concat", {Param("a", {2, 3}), Param("b", {2, 1})}, {Attr("axis", -1)}));
}
// Concat-11: the gradient splits by Split-11's split attribute.
TEST_F(ShapeRulesTest, ConcatOpset11) {
  NewGraph(11);
  Check(Op("Concat", {Param("a", {2, 3}), Param("b", {1, 3})}, {Attr("axis", 0)}));
}
// Concat of one value with itself: both halves' gradients are summed.
TEST_F(ShapeRulesTest, ConcatSameValueTwice) {
  Value* x = Param("x", {2, 3});
  Check(Op("Concat", {x, x}, {Attr("axis", 0)}));
}

// Split-13 with sizes as an input; every output reaches the function.
TEST_F(ShapeRulesTest, SplitSizesInput) {
  const std::string names[] = {"y0", "y1", "y2"};
  Value* const inputs[] = {Param("x", {2, 6}), Ints("split", {3}, {1, 3, 2})};
  Node* split = b().AddNode("Split", inputs, names, {Attr("axis", -1)});
  b().Output(split->output(0));
  b().Output(split->output(1));
  Check(split->output(2));
}
// Split-18 into equal parts by num_outputs; the middle output is unused: its part gets zeros.
TEST_F(ShapeRulesTest, SplitUnusedOutputGetsZeros) {
  const std::string names[] = {"y0", "y1", "y2"};
  Value* const inputs[] = {Param("x", {6, 2})};
  Node* split = b().AddNode("Split", inputs, names, {Attr("axis", 0), Attr("num_outputs", 3)});
  b().Output(split->output(0));
  Check(split->output(2));
}
// Split-11 with sizes as an attribute.
TEST_F(ShapeRulesTest, SplitSizesAttribute) {
  NewGraph(11);
  const std::string names[] = {"y0", "y1"};
  Value* const inputs[] = {Param("x", {5, 2})};
  Node* split = b().AddNode("Split", inputs, names, {Attr("split", std::vector<int64_t>{2, 3})});
  b().Output(split->output(0));
  Check(split->output(1));
}

// --- Slice: the gradient is dY put back in zeros.

// Two axes cut on both sides, step 1 (one starting from the back).
TEST_F(ShapeRulesTest, SliceStepOne) {
  Check(Op("Slice", {Param("x", {4, 5, 3}), Ints("starts", {2}, {1, -4}), Ints("ends", {2}, {3, 4}),
                     Ints("axes", {2}, {0, 1})}));
}
// A prefix along the last axis given as -1, ends past the end clamped.
TEST_F(ShapeRulesTest, SliceNegativeAxisClampedEnd) {
  Check(Op("Slice", {Param("x", {2, 6}), Ints("starts", {1}, {2}), Ints("ends", {1}, {100}),
                     Ints("axes", {1}, {-1})}));
}
// Steps 2 and -1 (reversed) with Gathers.
TEST_F(ShapeRulesTest, SliceSteps) {
  Check(Op("Slice", {Param("x", {5, 4}), Ints("starts", {2}, {0, -1}), Ints("ends", {2}, {5, -100}),
                     Ints("axes", {2}, {0, 1}), Ints("steps", {2}, {2, -1})}));
}
// A negative step of -2 that skips both ends.
TEST_F(ShapeRulesTest, SliceNegativeStrided) {
  Check(Op("Slice", {Param("x", {7}), Ints("starts", {1}, {5}), Ints("ends", {1}, {0}),
                     Ints("axes", {1}, {0}), Ints("steps", {1}, {-2})}));
}
// Slice-9 with attributes and no axes (all leading axes).
TEST_F(ShapeRulesTest, SliceAttributes) {
  NewGraph(9);
  Check(Op("Slice", {Param("x", {4, 5})},
           {Attr("starts", std::vector<int64_t>{1, 0}), Attr("ends", std::vector<int64_t>{3, 2})}));
}

// --- Trilu: the same triangle of dY.

// The upper triangle from the diagonal up (default), and the lower one below diagonal -1, of a
// batch of matrices.
TEST_F(ShapeRulesTest, TriluUpper) { Check(Op("Trilu", {Param("x", {2, 3, 4})})); }
TEST_F(ShapeRulesTest, TriluLowerWithK) {
  Check(Op("Trilu", {Param("x", {3, 4}), Ints("k", {}, {-1})}, {Attr("upper", 0)}));
}

// --- Tile and the gathers.

// Tile by [2, 1, 3]: each copy's gradient is summed.
TEST_F(ShapeRulesTest, Tile) {
  Check(Op("Tile", {Param("x", {2, 3, 2}), Ints("repeats", {3}, {2, 1, 3})}));
}
// Tile at opset 11: ReduceSum-11 takes the repeat axes as an attribute.
TEST_F(ShapeRulesTest, TileOpset11) {
  NewGraph(11);
  Check(Op("Tile", {Param("x", {2, 3}), Ints("repeats", {2}, {3, 2})}));
}
// Tile by ones: the identity.
TEST_F(ShapeRulesTest, TileByOnes) {
  Check(Op("Tile", {Param("x", {2, 3}), Ints("repeats", {2}, {1, 1})}));
}

// An embedding lookup with repeated rows: GatherGrad sums them.
TEST_F(ShapeRulesTest, GatherRows) {
  Check(Op("Gather", {Param("table", {5, 3}), Ints("ids", {2, 3}, {0, 4, 4, 1, 0, 4})}));
}
// Gather along axis 1 with a negative index.
TEST_F(ShapeRulesTest, GatherAxis1NegativeIndex) {
  Check(Op("Gather", {Param("x", {2, 4, 3}), Ints("ids", {3}, {-1, 0, 3})}, {Attr("axis", 1)}));
}
// A scalar index drops the gathered axis.
TEST_F(ShapeRulesTest, GatherScalarIndex) {
  Check(Op("Gather", {Param("x", {4, 3}), Ints("id", {}, {2})}));
}
// A tied embedding: the table is gathered and multiplied with, both gradients summed.
TEST_F(ShapeRulesTest, GatherTiedEmbedding) {
  Value* table = Param("table", {5, 3});
  Value* h = Op("Gather", {table, Ints("ids", {4}, {1, 3, 1, 0})});
  Check(Op("MatMul", {h, Op("Transpose", {table})}));
}

// GatherElements with repeated indices along axis 1: ScatterElements adds them up.
TEST_F(ShapeRulesTest, GatherElements) {
  Check(Op("GatherElements", {Param("x", {2, 3}), Ints("ids", {2, 4}, {0, 2, 2, 1, 1, 1, 0, -1})},
           {Attr("axis", 1)}));
}

// GatherElements' gradient adds with ScatterElements-16: a graph of opset 13 is refused by name.
TEST_F(ShapeRulesTest, GatherElementsRefusedBeforeOpset16) {
  NewGraph(13);
  Value* x = Param("x", {2, 3});
  Value* y = Op("GatherElements", {x, Ints("ids", {2, 1}, {0, 2})}, {Attr("axis", 1)});
  StatusOr<std::vector<Value*>> grads = AppendBackward(
      b().graph(), std::vector<Value*>{y}, std::vector<Value*>{y}, std::vector<Value*>{x});
  ASSERT_FALSE(grads.ok());
  EXPECT_THAT(grads.status().message(), testing::HasSubstr("ScatterElements-16"));
}

// --- Symbolic dims: the shapes the backward needs come from Shape nodes, which the executor
// evaluates while planning. Each graph is differentiated twice, once with its inputs' dims
// declared and once with the batch dims unknown (bound only when the executor plans), and both
// must give the same gradients; the finite-difference tests above check the static ones.

constexpr int64_t kSym = TensorType::kUnknownDim;

// One graph input: its declared dims (kSym where symbolic), the dims it is fed, its values.
struct Feed {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> declared;
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;  // for an int64 input
};
Feed Floats(std::string name, std::vector<int64_t> declared, std::vector<int64_t> dims) {
  return {std::move(name), DataType::kFloat32, std::move(declared), std::move(dims), {}};
}
Feed Int64s(std::string name, std::vector<int64_t> declared, std::vector<int64_t> dims,
            std::vector<int64_t> values) {
  return {std::move(name), DataType::kInt64, std::move(declared), std::move(dims),
          std::move(values)};
}

using Forward = std::function<std::vector<Value*>(GraphBuilder&, std::span<Value* const>)>;

// The gradients of Σ out ⊙ sin(out) over `forward`'s outputs with respect to the float feeds,
// with the feeds declared as `symbolic` says.
std::vector<std::vector<float>> Gradients(const std::vector<Feed>& feeds, const Forward& forward,
                                          bool symbolic) {
  Graph graph;
  GraphBuilder b(graph);
  std::vector<Value*> inputs, wrt;
  runtime::ExecutorOptions options;
  options.bind_state = false;
  for (const Feed& feed : feeds) {
    inputs.push_back(b.Input(feed.name, feed.dtype, symbolic ? feed.declared : feed.dims));
    if (feed.dtype == DataType::kFloat32) wrt.push_back(inputs.back());
    options.input_specs[feed.name] = TensorSpec{feed.dtype, feed.dims};
  }
  const std::vector<Value*> outputs = forward(b, inputs);
  // Seeds of the outputs' own (symbolic) shapes.
  std::vector<Value*> seeds;
  for (Value* output : outputs) seeds.push_back(b.Op("Sin", {output}, "seed"));
  StatusOr<std::vector<Value*>> grads = AppendBackward(graph, outputs, seeds, wrt);
  EXPECT_TRUE(grads.ok()) << grads.status().message();
  if (!grads.ok()) return {};
  for (Value* grad : *grads) {
    EXPECT_NE(grad, nullptr);
    if (grad == nullptr) return {};
    graph.AddOutput(grad);
  }

  runtime::KernelRegistry registry;
  EXPECT_TRUE(runtime::RegisterCpuKernels(registry).ok());
  std::unique_ptr<runtime::Device> device = runtime::CreateCpuDevice();
  std::unique_ptr<runtime::Communicator> comm = runtime::CreateLocalCommunicator();
  auto executor = runtime::Executor::Create(graph, *device, *comm, registry, std::move(options));
  EXPECT_TRUE(executor.ok()) << executor.status().message();
  if (!executor.ok()) return {};
  uint32_t seed = 1;
  for (const Feed& feed : feeds) {
    const std::vector<float> floats =
        RandomValues(static_cast<size_t>(NumElements(feed.dims)), seed++);
    const Status set = feed.dtype == DataType::kFloat32
                           ? (*executor)->SetInput(feed.name, std::as_bytes(std::span(floats)))
                           : (*executor)->SetInput(feed.name, std::as_bytes(std::span(feed.ints)));
    EXPECT_TRUE(set.ok()) << set.message();
  }
  const Status ran = (*executor)->Run(/*step=*/0);
  EXPECT_TRUE(ran.ok()) << ran.message();
  std::vector<std::vector<float>> values;
  for (Value* grad : *grads) {
    StatusOr<std::vector<std::byte>> bytes = (*executor)->Fetch(grad->name());
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    if (!bytes.ok()) return {};
    std::vector<float>& v = values.emplace_back(bytes->size() / sizeof(float));
    std::memcpy(v.data(), bytes->data(), bytes->size());
  }
  return values;
}

void ExpectSymbolicMatchesStatic(const std::vector<Feed>& feeds, const Forward& forward) {
  const std::vector<std::vector<float>> expected = Gradients(feeds, forward, false);
  const std::vector<std::vector<float>> got = Gradients(feeds, forward, true);
  ASSERT_FALSE(expected.empty());
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), expected[i].size()) << "gradient " << i;
    for (size_t e = 0; e < got[i].size(); ++e) {
      EXPECT_FLOAT_EQ(got[i][e], expected[i][e]) << "gradient " << i << "[" << e << "]";
    }
  }
}

// A 1-D int64 initializer.
Value* Ints(GraphBuilder& b, std::vector<int64_t> values) {
  const int64_t dims[] = {static_cast<int64_t>(values.size())};
  return b.graph().AddInitializer(b.graph().UniqueValueName("ints"), DataType::kInt64, dims,
                                  std::as_bytes(std::span(values)));
}

// Reshape and Unsqueeze back to a shape with a symbolic batch.
TEST(SymbolicDimsTest, Reshape) {
  ExpectSymbolicMatchesStatic(
      {Floats("x", {kSym, 3, 4}, {2, 3, 4})}, [](GraphBuilder& b, std::span<Value* const> in) {
        Value* flat = b.Op("Reshape", {in[0], Ints(b, {0, 12})}, "flat");
        return std::vector<Value*>{b.Op("Unsqueeze", {flat, Ints(b, {1})}, "y")};
      });
}

// Reshapes to shapes that Constant nodes hold, as torch.onnx.export writes them: the shapes fold
// through the Constants, so the second Reshape's gradient knows its input's shape.
TEST(SymbolicDimsTest, ReshapeToConstantNodeShapes) {
  ExpectSymbolicMatchesStatic(
      {Floats("x", {kSym, 3, 4}, {2, 3, 4})}, [](GraphBuilder& b, std::span<Value* const> in) {
        auto shape = [&](std::vector<int64_t> dims) {
          return b.Op("Constant", {}, "shape", {Attr("value_ints", std::move(dims))});
        };
        Value* flat = b.Op("Reshape", {in[0], shape({0, 12})}, "flat");
        return std::vector<Value*>{b.Op("Reshape", {flat, shape({0, 4, 3})}, "y")};
      });
}

// Concat along the symbolic axis of two inputs with different symbolic dims: Split's sizes come
// from both inputs' shapes.
TEST(SymbolicDimsTest, ConcatAlongSymbolicAxis) {
  ExpectSymbolicMatchesStatic(
      {Floats("a", {kSym, 3}, {2, 3}), Floats("b", {kSym, 3}, {4, 3})},
      [](GraphBuilder& b, std::span<Value* const> in) {
        return std::vector<Value*>{b.Op("Concat", {in[0], in[1]}, "y", {Attr("axis", 0)})};
      });
}

// Split with an unused output: the zeros take its symbolic batch.
TEST(SymbolicDimsTest, SplitUnusedOutput) {
  ExpectSymbolicMatchesStatic({Floats("x", {kSym, 6}, {3, 6})},
                              [](GraphBuilder& b, std::span<Value* const> in) {
                                const std::string names[] = {"y0", "y1", "y2"};
                                Value* const inputs[] = {in[0], Ints(b, {1, 2, 3})};
                                Node* split = b.AddNode("Split", inputs, names, {Attr("axis", 1)});
                                return std::vector<Value*>{split->output(0), split->output(2)};
                              });
}

// Slices along a static axis of a value with a symbolic batch: the zero blocks take the batch.
TEST(SymbolicDimsTest, Slice) {
  ExpectSymbolicMatchesStatic(
      {Floats("x", {kSym, 7}, {2, 7})}, [](GraphBuilder& b, std::span<Value* const> in) {
        Value* cut = b.Op("Slice", {in[0], Ints(b, {1}), Ints(b, {4}), Ints(b, {1})}, "cut");
        Value* strided = b.Op(
            "Slice", {in[0], Ints(b, {6}), Ints(b, {0}), Ints(b, {-1}), Ints(b, {-2})}, "strided");
        return std::vector<Value*>{cut, strided};
      });
}

// Slices along a symbolic dim, as a language model shifts its logits and labels: [:-1], [1:],
// [-3:], [1:4], [-4:] ending at INT32_MAX, [:-2] starting at INT64_MIN; the zero blocks' lengths
// come from the dim when the graph runs.
TEST(SymbolicDimsTest, SliceAlongSymbolicDim) {
  ExpectSymbolicMatchesStatic(
      {Floats("x", {kSym, kSym}, {2, 6})}, [](GraphBuilder& b, std::span<Value* const> in) {
        constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();
        auto slice = [&](int64_t start, int64_t end) {
          return b.Op("Slice", {in[0], Ints(b, {start}), Ints(b, {end}), Ints(b, {1})}, "y");
        };
        constexpr int64_t kInt32End = std::numeric_limits<int32_t>::max();
        constexpr int64_t kFromStart = std::numeric_limits<int64_t>::min();
        return std::vector<Value*>{slice(0, -1), slice(1, kEnd),       slice(-3, kEnd),
                                   slice(1, 4),  slice(-4, kInt32End), slice(kFromStart, -2)};
      });
}

// Tile of a symbolic batch.
TEST(SymbolicDimsTest, Tile) {
  ExpectSymbolicMatchesStatic(
      {Floats("x", {kSym, 2}, {3, 2})}, [](GraphBuilder& b, std::span<Value* const> in) {
        return std::vector<Value*>{b.Op("Tile", {in[0], Ints(b, {2, 3})}, "y")};
      });
}

// Gather and GatherElements from values with a symbolic batch.
TEST(SymbolicDimsTest, Gathers) {
  ExpectSymbolicMatchesStatic(
      {Floats("x", {kSym, 4}, {3, 4}), Int64s("ids", {kSym, 2}, {3, 2}, {0, 3, 3, 3, 1, 0})},
      [](GraphBuilder& b, std::span<Value* const> in) {
        Value* columns = b.Op("Gather", {in[0], Ints(b, {2, 0, 2})}, "columns", {Attr("axis", 1)});
        Value* picked = b.Op("GatherElements", {in[0], in[1]}, "picked", {Attr("axis", 1)});
        return std::vector<Value*>{columns, picked};
      });
}

}  // namespace
}  // namespace zerograph::autodiff
