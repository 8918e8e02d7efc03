#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "passes/autodiff/gradient_check.h"
#include "zerograph/core/num_elements.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"

namespace zerograph::autodiff {
namespace {

class LinearAlgebraRulesTest : public ::testing::Test {
 protected:
  LinearAlgebraRulesTest() : graph_(std::make_unique<Graph>()), b_(*graph_) {}

  // A float initializer of random values (a new seed each).
  Value* Param(std::string_view name, std::vector<int64_t> dims) {
    return b_.Initializer(name, dims,
                          RandomValues(static_cast<size_t>(NumElements(dims)), seed_++));
  }
  void Check(Value* output) {
    b_.Output(output);
    ExpectGradientsMatchFiniteDifferences(std::move(graph_));
  }
  void CheckMatMul(std::vector<int64_t> a, std::vector<int64_t> b) {
    Check(b_.Op("MatMul", {Param("a", a), Param("b", b)}, "y"));
  }

  std::unique_ptr<Graph> graph_;
  GraphBuilder b_;
  uint32_t seed_ = 10;
};

// [3,4]·[4,5]: dA = dY·Bᵀ, dB = Aᵀ·dY.
TEST_F(LinearAlgebraRulesTest, MatMul2D) { CheckMatMul({3, 4}, {4, 5}); }

// A batch against a matrix: B's gradient sums over the batch.
TEST_F(LinearAlgebraRulesTest, MatMulBatchedTimesMatrix) { CheckMatMul({2, 3, 4}, {4, 5}); }

// Two batch dims against a matrix: B's gradient folds both into the rows of one product.
TEST_F(LinearAlgebraRulesTest, MatMul4DTimesMatrix) { CheckMatMul({2, 2, 3, 4}, {4, 5}); }

// Batch dims broadcast both ways ([2,1] with [3]): each operand sums over the other's.
TEST_F(LinearAlgebraRulesTest, MatMulBatchesBroadcastBothWays) {
  CheckMatMul({2, 1, 3, 4}, {3, 4, 2});
}

// A row vector: Y lacks the M axis.
TEST_F(LinearAlgebraRulesTest, MatMulVectorTimesMatrix) { CheckMatMul({4}, {4, 5}); }

// A column vector against a batch: Y lacks the N axis; the vector's gradient sums the batch.
TEST_F(LinearAlgebraRulesTest, MatMulBatchTimesVector) { CheckMatMul({2, 3, 4}, {4}); }

// A dot product: Y is a scalar.
TEST_F(LinearAlgebraRulesTest, MatMulDotProduct) { CheckMatMul({4}, {4}); }

// Gemm with every transpose combination, alpha and beta, and C broadcast along rows.
TEST_F(LinearAlgebraRulesTest, GemmTransposesAlphaBeta) {
  for (int64_t trans_a : {0, 1}) {
    for (int64_t trans_b : {0, 1}) {
      SCOPED_TRACE(testing::Message() << "transA " << trans_a << " transB " << trans_b);
      graph_ = std::make_unique<Graph>();
      GraphBuilder b(*graph_);
      Value* a =
          b.Initializer("a", trans_a ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4},
                        RandomValues(12, 1));
      Value* bm =
          b.Initializer("b", trans_b ? std::vector<int64_t>{5, 4} : std::vector<int64_t>{4, 5},
                        RandomValues(20, 2));
      Value* c = b.Initializer("c", {5}, RandomValues(5, 3));
      b.Output(b.Op("Gemm", {a, bm, c}, "y",
                    {Attr("transA", trans_a), Attr("transB", trans_b), Attr("alpha", 0.5),
                     Attr("beta", 2.0)}));
      ExpectGradientsMatchFiniteDifferences(std::move(graph_));
    }
  }
}

// C of [M,1] sums over columns; C of the full shape takes dY as it is.
TEST_F(LinearAlgebraRulesTest, GemmBiasShapes) {
  for (std::vector<int64_t> c_dims :
       {std::vector<int64_t>{3, 1}, std::vector<int64_t>{3, 5}, std::vector<int64_t>{1}}) {
    graph_ = std::make_unique<Graph>();
    GraphBuilder b(*graph_);
    Value* c =
        b.Initializer("c", c_dims, RandomValues(static_cast<size_t>(NumElements(c_dims)), 3));
    b.Output(b.Op("Gemm",
                  {b.Initializer("a", {3, 4}, RandomValues(12, 1)),
                   b.Initializer("b", {4, 5}, RandomValues(20, 2)), c},
                  "y"));
    ExpectGradientsMatchFiniteDifferences(std::move(graph_));
  }
}

// Gemm without C.
TEST_F(LinearAlgebraRulesTest, GemmWithoutBias) {
  Check(b_.Op("Gemm", {Param("a", {3, 4}), Param("b", {5, 4})}, "y", {Attr("transB", 1)}));
}

// A read by two MatMuls feeding two outputs: its gradient is the sum of both.
TEST_F(LinearAlgebraRulesTest, ValueReadTwiceSumsGradients) {
  Value* a = Param("a", {3, 4});
  b_.Output(b_.Op("MatMul", {a, Param("b", {4, 2})}, "y"));
  Check(b_.Op("MatMul", {a, Param("c", {4, 5})}, "z"));
}

// A·A: one node reading the same value as both operands.
TEST_F(LinearAlgebraRulesTest, SameValueAsBothOperands) {
  Value* a = Param("a", {3, 3});
  Check(b_.Op("MatMul", {a, a}, "y"));
}

// A chain: the gradient flows through an intermediate value into the first MatMul.
TEST_F(LinearAlgebraRulesTest, ChainOfProducts) {
  Value* h = b_.Op("MatMul", {Param("x", {2, 3}), Param("w1", {3, 4})}, "h");
  Check(b_.Op("Gemm", {h, Param("w2", {4, 2}), Param("b2", {2})}, "y"));
}

// Before opset 13 Unsqueeze, Squeeze and ReduceSum take their axes as an attribute.
TEST_F(LinearAlgebraRulesTest, VectorOperandsAtOpset11) {
  graph_ = std::make_unique<Graph>();
  GraphBuilder b(*graph_, /*default_opset=*/11);
  Value* a = b.Initializer("a", {2, 3, 4}, RandomValues(24, 1));
  b.Output(b.Op("MatMul", {b.Initializer("v", {3}, RandomValues(3, 2)), a}, "y"));
  b.Output(b.Op("MatMul", {a, b.Initializer("w", {4}, RandomValues(4, 3))}, "z"));
  ExpectGradientsMatchFiniteDifferences(std::move(graph_));
}

}  // namespace
}  // namespace zerograph::autodiff
