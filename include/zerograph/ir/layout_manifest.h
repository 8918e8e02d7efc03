#ifndef ZEROGRAPH_IR_LAYOUT_MANIFEST_H_
#define ZEROGRAPH_IR_LAYOUT_MANIFEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"

namespace zerograph {

// Where every parameter and optimizer state lives after sharding-stage1 (docs/formats.md, "Layout
// manifest"). The same manifest is stored in the rewritten graph (`zerograph.layout`) and in every
// checkpoint, so a checkpoint can be checked against, and converted between, layouts.
//
// A bucket is a 1-D buffer of `total` elements holding its parameters back to back. With the
// seed's alignment each parameter is padded to the granularity 256·N/E² elements (E bytes per
// element; fp32: 16·N, fp16/bf16: 64·N); with the compact one only the bucket's end is, the last
// parameter's padded size taking it. Either way the total is a multiple of the granularity, so
// the bucket splits into N equal shards of `shard_size` that start 256-byte aligned; rank r owns
// [r·S, (r+1)·S). Optimizer states use the same element offsets in buffers of their own.
struct LayoutManifest {
  enum class Alignment {
    kSeed,     // every parameter padded: the seed's rule
    kCompact,  // only the bucket's end padded: less than the granularity per bucket
  };

  struct Param {
    std::string name;
    std::vector<int64_t> shape;
    int64_t offset = 0;  // first element in the bucket
    int64_t numel = 0;
    int64_t padded = 0;  // numel rounded up to the granularity
    // The parameter's optimizer states before fusion, in the optimizer's state order.
    std::vector<std::string> states;
    friend bool operator==(const Param&, const Param&) = default;
  };
  struct Bucket {
    int64_t id = 0;
    DataType dtype = DataType::kFloat32;
    int64_t total = 0;
    int64_t shard_size = 0;
    // "org.zerograph.AdamW", "ai.onnx.preview.training.Adam", ...
    std::string optimizer;
    // Initializers holding the fused parameters and each fused state.
    std::string param_buffer;
    std::vector<std::string> state_buffers;
    std::vector<DataType> state_dtypes;
    // The state that holds the parameters' fp32 master copy (`--master-weights`), or -1. Written
    // as "master_state" only when there is one, so that other layouts keep their JSON and hash.
    int64_t master_state = -1;
    std::vector<Param> params;
    friend bool operator==(const Bucket&, const Bucket&) = default;
  };
  // A parameter left whole (updated fully on every rank, gradient all-reduced), and why.
  struct WholeParam {
    std::string name;
    std::string reason;
    friend bool operator==(const WholeParam&, const WholeParam&) = default;
  };

  int64_t nranks = 1;
  // Written as "align" only when compact, so that seed layouts keep their JSON and hash.
  Alignment align = Alignment::kSeed;
  std::vector<Bucket> buckets;
  std::vector<WholeParam> whole;

  // Canonical JSON (fixed key order, no whitespace) including the hash.
  std::string ToJson() const;
  // "fnv1a64:" and 16 hex digits over the canonical JSON without the hash.
  std::string Hash() const;

  // Parses and validates a manifest: offsets, padding and shard sizes consistent, the hash (when
  // present) matching. Errors say which bucket or parameter is wrong.
  static StatusOr<LayoutManifest> FromJson(std::string_view json);

  friend bool operator==(const LayoutManifest&, const LayoutManifest&) = default;
};

// The most ranks a layout is made for: rank counts are ints to MPI and NCCL, and padding to 256
// bytes per rank then stays far within int64 (PaddedNumel of element counts below 2^62).
inline constexpr int64_t kMaxRanks = INT32_MAX;

// Elements each parameter is padded to for `dtype` on `nranks` ranks (256·N/E²), or 0 for element
// types that cannot be sharded (only fp32, fp16 and bf16 can). `nranks` is at most kMaxRanks.
int64_t PaddingGranularity(DataType dtype, int64_t nranks);

// `numel` (below 2^62) rounded up to the granularity.
int64_t PaddedNumel(int64_t numel, DataType dtype, int64_t nranks);

// "seed" or "compact", and back (nullopt for another word).
std::string_view AlignmentName(LayoutManifest::Alignment align);
std::optional<LayoutManifest::Alignment> AlignmentFromName(std::string_view name);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_LAYOUT_MANIFEST_H_
