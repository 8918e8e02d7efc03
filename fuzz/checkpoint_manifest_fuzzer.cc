// Fuzz target: a checkpoint's manifest.json, through CheckpointManifest::FromJson (kind, steps,
// layout, model, tensors and their pieces, files). An accepted manifest must survive its own
// round trip, and every piece must name one of its files.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fuzz_target.h"
#include "zerograph/ckpt/checkpoint.h"

namespace zerograph::fuzz {

Status RunOne(std::span<const uint8_t> input) {
  const std::string_view json(reinterpret_cast<const char*>(input.data()), input.size());
  ZG_ASSIGN_OR_RETURN(CheckpointManifest manifest, CheckpointManifest::FromJson(json));
  const std::string written = manifest.ToJson();
  StatusOr<CheckpointManifest> again = CheckpointManifest::FromJson(written);
  ZG_CHECK(again.ok(),
           "fuzz: an accepted manifest's own JSON is refused: ", again.status().ToString());
  ZG_CHECK(again->ToJson() == written, "fuzz: the manifest changes in a round trip");
  for (const CheckpointTensor& tensor : manifest.tensors) {
    ZG_CHECK(manifest.FindTensor(tensor.name) != nullptr, "fuzz: FindTensor misses ", tensor.name);
  }
  return Status();
}

}  // namespace zerograph::fuzz
