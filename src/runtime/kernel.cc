#include "zerograph/runtime/kernel.h"

#include <algorithm>
#include <string>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/node.h"

namespace zerograph::runtime {

OpKernel::OpKernel(const KernelInfo& info)
    : node_name_(info.node->name()),
      op_type_(info.node->op_type()),
      device_(info.device),
      dtype_(info.dtype),
      rank_(info.rank),
      nranks_(info.nranks),
      num_inputs_(info.node->num_inputs()),
      num_outputs_(info.node->num_outputs()),
      host_inputs_(info.host_inputs),
      contract_(info.contract) {}

std::string OpKernel::Describe() const {
  return StrCat("node '", node_name_, "' (", op_type_, ")");
}

StatusOr<std::vector<OutputInfo>> OpKernel::InferOutputs(const ShapeContext& ctx) const {
  if (ctx.inputs.size() != num_inputs_) {
    return InvalidArgumentError(StrCat(Describe(), ": shape inference got ", ctx.inputs.size(),
                                       " inputs, the node has ", num_inputs_));
  }
  ZG_RET_CHECK(contract_ != nullptr, Describe(), ": kernel made without an op contract");
  StatusOr<std::vector<TensorSpec>> specs = contract_->infer(ctx);
  if (!specs.ok()) return std::move(specs).status().WithContext(Describe());
  ZG_RET_CHECK(specs->size() == num_outputs_, Describe(), " inferred ", specs->size(),
               " outputs for ", num_outputs_);
  std::vector<OutputInfo> outputs;
  outputs.reserve(specs->size());
  for (TensorSpec& spec : *specs) outputs.emplace_back(std::move(spec));
  ZG_RETURN_IF_ERROR(PlanOutputs(ctx, outputs).WithContext(Describe()));
  return outputs;
}

Status OpKernel::PlanOutputs(const ShapeContext&, std::span<OutputInfo>) const {
  return Status::Ok();
}

Status OpKernel::Compute(const KernelContext& ctx) const {
  ZG_RET_CHECK(ctx.inputs.size() == num_inputs_ && ctx.outputs.size() == num_outputs_, Describe(),
               " run with ", ctx.inputs.size(), " inputs and ", ctx.outputs.size(), " outputs");
  ZG_RET_CHECK(ctx.stream != nullptr, Describe(), " run without a stream");
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const DeviceTensor* t = ctx.inputs[i];
    if (t == nullptr) continue;
    const bool host = std::find(host_inputs_.begin(), host_inputs_.end(), static_cast<int>(i)) !=
                      host_inputs_.end();
    const bool placed = host ? t->device().host_accessible() : t->device().type() == device_;
    ZG_RET_CHECK(!t->empty() && t->is_contiguous() && placed, Describe(), ": input ", i, " ",
                 t->ToString(), " is empty, strided or in the wrong memory");
  }
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    const DeviceTensor* t = ctx.outputs[i];
    // An omitted optional output (DivGrad's dA or dB) is null: the kernel skips it.
    if (t == nullptr && contract_ != nullptr && i < contract_->outputs.size() &&
        contract_->outputs[i].arity == OpFormal::Arity::kOptional) {
      continue;
    }
    ZG_RET_CHECK(t != nullptr && !t->empty() && t->is_contiguous() && t->device().type() == device_,
                 Describe(), ": an output is missing, strided or on another device");
  }
  return ComputeImpl(ctx).WithContext(Describe());
}

}  // namespace zerograph::runtime
