#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_COLLECTIVES_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_COLLECTIVES_H_

// org.zerograph collectives, run through the communicator in the kernel context (DESIGN §4), the
// same kernels on every device (MPI on CPU, NCCL on CUDA is the communicator's business):
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

inline StatusOr<ReduceOp> ReduceOpAttr(const Node& node, std::string_view default_op) {
  ZG_ASSIGN_OR_RETURN(std::string name, StringAttr(node, "reduce_op", default_op));
  return ParseReduceOp(name);
}

class ReduceScatterKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_RETURN_IF_ERROR(CheckNranksAttribute(info));
    ZG_ASSIGN_OR_RETURN(ReduceOp op, ReduceOpAttr(*info.node, "sum"));
    return std::unique_ptr<OpKernel>(new ReduceScatterKernel(info, op));
  }

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 1, "expects 1 input, got ", ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* fused, RequiredInput(ctx, 0));
    const int64_t total = NumElements(fused->shape);
    ZG_RETURN_IF_NOT(total % nranks() == 0, "the fused buffer's ", total,
                     " elements do not split into ", nranks(), " equal shards");
    return std::vector<OutputInfo>{OutputInfo{TensorSpec{fused->dtype, {total / nranks()}}}};
  }

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
    ZG_ASSIGN_OR_RETURN(int64_t axis, IntAttr(*info.node, "axis", 0));
    ZG_RETURN_IF_NOT(axis == 0, "axis ", axis, " (only 0 is supported)");
    return MakeKernel<AllGatherKernel>(info);
  }
  using OpKernel::OpKernel;

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() >= 1, "expects at least 1 input");
    ZG_ASSIGN_OR_RETURN(const TensorSpec* shard, RequiredInput(ctx, 0));
    return std::vector<OutputInfo>{
        OutputInfo{TensorSpec{shard->dtype, {NumElements(shard->shape) * nranks()}}}};
  }

  Status ComputeImpl(const KernelContext& ctx) const override {
    ZG_RETURN_IF_ERROR(CheckCommunicator(ctx, nranks()));
    return ctx.comm->AllGather(*ctx.inputs[0], *ctx.outputs[0], *ctx.stream);
  }
};

class AllReduceKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_RETURN_IF_ERROR(CheckNranksAttribute(info));
    ZG_ASSIGN_OR_RETURN(ReduceOp op, ReduceOpAttr(*info.node, "sum"));
    return std::unique_ptr<OpKernel>(new AllReduceKernel(info, op));
  }

 protected:
  StatusOr<std::vector<OutputInfo>> InferOutputsImpl(const ShapeContext& ctx) const override {
    ZG_RETURN_IF_NOT(ctx.num_inputs() == 1, "expects 1 input, got ", ctx.num_inputs());
    ZG_ASSIGN_OR_RETURN(const TensorSpec* x, RequiredInput(ctx, 0));
    return std::vector<OutputInfo>{OutputInfo{*x, std::nullopt, /*in_place_input=*/0}};
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
  using enum DataType;
  const std::string domain(kZerographDomain);
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "ReduceScatter",
                                        device,
                                        {kFloat32, kFloat16, kBFloat16},
                                        0,
                                        {},
                                        &ReduceScatterKernel::Create}));
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "AllGather",
                                        device,
                                        {kFloat32, kFloat16, kBFloat16},
                                        0,
                                        {},
                                        &AllGatherKernel::Create}));
  ZG_RETURN_IF_ERROR(registry.Register({domain,
                                        "AllReduce",
                                        device,
                                        {kFloat32, kFloat16, kBFloat16, kFloat64, kInt32, kInt64},
                                        0,
                                        {},
                                        &AllReduceKernel::Create}));
  return Status::Ok();
}

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_COLLECTIVES_H_
