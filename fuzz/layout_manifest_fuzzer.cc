// Fuzz target: a layout manifest (`zerograph.layout`, and every checkpoint's), through
// LayoutManifest::FromJson. A manifest it accepts must survive its own round trip.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fuzz_target.h"
#include "zerograph/ir/layout_manifest.h"

namespace zerograph::fuzz {

Status RunOne(std::span<const uint8_t> input) {
  const std::string_view json(reinterpret_cast<const char*>(input.data()), input.size());
  ZG_ASSIGN_OR_RETURN(LayoutManifest manifest, LayoutManifest::FromJson(json));
  StatusOr<LayoutManifest> again = LayoutManifest::FromJson(manifest.ToJson());
  ZG_CHECK(again.ok(),
           "fuzz: an accepted manifest's own JSON is refused: ", again.status().ToString());
  ZG_CHECK(*again == manifest, "fuzz: the manifest changes in a round trip");
  return Status();
}

}  // namespace zerograph::fuzz
