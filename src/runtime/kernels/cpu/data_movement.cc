// The CPU's byte-moving kernels (kernels/data_movement_shapes.h) through HostMover: memcpy of
// contiguous runs, strided gathers with the element size as the word type.

#include <cstring>
#include <memory>
#include <vector>

#include "runtime/kernels/broadcast.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cpu/host_memory.h"
#include "runtime/kernels/data_movement_shapes.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/shape_ops.h"

namespace zerograph::runtime {
namespace {

// out[i] = in[i·stride] for a run of n elements of `Word` (a type of the element's size).
template <typename Word>
void GatherRuns(const std::byte* in, const BroadcastPlan& plan, std::byte* out) {
  const int64_t stride = plan.strides[0].back();
  const Word* src = reinterpret_cast<const Word*>(in);
  Word* dst = reinterpret_cast<Word*>(out);
  ForEachRun(plan, [&](std::span<const int64_t> offsets, int64_t n) {
    const Word* from = src + offsets[0];
    if (stride == 1) {
      std::memcpy(dst, from, static_cast<size_t>(n) * sizeof(Word));
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = from[i * stride];
    }
    dst += n;
  });
}

template <typename Word>
void FillWords(void* dst, uint64_t pattern, int64_t n) {
  Word word;
  std::memcpy(&word, &pattern, sizeof word);
  std::fill_n(static_cast<Word*>(dst), n, word);
}

struct HostMover : HostMemory {
  static Status Gather(const void* src, size_t element_size, const BroadcastPlan& plan, void* dst,
                       const KernelContext&) {
    const auto* in = static_cast<const std::byte*>(src);
    auto* out = static_cast<std::byte*>(dst);
    switch (element_size) {
      case 1:
        GatherRuns<uint8_t>(in, plan, out);
        break;
      case 2:
        GatherRuns<uint16_t>(in, plan, out);
        break;
      case 4:
        GatherRuns<uint32_t>(in, plan, out);
        break;
      default:
        GatherRuns<uint64_t>(in, plan, out);
        break;
    }
    return Status::Ok();
  }
  static Status Copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                       size_t height, const KernelContext&) {
    for (size_t r = 0; r < height; ++r) {
      std::memcpy(static_cast<std::byte*>(dst) + r * dpitch,
                  static_cast<const std::byte*>(src) + r * spitch, width);
    }
    return Status::Ok();
  }
  static Status CopyFromHostNow(const void* src, void* dst, size_t bytes, const KernelContext&) {
    if (bytes > 0) std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
  static Status Fill(void* dst, size_t element_size, uint64_t pattern, int64_t n,
                     const KernelContext&) {
    switch (element_size) {
      case 1:
        FillWords<uint8_t>(dst, pattern, n);
        break;
      case 2:
        FillWords<uint16_t>(dst, pattern, n);
        break;
      case 4:
        FillWords<uint32_t>(dst, pattern, n);
        break;
      default:
        FillWords<uint64_t>(dst, pattern, n);
        break;
    }
    return Status::Ok();
  }
};

}  // namespace

Status RegisterCpuDataMovementKernels(KernelRegistry& registry) {
  using enum DataType;
  constexpr auto kCpu = DeviceType::kCpu;
  const std::vector<DataType> all = AllDtypes::Vector();
  for (const char* op : {"Squeeze", "Unsqueeze", "Flatten"}) {
    ZG_RETURN_IF_ERROR(
        registry.Register({"", op, kCpu, all, 0, {}, MakeKernel<CopyInputKernel<HostMemory>>}));
  }
  for (const char* op : {"Shape", "Size"}) {
    ZG_RETURN_IF_ERROR(
        registry.Register({"", op, kCpu, all, 0, {}, &ShapeValuesKernel<HostMover>::Create}));
  }
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Expand", kCpu, all, 0, {}, MakeKernel<ExpandKernel<HostMover>>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Tile", kCpu, all, 0, {}, MakeKernel<TileKernel<HostMover>>}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Slice", kCpu, all, 0, {}, &SliceKernel<HostMover>::Create}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Split", kCpu, all, 0, {}, &SplitKernel<HostMover>::Create}));
  ZG_RETURN_IF_ERROR(
      registry.Register({"", "Concat", kCpu, all, 0, {}, &ConcatKernel<HostMover>::Create}));
  ZG_RETURN_IF_ERROR(registry.Register({"",
                                        "Range",
                                        kCpu,
                                        {kFloat32, kFloat64, kInt32, kInt64},
                                        0,
                                        {},
                                        MakeKernel<RangeKernel<HostMover>>}));
  return registry.Register(
      {"", "ConstantOfShape", kCpu, {kInt64}, 0, {}, &ConstantOfShapeKernel<HostMover>::Create});
}

}  // namespace zerograph::runtime
