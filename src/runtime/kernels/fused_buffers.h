#ifndef ZEROGRAPH_SRC_RUNTIME_KERNELS_FUSED_BUFFERS_H_
#define ZEROGRAPH_SRC_RUNTIME_KERNELS_FUSED_BUFFERS_H_

// org.zerograph ops over fused buffers (docs/formats.md, "zerograph's operators"), shared by every
// device through a memory policy (HostMemory, CudaMemory: CopyBytes, Zero). All of them move data
// without arithmetic, and all but CoalesceTensors's padding cost nothing once the executor makes
// their outputs (or, for CoalesceTensors, inputs) views, which PlanOutputs and the op contract's
// OpMemory describe:
//   CoalesceTensors(t1..tn) -> fused[total]   offsets, numels, total (or alignment): ti at
//                                             offsets[i]; everything else zero
//   TensorViews(fused) -> t1..tn              offsets, shapes (flattened), ranks
//   LocalShard(fused) -> shard                this rank's [r·S, (r+1)·S), S = numel / nranks
//   Nop(x, deps...) -> x                      orders a stream after the deps' producers
//                                             (CopyInputKernel, shape_ops.h)

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace zerograph::runtime {

template <typename Memory>
class CoalesceTensorsKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const Node& node = *info.node;
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ContractInts(node, "offsets"));
    // One entry per input: the registry checked the node against its contract.
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> numels, ContractInts(node, "numels"));
    // Ranges sorted by offset must not overlap; the gaps between them are the padding.
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (size_t i = 0; i < offsets.size(); ++i) {
      ZG_RETURN_IF_NOT(offsets[i] >= 0 && numels[i] >= 0, "input ", i, " has offset ", offsets[i],
                       " and numel ", numels[i]);
      ranges.emplace_back(offsets[i], offsets[i] + numels[i]);
    }
    std::sort(ranges.begin(), ranges.end());
    int64_t end = 0;
    std::vector<std::pair<int64_t, int64_t>> gaps;
    for (const auto& [begin, stop] : ranges) {
      ZG_RETURN_IF_NOT(begin >= end, "input ranges overlap at element ", begin);
      if (begin > end) gaps.emplace_back(end, begin);
      end = stop;
    }
    return std::unique_ptr<OpKernel>(
        new CoalesceTensorsKernel(info, std::move(offsets), std::move(gaps), end));
  }

 protected:
  Status ComputeImpl(const KernelContext& ctx) const override {
    auto* out = static_cast<std::byte*>(ctx.outputs[0]->data());
    const size_t size = ElementSize(dtype());
    for (size_t i = 0; i < offsets_.size(); ++i) {
      std::byte* target = out + offsets_[i] * static_cast<int64_t>(size);
      const DeviceTensor& in = *ctx.inputs[i];
      ZG_RETURN_IF_ERROR(Memory::CopyBytes(in.data(), target, in.byte_size(), ctx));
    }
    // The padding: the gaps between the inputs and, after them, the rest of the output, whose
    // size (`total` or the alignment) the contract's shape function gave.
    auto zero = [&](int64_t begin, int64_t end) {
      return Memory::Zero(out + begin * static_cast<int64_t>(size),
                          static_cast<size_t>(end - begin) * size, ctx);
    };
    for (const auto& [begin, end] : gaps_) ZG_RETURN_IF_ERROR(zero(begin, end));
    const int64_t total = ctx.outputs[0]->numel();
    return total > end_ ? zero(end_, total) : Status::Ok();
  }

 private:
  CoalesceTensorsKernel(const KernelInfo& info, std::vector<int64_t> offsets,
                        std::vector<std::pair<int64_t, int64_t>> gaps, int64_t end)
      : OpKernel(info), offsets_(std::move(offsets)), gaps_(std::move(gaps)), end_(end) {}

  std::vector<int64_t> offsets_;
  std::vector<std::pair<int64_t, int64_t>> gaps_;  // [begin, end) element ranges to zero
  int64_t end_;                                    // where the last input ends
};

// The views' shapes are the contract's (the outputs' shapes); the kernel keeps their offsets.
template <typename Memory>
class TensorViewsKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ContractInts(*info.node, "offsets"));
    return std::unique_ptr<OpKernel>(new TensorViewsKernel(info, std::move(offsets)));
  }

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    for (size_t i = 0; i < outputs.size(); ++i) outputs[i].view = OutputInfo::View{0, offsets_[i]};
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    for (size_t i = 0; i < offsets_.size(); ++i) {
      DeviceTensor& out = *ctx.outputs[i];
      ZG_ASSIGN_OR_RETURN(DeviceTensor view, ctx.inputs[0]->View(offsets_[i], out.shape()));
      ZG_RETURN_IF_ERROR(Memory::CopyBytes(view.data(), out.data(), out.byte_size(), ctx));
    }
    return Status::Ok();
  }

 private:
  TensorViewsKernel(const KernelInfo& info, std::vector<int64_t> offsets)
      : OpKernel(info), offsets_(std::move(offsets)) {}

  std::vector<int64_t> offsets_;
};

template <typename Memory>
class LocalShardKernel final : public OpKernel {
 public:
  static StatusOr<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ZG_RETURN_IF_ERROR(CheckNranksAttribute(info));
    return MakeKernel<LocalShardKernel>(info);
  }
  using OpKernel::OpKernel;

 protected:
  Status PlanOutputs(const ShapeContext&, std::span<OutputInfo> outputs) const override {
    outputs[0].view = OutputInfo::View{0, rank() * NumElements(outputs[0].spec.shape)};
    return Status::Ok();
  }
  Status ComputeImpl(const KernelContext& ctx) const override {
    const int64_t shard = ctx.outputs[0]->numel();
    ZG_ASSIGN_OR_RETURN(DeviceTensor view, ctx.inputs[0]->View(rank() * shard, {shard}));
    return Memory::CopyBytes(view.data(), ctx.outputs[0]->data(), ctx.outputs[0]->byte_size(), ctx);
  }
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_SRC_RUNTIME_KERNELS_FUSED_BUFFERS_H_
