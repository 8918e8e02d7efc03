// The one table of gradient rules, collected from the op families' files, and the ops that
// carry no gradient.

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "passes/autodiff/gradient_rule.h"

namespace zerograph::autodiff {
namespace {

// "domain\0op" keys: "" and "ai.onnx" both name ONNX's default domain.
std::string Key(std::string_view domain, std::string_view op_type) {
  if (domain == "ai.onnx") domain = "";
  std::string key(domain);
  key += '\0';
  key += op_type;
  return key;
}

const std::unordered_map<std::string, GradientRule>& RuleTable() {
  static const auto* const table = [] {
    auto* rules = new std::unordered_map<std::string, GradientRule>();
    for (auto family : {LinearAlgebraGradientRules, ElementwiseGradientRules, ShapeGradientRules,
                        NormalizationGradientRules, ReductionLossGradientRules}) {
      for (const GradientRuleEntry& entry : family()) {
        rules->emplace(Key(entry.domain, entry.op_type), entry.rule);
      }
    }
    return rules;
  }();
  return *table;
}

}  // namespace

GradientRule FindGradientRule(std::string_view domain, std::string_view op_type) {
  const auto& table = RuleTable();
  auto it = table.find(Key(domain, op_type));
  return it == table.end() ? nullptr : it->second;
}

bool IsNonDifferentiable(std::string_view domain, std::string_view op_type) {
  if (domain != "" && domain != "ai.onnx") return false;
  // Outputs that are integers, booleans or indices, or piecewise constant in the input (their
  // gradient is zero almost everywhere, as PyTorch and ONNX Runtime define it), or random.
  static const auto* const ops = new std::unordered_set<std::string_view>{"Shape",
                                                                          "Size",
                                                                          "Equal",
                                                                          "Less",
                                                                          "LessOrEqual",
                                                                          "Greater",
                                                                          "GreaterOrEqual",
                                                                          "Not",
                                                                          "And",
                                                                          "Or",
                                                                          "Xor",
                                                                          "IsNaN",
                                                                          "IsInf",
                                                                          "ArgMax",
                                                                          "ArgMin",
                                                                          "NonZero",
                                                                          "ConstantOfShape",
                                                                          "Range",
                                                                          "Floor",
                                                                          "Ceil",
                                                                          "Round",
                                                                          "Sign",
                                                                          "EyeLike",
                                                                          "OneHot",
                                                                          "Constant",
                                                                          "RandomNormal",
                                                                          "RandomNormalLike",
                                                                          "RandomUniform",
                                                                          "RandomUniformLike",
                                                                          "Multinomial",
                                                                          "Bernoulli",
                                                                          "BitShift"};
  return ops->contains(op_type);
}

}  // namespace zerograph::autodiff
