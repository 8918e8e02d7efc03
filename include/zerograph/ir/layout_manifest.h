#ifndef ZEROGRAPH_IR_LAYOUT_MANIFEST_H_
#define ZEROGRAPH_IR_LAYOUT_MANIFEST_H_

#include <cstdint>
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
// A bucket is a 1-D buffer of `total` elements holding its parameters back to back, each padded to
// the granularity 256·N/E² elements (E bytes per element; fp32: 16·N, fp16/bf16: 64·N), so that it
// splits into N equal shards of `shard_size`; rank r owns [r·S, (r+1)·S). Optimizer states use the
// same element offsets in buffers of their own.
struct LayoutManifest {
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

// Elements each parameter is padded to for `dtype` on `nranks` ranks (256·N/E²), or 0 for element
// types that cannot be sharded (only fp32, fp16 and bf16 can).
int64_t PaddingGranularity(DataType dtype, int64_t nranks);

// `numel` rounded up to the granularity.
int64_t PaddedNumel(int64_t numel, DataType dtype, int64_t nranks);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_LAYOUT_MANIFEST_H_
