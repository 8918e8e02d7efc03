// Fuzz target: a checkpoint's manifest.json, through CheckpointReader::Open (which parses it with
// CheckpointManifest::FromJson: kind, steps, layout, model, tensors and their pieces, files), then
// the plan of a read of every canonical tensor and buffer it describes (LocateCanonical,
// LocateBuffer: the arithmetic on pieces and offsets, no file read; a plan may be refused, as a
// balanced checkpoint has no fused buffers, but must not crash). An accepted manifest must also
// survive its own round trip.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "fuzz_target.h"
#include "zerograph/ckpt/checkpoint.h"
#include "zerograph/ir/dtype.h"

namespace zerograph::fuzz {

Status RunOne(std::span<const uint8_t> input) {
  WriteScratchFile("manifest.json", input);
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<CheckpointReader> reader,
                      CheckpointReader::Open(ScratchFolder()));
  const CheckpointManifest& manifest = reader->manifest();
  const std::string written = manifest.ToJson();
  StatusOr<CheckpointManifest> again = CheckpointManifest::FromJson(written);
  ZG_CHECK(again.ok(),
           "fuzz: an accepted manifest's own JSON is refused: ", again.status().ToString());
  ZG_CHECK(again->ToJson() == written, "fuzz: the manifest changes in a round trip");

  for (const StateTensor& tensor : manifest.model.canonical) {
    const int64_t bytes = tensor.numel() * static_cast<int64_t>(ElementSize(tensor.dtype));
    reader->LocateCanonical(tensor.name, 0, tensor.numel(), bytes).status().IgnoreError();
  }
  for (const StateTensor& tensor : manifest.model.buffers) {
    const int64_t bytes = tensor.numel() * static_cast<int64_t>(ElementSize(tensor.dtype));
    reader->LocateBuffer(manifest.model, tensor.name, 0, tensor.numel(), bytes)
        .status()
        .IgnoreError();
  }
  return Status();
}

}  // namespace zerograph::fuzz
