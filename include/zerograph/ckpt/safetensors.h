#ifndef ZEROGRAPH_CKPT_SAFETENSORS_H_
#define ZEROGRAPH_CKPT_SAFETENSORS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/tensor.h"

namespace zerograph {

// The safetensors dtype string for `dtype` ("F32", "BF16", "I64", "BOOL", ...), or nullopt for
// types safetensors has no name for here (strings, complex).
std::optional<std::string_view> SafetensorsDtypeName(DataType dtype);
// The DataType for a safetensors dtype string, if it is one we support.
std::optional<DataType> DataTypeFromSafetensors(std::string_view name);

// One tensor to write: its bytes in row-major, little-endian order.
struct SafetensorsWriteEntry {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  std::span<const std::byte> bytes;
};

// Writes a safetensors file: an 8-byte header length, the JSON header (`__metadata__` first, padded
// with spaces so that data starts 8-byte aligned), then the tensors back to back, ordered as the
// reference writer orders them (larger elements first, then by name) so each is naturally aligned.
// The file appears complete or not at all (written to a temporary name, then renamed). Errors name
// the file and the tensor.
Status WriteSafetensors(const std::string& path, std::span<const SafetensorsWriteEntry> tensors,
                        std::span<const std::pair<std::string, std::string>> metadata = {});

// A safetensors file mapped read-only and validated as the reference reader does: header length at
// most 100 MB and inside the file, valid JSON without duplicate keys, known dtypes, each tensor's
// byte range matching its shape, ranges contiguous (no gap, no overlap) and covering the data area
// exactly. Tensor bytes point into the mapping and are not copied; they may be unaligned for files
// from other writers, so read them with memcpy.
class SafetensorsFile {
 public:
  struct TensorInfo {
    std::string name;
    DataType dtype = DataType::kUndefined;
    std::vector<int64_t> shape;
    // Offsets relative to the start of the data area, as the header states them.
    int64_t begin = 0;
    int64_t end = 0;
    std::span<const std::byte> bytes;
  };

  // Maps and validates `path`. Truncated or inconsistent files are DataLoss, a malformed header
  // InvalidArgument; messages name the file and the tensor.
  static StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);

  const std::string& path() const { return mapping_->path(); }
  // Tensors in data order (by offset).
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // The tensor called `name`, or null.
  const TensorInfo* Find(std::string_view name) const;
  // `__metadata__` entries in header order.
  const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }
  std::optional<std::string_view> FindMetadata(std::string_view key) const;
  // The mapping the tensor bytes point into; holding it keeps them valid.
  const std::shared_ptr<const MappedFile>& mapping() const { return mapping_; }

 private:
  SafetensorsFile() = default;

  std::shared_ptr<const MappedFile> mapping_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_CKPT_SAFETENSORS_H_
