// Contracts of ONNX's ai.onnx.preview.training optimizers, version 1 (onnx/defs/training/defs.cc):
// R and T, then all X, all G and the states, as one variadic list.

#include "ir/contracts/contracts.h"
#include "ir/contracts/optimizer_shape.h"

namespace zerograph::contracts {
namespace {

constexpr DataType kRateTypes[] = {kFloat32, kFloat64};

template <int kNumStates>
StatusOr<std::vector<TensorSpec>> TrainingOptimizerShape(const ShapeContext& ctx) {
  ZG_RETURN_IF_ERROR(CheckScalarInput(ctx, 0, kRateTypes, "R"));
  ZG_RETURN_IF_ERROR(CheckScalarInput(ctx, 1, kInt64Type, "T"));
  return OptimizerOutputs(ctx, {/*num_scalars=*/2, kNumStates});
}

template <int kNumStates>
OpContract TrainingOptimizer(std::string_view name, std::vector<OpAttribute> attributes) {
  return {kTrainingDomain,
          name,
          1,
          {{"R", "T1"}, {"T", "T2"}, {"inputs", "T3", kVariadic}},
          {{"outputs", "T3", kVariadic}},
          std::move(attributes),
          {{"T1", kRateTypes}, {"T2", kInt64Type}, {"T3", kRateTypes}},
          TrainingOptimizerShape<kNumStates>,
          OptimizerLayout{/*num_scalars=*/2, kNumStates}};
}

}  // namespace

Status AddTrainingContracts(OpContracts& contracts) {
  using enum AttributeType;
  ZG_RETURN_IF_ERROR(contracts.Add(
      TrainingOptimizer<2>("Adam", {{"alpha", kFloat, false, 0.9f},
                                    {"beta", kFloat, false, 0.999f},
                                    {"epsilon", kFloat, false, 1e-6f},
                                    {"norm_coefficient", kFloat, false, 0.0f},
                                    {"norm_coefficient_post", kFloat, false, 0.0f}})));
  ZG_RETURN_IF_ERROR(
      contracts.Add(TrainingOptimizer<1>("Momentum", {{"alpha", kFloat, true, {}},
                                                      {"beta", kFloat, true, {}},
                                                      {"mode", AttributeType::kString, true, {}},
                                                      {"norm_coefficient", kFloat, true, {}}})));
  return contracts.Add(
      TrainingOptimizer<1>("Adagrad", {{"decay_factor", kFloat, false, 0.0f},
                                       {"epsilon", kFloat, false, 1e-6f},
                                       {"norm_coefficient", kFloat, false, 0.0f}}));
}

}  // namespace zerograph::contracts
