#include "zerograph/ir/fused_bytes.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "zerograph/ir/float_convert.h"
#include "zerograph/ir/tensor.h"

namespace zerograph {

StatusOr<std::shared_ptr<const FusedBytes>> FusedBytes::Make(std::vector<const Tensor*> sources,
                                                             std::vector<int64_t> offsets,
                                                             int64_t total, DataType dtype) {
  ZG_RET_CHECK(sources.size() == offsets.size(), "a fused buffer needs an offset per tensor");
  const size_t element_size = ElementSize(dtype);
  ZG_RET_CHECK(element_size > 0 && total >= 0, "a fused buffer of ", DataTypeName(dtype));
  int64_t end = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    const Tensor& source = *sources[i];
    ZG_RET_CHECK(offsets[i] >= end && offsets[i] + source.numel() <= total, "tensor '",
                 source.name(), "' does not fit its place in the fused buffer");
    end = offsets[i] + source.numel();
  }
  return std::shared_ptr<const FusedBytes>(new FusedBytes(
      std::move(sources), std::move(offsets), static_cast<size_t>(total) * element_size, dtype));
}

Status FusedBytes::Write(std::span<std::byte> buffer,
                         const std::function<Status(std::span<const std::byte>)>& put) const {
  ZG_RET_CHECK(!buffer.empty() || size_ == 0, "no buffer to write a fused tensor through");
  size_t used = 0;
  // Appends `size` bytes from `data` (zeros when null), handing the buffer over when full.
  auto append = [&](const std::byte* data, size_t size) -> Status {
    while (size > 0) {
      const size_t n = std::min(size, buffer.size() - used);
      if (data != nullptr) {
        std::memcpy(buffer.data() + used, data, n);
        data += n;
      } else {
        std::memset(buffer.data() + used, 0, n);
      }
      used += n;
      size -= n;
      if (used == buffer.size()) {
        ZG_RETURN_IF_ERROR(put(buffer));
        used = 0;
      }
    }
    return Status::Ok();
  };
  const size_t element_size = ElementSize(dtype_);
  size_t written = 0;
  std::string converted;
  for (size_t i = 0; i < sources_.size(); ++i) {
    ZG_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, sources_[i]->Bytes());
    if (sources_[i]->dtype() != dtype_) {
      ZG_ASSIGN_OR_RETURN(converted, ConvertFloatElements(bytes, sources_[i]->dtype(), dtype_));
      bytes = std::as_bytes(std::span(converted));
    }
    const size_t at = static_cast<size_t>(offsets_[i]) * element_size;
    ZG_RETURN_IF_ERROR(append(nullptr, at - written));
    ZG_RETURN_IF_ERROR(append(bytes.data(), bytes.size()));
    written = at + bytes.size();
  }
  ZG_RETURN_IF_ERROR(append(nullptr, size_ - written));
  if (used > 0) ZG_RETURN_IF_ERROR(put(buffer.first(used)));
  return Status::Ok();
}

Status FusedBytes::Fill(std::span<std::byte> out) const {
  ZG_RET_CHECK(out.size() == size_, "a fused tensor of ", size_, " bytes, filled into ",
               out.size());
  return Write(out, [](std::span<const std::byte>) { return Status::Ok(); });
}

}  // namespace zerograph
