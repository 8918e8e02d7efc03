#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passes/autodiff/gradient_check.h"
#include "passes/autodiff/rule_test_graph.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::autodiff {
namespace {

using ElementwiseRulesTest = RuleTest;

constexpr auto kFloat64 = static_cast<int64_t>(DataType::kFloat64);
constexpr auto kFloat32 = static_cast<int64_t>(DataType::kFloat32);
constexpr auto kInt64 = static_cast<int64_t>(DataType::kInt64);

// --- One input.

// Identity passes dY through.
TEST_F(ElementwiseRulesTest, Identity) { Check(Op("Identity", {Param("x", {2, 3})})); }

// Neg: -dY.
TEST_F(ElementwiseRulesTest, Neg) { Check(Op("Neg", {Param("x", {2, 3})})); }

// Abs: dY·sign(X), X away from 0.
TEST_F(ElementwiseRulesTest, Abs) { Check(Op("Abs", {AwayFromZero("x", {2, 3})})); }

// Relu through ReluGrad, X away from 0.
TEST_F(ElementwiseRulesTest, Relu) { Check(Op("Relu", {AwayFromZero("x", {3, 4})})); }

// LeakyRelu with the default alpha (0.01) and with alpha 0.2.
TEST_F(ElementwiseRulesTest, LeakyReluDefaultAlpha) {
  Check(Op("LeakyRelu", {AwayFromZero("x", {3, 4})}));
}
TEST_F(ElementwiseRulesTest, LeakyReluAlpha) {
  Check(Op("LeakyRelu", {AwayFromZero("x", {3, 4})}, {Attr("alpha", 0.2)}));
}

// Sigmoid through SigmoidGrad; Tanh through TanhGrad.
TEST_F(ElementwiseRulesTest, Sigmoid) { Check(Op("Sigmoid", {Param("x", {3, 4}, -3, 3)})); }
TEST_F(ElementwiseRulesTest, Tanh) { Check(Op("Tanh", {Param("x", {3, 4}, -2, 2)})); }

// Exp: dY·Y.
TEST_F(ElementwiseRulesTest, Exp) { Check(Op("Exp", {Param("x", {2, 3})})); }

// Log and Sqrt of positive values.
TEST_F(ElementwiseRulesTest, Log) { Check(Op("Log", {Param("x", {2, 3}, 0.5, 2)})); }
TEST_F(ElementwiseRulesTest, Sqrt) { Check(Op("Sqrt", {Param("x", {2, 3}, 0.5, 2)})); }

// Reciprocal on both sides of 0.
TEST_F(ElementwiseRulesTest, Reciprocal) {
  Check(Op("Reciprocal", {AwayFromZero("x", {2, 3}, 0.5, 2)}));
}

TEST_F(ElementwiseRulesTest, Erf) { Check(Op("Erf", {Param("x", {3, 4}, -2, 2)})); }

// Sin's derivative through Sin(x + π/2).
TEST_F(ElementwiseRulesTest, Sin) { Check(Op("Sin", {Param("x", {3, 4}, -3, 3)})); }

// Gelu-20's exact form through GeluGrad (default and explicit "none"), the tanh form through
// FastGeluGrad.
TEST_F(ElementwiseRulesTest, GeluExact) {
  NewGraph(20);
  Check(Op("Gelu", {Param("x", {3, 4}, -3, 3)}));
}
TEST_F(ElementwiseRulesTest, GeluNone) {
  NewGraph(20);
  Check(Op("Gelu", {Param("x", {3, 4}, -3, 3)}, {Attr("approximate", "none")}));
}
TEST_F(ElementwiseRulesTest, GeluTanh) {
  NewGraph(20);
  Check(Op("Gelu", {Param("x", {3, 4}, -3, 3)}, {Attr("approximate", "tanh")}));
}

// Clip-6 (opset 10) with bounds as attributes; X spans both bounds, away from them.
TEST_F(ElementwiseRulesTest, ClipAttributes) {
  NewGraph(10);
  Check(Op("Clip", {AwayFromZero("x", {4, 5}, 0.1, 0.9)}, {Attr("min", -0.5), Attr("max", 0.5)}),
        Options({}, 1e-3f));
}

// Clip-11 with bounds as inputs, which get no gradient.
TEST_F(ElementwiseRulesTest, ClipInputs) {
  Value* x = AwayFromZero("x", {4, 5}, 0.1, 0.9);
  Value* lo = b().Initializer("lo", {}, std::vector<float>{-0.5f});
  Value* hi = b().Initializer("hi", {}, std::vector<float>{0.5f});
  Check(Op("Clip", {x, lo, hi}), Options({"lo", "hi"}, 1e-3f));
}

// Clip-11 with only a lower bound.
TEST_F(ElementwiseRulesTest, ClipMinOnly) {
  Value* lo = b().Initializer("lo", {}, std::vector<float>{-0.5f});
  Check(Op("Clip", {AwayFromZero("x", {4, 5}, 0.1, 0.9), lo}), Options({"lo"}, 1e-3f));
}

// Cast to float64 and back: the gradient is cast back at each step.
TEST_F(ElementwiseRulesTest, CastRoundTrip) {
  Value* wide = Op("Cast", {Param("x", {2, 3})}, {Attr("to", kFloat64)});
  Check(Op("Cast", {wide}, {Attr("to", kFloat32)}));
}

// A path through an integer Cast carries no gradient: d(x + float(int(x)))/dx = 1.
TEST_F(ElementwiseRulesTest, IntegerCastCarriesNoGradient) {
  Value* x = Param("x", {2, 3}, 0.2, 0.8);
  Value* truncated = Op("Cast", {Op("Cast", {x}, {Attr("to", kInt64)})}, {Attr("to", kFloat32)});
  Check(Op("Add", {x, truncated}));
}

// CastLike: the gradient goes to the input, none to target_type.
TEST_F(ElementwiseRulesTest, CastLike) {
  Value* like = b().Initializer("like", {1}, std::vector<float>{0.0f});
  Check(Op("CastLike", {Param("x", {2, 3}), like}), Options({"like"}));
}

// Dropout-12 in training mode with its mask output: DropoutGrad with the mask.
TEST_F(ElementwiseRulesTest, DropoutTrainingWithMask) {
  Value* ratio = b().Initializer("ratio", {}, std::vector<float>{0.5f});
  Value* training = Bools("training", {}, {true});
  const std::string names[] = {"y", "mask"};
  Value* const inputs[] = {Param("x", {4, 8}), ratio, training};
  Node* dropout = b().AddNode("Dropout", inputs, names, {Attr("seed", 7)});
  Check(dropout->output(0), Options({"ratio"}));
}

// Dropout-12 in training mode without a mask output (nor a seed): the backward draws the
// forward mask again.
TEST_F(ElementwiseRulesTest, DropoutTrainingWithoutMask) {
  Value* ratio = b().Initializer("ratio", {}, std::vector<float>{0.3f});
  Check(Op("Dropout", {Param("x", {4, 8}), ratio, Bools("training", {}, {true})}),
        Options({"ratio"}));
}

// Dropout-12 with training_mode false: DropoutGrad passes dY through.
TEST_F(ElementwiseRulesTest, DropoutTrainingModeFalse) {
  const std::string names[] = {"y", "mask"};
  Value* const inputs[] = {Param("x", {4, 8}), nullptr, Bools("training", {}, {false})};
  Check(b().AddNode("Dropout", inputs, names)->output(0));
}

// Dropout-12 without training_mode, and Dropout-7, run as the identity.
TEST_F(ElementwiseRulesTest, DropoutInference) { Check(Op("Dropout", {Param("x", {4, 8})})); }
TEST_F(ElementwiseRulesTest, DropoutBeforeOpset12) {
  NewGraph(7);
  Check(Op("Dropout", {Param("x", {4, 8})}, {Attr("ratio", 0.5)}));
}

// com.microsoft Scale, multiplying and dividing.
TEST_F(ElementwiseRulesTest, Scale) {
  Value* scale = b().Initializer("scale", {1}, std::vector<float>{2.5f});
  Check(Op({kMicrosoftDomain, "Scale"}, {Param("x", {2, 3}), scale}), Options({"scale"}));
}
TEST_F(ElementwiseRulesTest, ScaleDown) {
  Value* scale = b().Initializer("scale", {1}, std::vector<float>{2.5f});
  Check(Op({kMicrosoftDomain, "Scale"}, {Param("x", {2, 3}), scale}, {Attr("scale_down", 1)}),
        Options({"scale"}));
}

// --- Arithmetic and broadcasting.

// Add of equal shapes: dY to both, no reduction.
TEST_F(ElementwiseRulesTest, AddSameShape) {
  Check(Op("Add", {Param("a", {2, 3}), Param("b", {2, 3})}));
}
// [3,1] + [1,4]: each operand sums over the other's axis.
TEST_F(ElementwiseRulesTest, AddBroadcastBothWays) {
  Check(Op("Add", {Param("a", {3, 1}), Param("b", {1, 4})}));
}
// [2,3,4] + [4]: the bias sums over the leading axes.
TEST_F(ElementwiseRulesTest, AddBias) {
  Check(Op("Add", {Param("a", {2, 3, 4}), Param("b", {4})}));
}
// A scalar operand sums everything.
TEST_F(ElementwiseRulesTest, AddScalar) { Check(Op("Add", {Param("a", {}), Param("b", {2, 3})})); }

// Sub: the subtrahend's gradient negated after its reduction.
TEST_F(ElementwiseRulesTest, SubBroadcastBothWays) {
  Check(Op("Sub", {Param("a", {3, 1}), Param("b", {2, 1, 4})}));
}

// Mul: each operand gets dY times the other, reduced to its shape.
TEST_F(ElementwiseRulesTest, MulBroadcastBothWays) {
  Check(Op("Mul", {Param("a", {3, 1}), Param("b", {2, 1, 4})}));
}
// x·x: one node reading a value twice.
TEST_F(ElementwiseRulesTest, MulSquare) {
  Value* x = Param("x", {2, 3});
  Check(Op("Mul", {x, x}));
}

// Div through DivGrad, which sums both gradients over their broadcast axes.
TEST_F(ElementwiseRulesTest, DivBroadcastBothWays) {
  Check(Op("Div", {Param("a", {3, 1}), AwayFromZero("b", {2, 1, 4}, 0.5, 2)}));
}
// Only the numerator trained: DivGrad with dA alone.
TEST_F(ElementwiseRulesTest, DivNumeratorOnly) {
  Check(Op("Div", {Param("a", {2, 3}), AwayFromZero("b", {3}, 0.5, 2)}), Options({"b"}));
}
// Only the denominator trained.
TEST_F(ElementwiseRulesTest, DivDenominatorOnly) {
  Check(Op("Div", {Param("a", {2, 3}), AwayFromZero("b", {3}, 0.5, 2)}), Options({"a"}));
}

// Pow with both operands trained, the exponent broadcast.
TEST_F(ElementwiseRulesTest, PowBothOperands) {
  Check(Op("Pow", {Param("x", {2, 3}, 0.5, 2), Param("y", {3}, -1.5, 2.5)}));
}
// Pow-12 with an integer exponent: only the base gets a gradient.
TEST_F(ElementwiseRulesTest, PowIntegerExponent) {
  Check(Op("Pow", {Param("x", {2, 3}), Ints("y", {}, {3})}));
}
// Constant exponents fold into the gradient: 2 (a decomposed LayerNorm's square) and 0.5.
TEST_F(ElementwiseRulesTest, PowConstantSquare) {
  Value* two = b().Initializer("two", {}, std::vector<float>{2.0f});
  Check(Op("Pow", {Param("x", {2, 3}), two}), Options({"two"}));
}
TEST_F(ElementwiseRulesTest, PowConstantSquareRoot) {
  Value* half = b().Initializer("half", {}, std::vector<float>{0.5f});
  Check(Op("Pow", {Param("x", {2, 3}, 0.5, 2), half}), Options({"half"}));
}
// A non-scalar exponent that is not trained: the general form.
TEST_F(ElementwiseRulesTest, PowConstantTensorExponent) {
  Check(Op("Pow", {Param("x", {2, 3}, 0.5, 2), Param("y", {3})}), Options({"y"}));
}

// Sum of three operands of different shapes.
TEST_F(ElementwiseRulesTest, SumBroadcast) {
  Check(Op("Sum", {Param("a", {2, 3}), Param("b", {3}), Param("c", {2, 1})}));
}
// Mean: each operand gets dY/3.
TEST_F(ElementwiseRulesTest, MeanBroadcast) {
  Check(Op("Mean", {Param("a", {2, 3}), Param("b", {3}), Param("c", {2, 1})}));
}

// Max and Min of two broadcast operands (distinct values: no ties).
TEST_F(ElementwiseRulesTest, MaxBroadcast) {
  Check(Op("Max", {Param("a", {2, 3}), Param("b", {3})}));
}
TEST_F(ElementwiseRulesTest, MinBroadcast) {
  Check(Op("Min", {Param("a", {2, 3}), Param("b", {2, 1})}));
}
// Three operands: the middle one wins where it is largest.
TEST_F(ElementwiseRulesTest, MaxThreeOperands) {
  Check(Op("Max", {Param("a", {4, 5}), Param("b", {4, 5}), Param("c", {5})}));
}
// A tie everywhere: max(x, x) = x, so the first operand takes dY and the second none.
TEST_F(ElementwiseRulesTest, MaxTieGoesToFirst) {
  Value* x = Param("x", {2, 3});
  Check(Op("Max", {x, x}));
}
// One operand: the identity.
TEST_F(ElementwiseRulesTest, MinOneOperand) { Check(Op("Min", {Param("x", {2, 3})})); }

// A leaky Relu written with Where on a comparison of the trained value: the condition carries no
// gradient, both branches do.
TEST_F(ElementwiseRulesTest, WhereOnComparison) {
  Value* x = AwayFromZero("x", {3, 4});
  Value* positive = Op("Greater", {x, b().Initializer("zero", {}, std::vector<float>{0.0f})});
  Value* leak = Op("Mul", {x, b().Initializer("slope", {}, std::vector<float>{0.1f})});
  Check(Op("Where", {positive, x, leak}), Options({"zero", "slope"}));
}

// Where: X gets dY where the condition holds, Y elsewhere; both broadcast.
TEST_F(ElementwiseRulesTest, WhereBroadcast) {
  Value* condition = Bools("c", {2, 3}, {true, false, true, false, false, true});
  Check(Op("Where", {condition, Param("x", {3}), Param("y", {2, 1})}));
}

}  // namespace
}  // namespace zerograph::autodiff
