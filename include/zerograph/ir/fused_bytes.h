#ifndef ZEROGRAPH_IR_FUSED_BYTES_H_
#define ZEROGRAPH_IR_FUSED_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"

namespace zerograph {

class Tensor;

// The bytes of a fused initializer (a bucket's parameters or one of its optimizer states): other
// tensors laid end to end at element offsets, zeros between and after, each converted to the
// fused dtype where its own differs (fp32 master copies of low-precision parameters). They are
// made when written, a buffer at a time (Write), or when read (Tensor::Bytes makes them once), and
// are not held for the rewrite: with the seed's padding most of a fused buffer is zeros, hundreds
// of MB on a model of many small parameters. The sources are the graph's own tensors, which live
// as long as the graph; they must not change (erasing their initializers does not change them).
class FusedBytes {
 public:
  // `sources[i]` goes at element `offsets[i]` of `total` elements of `dtype`; the offsets ascend.
  // Fails, naming the tensor, when a source does not fit its place.
  static StatusOr<std::shared_ptr<const FusedBytes>> Make(std::vector<const Tensor*> sources,
                                                          std::vector<int64_t> offsets,
                                                          int64_t total, DataType dtype);

  size_t size() const { return size_; }

  // Fills `buffer` with the bytes in order and hands it to `put` each time it is full, and what
  // it holds at the end; fails when a source's bytes cannot be read or converted.
  Status Write(std::span<std::byte> buffer,
               const std::function<Status(std::span<const std::byte>)>& put) const;
  // Writes all the bytes into `out`, which holds size() bytes.
  Status Fill(std::span<std::byte> out) const;

 private:
  FusedBytes(std::vector<const Tensor*> sources, std::vector<int64_t> offsets, size_t size,
             DataType dtype)
      : sources_(std::move(sources)), offsets_(std::move(offsets)), size_(size), dtype_(dtype) {}

  std::vector<const Tensor*> sources_;
  std::vector<int64_t> offsets_;
  size_t size_;
  DataType dtype_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_FUSED_BYTES_H_
