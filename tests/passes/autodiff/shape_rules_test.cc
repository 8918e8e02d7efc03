#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passes/autodiff/rule_test_graph.h"

namespace zerograph::autodiff {
namespace {

using ShapeRulesTest = RuleTest;

// --- Views: the gradient is dY reshaped back.

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

// --- Tile and the gathers.

// Tile by [2, 1, 3]: each copy's gradient is summed.
TEST_F(ShapeRulesTest, Tile) {
  Check(Op("Tile", {Param("x", {2, 3, 2}), Ints("repeats", {3}, {2, 1, 3})}));
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

}  // namespace
}  // namespace zerograph::autodiff
