#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_COLLECTIVES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_COLLECTIVES_H_

// org.zerograph collectives, run through the communicator in the kernel context (docs/formats.md),
// the same kernels on every device (MPI on CPU, NCCL on CUDA is the communicator's business):
//   ReduceScatter(fused[N·S]) -> shard[S]      nranks, reduce_op (sum | avg), group
//   AllGather(shard[S], deps...) -> fused[N·S] nranks, group, axis (0); deps only order it
//   AllReduce(x) -> y                          reduce_op (default sum), group
// `nranks`, when present, must match the ranks running the graph. `group` is accepted and
// ignored: every collective spans all ranks (one data-parallel group).

#include <memory>
#include <string>

#include "runtime/kernels/kernel_util.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::runtime {

inline Status CheckCommunicator(const KernelContext& ctx, int nranks) {
  ZG_RETURN_IF_NOT(ctx.comm != nullptr, "a collective run without a communicator");
  ZG_RETURN_IF_NOT(ctx.comm->size() == nranks, "the kernel was made for ", nranks,
                   " ranks, the communicator has ", ctx.comm->size());
  return Status::Ok();
}

inline StatusOr<ReduceOp> ReduceOpAttr(const Node& node) {
  ZG_ASSIGN_OR_RETURN(std::string name, ContractString(node, "reduce_op"));
  return ParseReduceOp(name);
}

class ReduceScatterKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_RETURN_IF_ERROR(CheckNranksAttribute(info));
    ZG_ASSIGN_OR_RETURN(ReduceOp op, ReduceOpAttr(*info.node));
    return std::unique_ptr<OpKernel>(new ReduceScatterKernel(info, op));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_RETURN_IF_ERROR(CheckCommunicator(ctx, nranks()));
    return ctx.comm->ReduceScatter(*ctx.inputs[0], *ctx.outputs[0], op_, *ctx.stream);
  }

 private:
  ReduceScatterKernel(const KernelInfo& info, ReduceOp op) : OpKernel(info), op_(op) {}
  ReduceOp op_;
};

class AllGatherKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_RETURN_IF_ERROR(CheckNranksAttribute(info));
    ZG_ASSIGN_OR_RETURN(int64_t axis, ContractInt(*info.node, "axis"));
    ZG_RETURN_IF_NOT(axis == 0, "axis ", axis, " (only 0 is supported)");
    return MakeKernel<AllGatherKernel>(info);
  }
  using OpKernel::OpKernel;

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_RETURN_IF_ERROR(CheckCommunicator(ctx, nranks()));
    return ctx.comm->AllGather(*ctx.inputs[0], *ctx.outputs[0], *ctx.stream);
  }
};

class AllReduceKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_RETURN_IF_ERROR(CheckNranksAttribute(info));
    ZG_ASSIGN_OR_RETURN(ReduceOp op, ReduceOpAttr(*info.node));
    return std::unique_ptr<OpKernel>(new AllReduceKernel(info, op));
  }

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    outputs[0].in_place_input = 0;
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_RETURN_IF_ERROR(CheckCommunicator(ctx, nranks()));
    return ctx.comm->AllReduce(*ctx.inputs[0], *ctx.outputs[0], op_, *ctx.stream);
  }

 private:
  AllReduceKernel(const KernelInfo& info, ReduceOp op) : OpKernel(info), op_(op) {}
  ReduceOp op_;
};

// Registers the collectives for `device`: they only call the communicator, which knows the
// device's memory and streams.
inline Status RegisterCollectiveKernels(KernelRegistry& registry, DeviceType device) {
  const std::string domain(kZerographDomain);
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "ReduceScatter",
                                        device,
                                        GradientDtypes::Vector(),
                                        0,
                                        {},
                                        &ReduceScatterKernel::Create}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {domain, "AllGather", device, GradientDtypes::Vector(), 0, {}, &AllGatherKernel::Create}));
  ZG_RETURN_IF_ERROR(registry.Register(
      {domain, "AllReduce", device, NumericDtypes::Vector(), 0, {}, &AllReduceKernel::Create}));
  return Status::Ok();
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_COLLECTIVES_H_
