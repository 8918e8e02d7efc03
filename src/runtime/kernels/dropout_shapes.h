#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_DROPOUT_SHAPES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_DROPOUT_SHAPES_H_

// What Dropout's and DropoutGrad's kernels share on every device: the seed, the ratio and the
// training mode across opsets (attribute before 12; optional host inputs from 12, where the
// default is inference: the identity with a mask all true).

#include <cstdint>
#include <variant>

#include "runtime/kernels/dropout_mask.h"
#include "runtime/kernels/kernel_util.h"
#include "zerograph/core/hash.h"
#include "zerograph/ir/value.h"

namespace zerograph::runtime {

// One run's dropout: `training` false (or ratio 0) is the identity.
struct DropoutRun {
  bool training = false;
  double ratio = 0.5;
};

// The float value of a scalar host tensor (ratio: fp16, fp32, fp64, bf16).
inline StatusOr<double> ReadHostScalar(const DeviceTensor& tensor, std::string_view what) {
  ZG_RETURN_IF_NOT(tensor.numel() == 1 && tensor.device().host_accessible(), what,
                   " must be one value in host memory, got ", tensor.ToString());
  return DispatchDtypes(FloatDtypes{}, tensor.dtype(), [&](auto tag) -> StatusOr<double> {
    return static_cast<double>(Load(*tensor.data_as<const decltype(tag)>()));
  });
}

// Reads ratio (input `ratio_input`) and training_mode (the next input) when present.
inline StatusOr<DropoutRun> ReadDropoutRun(const KernelContext& ctx, size_t ratio_input,
                                           DropoutRun run) {
  if (ctx.inputs.size() > ratio_input && ctx.inputs[ratio_input] != nullptr) {
    ZG_ASSIGN_OR_RETURN(run.ratio, ReadHostScalar(*ctx.inputs[ratio_input], "ratio"));
  }
  if (ctx.inputs.size() > ratio_input + 1 && ctx.inputs[ratio_input + 1] != nullptr) {
    const DeviceTensor& mode = *ctx.inputs[ratio_input + 1];
    ZG_RETURN_IF_NOT(mode.numel() == 1 && mode.device().host_accessible(),
                     "training_mode must be one bool in host memory, got ", mode.ToString());
    run.training = *mode.data_as<const bool>();
  }
  ZG_RETURN_IF_NOT(run.ratio >= 0 && run.ratio < 1, "ratio ", run.ratio, " is outside [0, 1)");
  return run;
}

class DropoutKernelBase : public OpKernel {
 public:
  struct Attrs {
    // Dropout before opset 12: no training mode (the identity) and the ratio attribute.
    bool legacy = false;
    double ratio = 0.5;
    // The seed attribute; without one, a hash of the node's output name (unique in its graph,
    // where node names may be empty), so that two dropouts of one graph draw different masks.
    uint64_t seed = 0;
  };
  static StatusOr<Attrs> ParseAttrs(const KernelInfo& info) {
    Attrs attrs;
    attrs.legacy = info.contract->since_version < 12;
    if (attrs.legacy) {
      // The default of this version's contract: ContractFloat would take the newest version's,
      // which has no ratio attribute.
      const OpAttribute* ratio = info.contract->FindAttribute("ratio");
      attrs.ratio = info.node->GetFloat("ratio").value_or(std::get<float>(ratio->default_value));
    } else if (info.node->HasAttribute("seed")) {
      ZG_ASSIGN_OR_RETURN(int64_t seed, ContractInt(*info.node, "seed"));
      attrs.seed = static_cast<uint64_t>(seed);
    } else {
      attrs.seed = Fnv1a64(info.node->output(0)->name());
    }
    return attrs;
  }
  DropoutKernelBase(const KernelInfo& info, Attrs attrs) : OpKernel(info), attrs_(attrs) {}

 protected:
  // The output may overwrite the data: each element is read before it is written.
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    outputs[0].in_place_input = 0;
    return Status::Ok();
  }
  StatusOr<DropoutRun> RunOf(const KernelContext& ctx) const {
    if (attrs_.legacy) return DropoutRun{false, attrs_.ratio};
    return ReadDropoutRun(ctx, 1, DropoutRun{});
  }
  uint64_t KeyOf(const KernelContext& ctx) const {
    return DropoutKey(attrs_.seed, ctx.step, rank());
  }

  const Attrs attrs_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_DROPOUT_SHAPES_H_
