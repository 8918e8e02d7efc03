#include "zerograph/ir/optimizer_signature.h"

#include "zerograph/ir/node.h"
#include "zerograph/ir/op_contract.h"

namespace zerograph {
namespace {

OptimizerLayout Layout(const OptimizerSignature& signature) {
  return {signature.num_scalars, signature.num_states, signature.optional_control};
}

}  // namespace

std::optional<OptimizerSignature> FindOptimizerSignature(const Node& node) {
  if (node.optimizer_index() < 0) return std::nullopt;
  const OpContracts::Optimizer& optimizer =
      OpContracts::Get().optimizers()[static_cast<size_t>(node.optimizer_index())];
  return OptimizerSignature{optimizer.domain, optimizer.name, optimizer.layout.num_scalars,
                            optimizer.layout.num_states, optimizer.layout.optional_control};
}

StatusOr<std::vector<OptimizerSlot>> OptimizerSlots(const Node& node,
                                                    const OptimizerSignature& signature) {
  const std::optional<size_t> params =
      Layout(signature).NumParams(node.num_inputs(), node.num_outputs());
  ZG_RETURN_IF_NOT(params.has_value(), "optimizer node '", node.name(), "' (", node.op_type(),
                   ") has ", node.num_inputs(), " inputs and ", node.num_outputs(),
                   " outputs, which do not fit ", signature.num_scalars, " scalars and ",
                   2 + signature.num_states, " inputs per parameter");
  const size_t n = *params;
  const size_t scalars = static_cast<size_t>(signature.num_scalars);
  std::vector<OptimizerSlot> slots(n);
  for (size_t i = 0; i < n; ++i) {
    OptimizerSlot& slot = slots[i];
    slot.param = node.input(scalars + i);
    slot.grad = node.input(scalars + n + i);
    slot.new_param = node.output(i);
    slot.states.reserve(static_cast<size_t>(signature.num_states));
    slot.new_states.reserve(static_cast<size_t>(signature.num_states));
    for (int s = 0; s < signature.num_states; ++s) {
      slot.states.push_back(node.input(scalars + (2 + static_cast<size_t>(s)) * n + i));
      slot.new_states.push_back(node.output((1 + static_cast<size_t>(s)) * n + i));
    }
    ZG_RETURN_IF_NOT(slot.param != nullptr && slot.grad != nullptr && slot.new_param != nullptr,
                     "optimizer node '", node.name(),
                     "' omits the parameter, gradient or output of slot ", i);
  }
  return slots;
}

Value* OptimizerControl(const Node& node, const OptimizerSignature& signature) {
  const bool has = Layout(signature).HasControl(node.num_inputs(), node.num_outputs());
  return has ? node.input(node.num_inputs() - 1) : nullptr;
}

}  // namespace zerograph
