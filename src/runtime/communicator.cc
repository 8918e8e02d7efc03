#include "zerograph/runtime/communicator.h"

#include <cstdlib>
#include <cstring>

#include "runtime/comm/reduce.h"
#include "zerograph/core/str_cat.h"

namespace zerograph::runtime {
namespace {

struct ByteRange {
  const std::byte* begin;
  const std::byte* end;
};

ByteRange RangeOf(const DeviceTensor& t) {
  const auto* begin = static_cast<const std::byte*>(t.data());
  return {begin, begin + t.byte_size()};
}

bool Overlap(ByteRange a, ByteRange b) { return a.begin < b.end && b.begin < a.end; }

// Checks what every collective needs of a tensor.
Status CheckTensor(const Communicator& comm, const DeviceTensor& t, std::string_view role) {
  ZG_RETURN_IF_NOT(!t.empty(), role, " is an empty tensor");
  ZG_RETURN_IF_NOT(t.is_contiguous(), role, " ", t.ToString(), " is not contiguous");
  ZG_RETURN_IF_NOT(t.device().type() == comm.device_type(), role, " is on ", t.device().name(),
                   " but the ", comm.backend_name(), " communicator works on ",
                   DeviceTypeName(comm.device_type()));
  return Status::Ok();
}

Status CheckReduction(DataType dtype, ReduceOp op, bool narrow_float_only) {
  if (narrow_float_only) {
    ZG_RETURN_IF_NOT(
        dtype == DataType::kFloat32 || dtype == DataType::kFloat16 || dtype == DataType::kBFloat16,
        "reduce-scatter of ", DataTypeName(dtype), " (fp32, fp16 and bf16 only)");
  }
  ZG_RETURN_IF_NOT(IsReducible(dtype), "reduction of ", DataTypeName(dtype), " is not supported");
  ZG_RETURN_IF_NOT(op != ReduceOp::kAvg || IsFloating(dtype), "avg of ", DataTypeName(dtype),
                   " (floating types only)");
  return Status::Ok();
}

}  // namespace

std::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
  }
  return "unknown";
}

StatusOr<ReduceOp> ParseReduceOp(std::string_view name) {
  if (name == "sum") return ReduceOp::kSum;
  if (name == "avg") return ReduceOp::kAvg;
  return InvalidArgumentError(StrCat("reduce_op '", name, "' (expected 'sum' or 'avg')"));
}

Status Communicator::ReduceScatter(const DeviceTensor& input, DeviceTensor& output, ReduceOp op,
                                   Stream& stream) {
  ZG_RETURN_IF_ERROR(CheckTensor(*this, input, "reduce-scatter input"));
  ZG_RETURN_IF_ERROR(CheckTensor(*this, output, "reduce-scatter output"));
  ZG_RETURN_IF_NOT(input.dtype() == output.dtype(), "reduce-scatter of ", input.ToString(),
                   " into ", output.ToString());
  ZG_RETURN_IF_ERROR(CheckReduction(input.dtype(), op, /*narrow_float_only=*/true));
  ZG_RETURN_IF_NOT(input.numel() == output.numel() * size(), "reduce-scatter of ", input.ToString(),
                   " over ", size(), " ranks into ", output.ToString(),
                   " (the input must have ranks x output elements)");
  const size_t count = static_cast<size_t>(output.numel());
  const auto* own_part =
      static_cast<const std::byte*>(input.data()) + rank() * count * input.element_size();
  if (output.data() != own_part) {
    ZG_RETURN_IF_NOT(!Overlap(RangeOf(input), RangeOf(output)),
                     "reduce-scatter output overlaps its input other than in place");
  }
  return ReduceScatterImpl(input.data(), output.data(), count, input.dtype(), op, stream);
}

Status Communicator::AllGather(const DeviceTensor& input, DeviceTensor& output, Stream& stream) {
  ZG_RETURN_IF_ERROR(CheckTensor(*this, input, "all-gather input"));
  ZG_RETURN_IF_ERROR(CheckTensor(*this, output, "all-gather output"));
  ZG_RETURN_IF_NOT(input.dtype() == output.dtype(), "all-gather of ", input.ToString(), " into ",
                   output.ToString());
  ZG_RETURN_IF_NOT(output.numel() == input.numel() * size(), "all-gather of ", input.ToString(),
                   " over ", size(), " ranks into ", output.ToString(),
                   " (the output must have ranks x input elements)");
  const size_t count = static_cast<size_t>(input.numel());
  const auto* own_part =
      static_cast<const std::byte*>(output.data()) + rank() * count * input.element_size();
  if (input.data() != own_part) {
    ZG_RETURN_IF_NOT(!Overlap(RangeOf(input), RangeOf(output)),
                     "all-gather input overlaps its output other than in place");
  }
  return AllGatherImpl(input.data(), output.data(), count, input.dtype(), stream);
}

Status Communicator::AllReduce(const DeviceTensor& input, DeviceTensor& output, ReduceOp op,
                               Stream& stream) {
  ZG_RETURN_IF_ERROR(CheckTensor(*this, input, "all-reduce input"));
  ZG_RETURN_IF_ERROR(CheckTensor(*this, output, "all-reduce output"));
  ZG_RETURN_IF_NOT(input.dtype() == output.dtype() && input.numel() == output.numel(),
                   "all-reduce of ", input.ToString(), " into ", output.ToString());
  ZG_RETURN_IF_ERROR(CheckReduction(input.dtype(), op, /*narrow_float_only=*/false));
  if (input.data() != output.data()) {
    ZG_RETURN_IF_NOT(!Overlap(RangeOf(input), RangeOf(output)),
                     "all-reduce output overlaps its input other than in place");
  }
  return AllReduceImpl(input.data(), output.data(), static_cast<size_t>(input.numel()),
                       input.dtype(), op, stream);
}

Status Communicator::Broadcast(DeviceTensor& tensor, int root, Stream& stream) {
  ZG_RETURN_IF_ERROR(CheckTensor(*this, tensor, "broadcast tensor"));
  ZG_RETURN_IF_NOT(root >= 0 && root < size(), "broadcast from rank ", root, " of ", size());
  return BroadcastImpl(tensor.data(), static_cast<size_t>(tensor.numel()), tensor.dtype(), root,
                       stream);
}

Status Communicator::Barrier() { return BarrierImpl(); }

std::string Communicator::CollectiveLabel(std::string_view collective) const {
  const int64_t step = step_.load(std::memory_order_relaxed);
  return step < 0 ? StrCat("the ", collective) : StrCat("step ", step, "'s ", collective);
}

std::string Communicator::RankList(std::span<const int> ranks) {
  return StrCat(ranks.size() == 1 ? "rank " : "ranks ", StrJoin(ranks, ", "));
}

void Communicator::Abort(int exit_code) {
  AbortImpl(exit_code);
  std::_Exit(exit_code);
}

}  // namespace zerograph::runtime
