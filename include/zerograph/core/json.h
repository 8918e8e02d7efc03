#ifndef ZEROGRAPH_CORE_JSON_H_
#define ZEROGRAPH_CORE_JSON_H_

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "zerograph/core/status.h"

namespace zerograph {

// Bounds on JSON read from outside: text past them is refused before it costs memory or stack.
struct JsonLimits {
  // The longest text read, in bytes. A layout manifest of a large graph is tens of megabytes.
  size_t max_bytes = size_t{1} << 30;
  // The deepest nesting of arrays and objects: `1` is depth 0, `[1]` depth 1, `{"a": [1]}` 2. Ours
  // go 7 deep (a layout inside a checkpoint manifest).
  int max_depth = 64;
};

// Checks that `text` is one JSON value within `limits` with no key twice in one object (readers
// disagree on which of the two wins), without building the value. Errors are InvalidArgument and
// start with `what`, which names the text ("header", "metadata 'zerograph.inputs'"):
// "<what> is not valid JSON: ...", "<what> has the key 'k' twice", "<what> nests deeper than ...",
// "<what> is ... bytes, more than ...".
Status CheckJson(std::string_view text, std::string_view what, const JsonLimits& limits = {});

// CheckJson, then the value. Objects keep their keys in the text's order, so that errors about
// entries come in the order a reader of the file sees them.
StatusOr<nlohmann::ordered_json> ParseJson(std::string_view text, std::string_view what,
                                           const JsonLimits& limits = {});

// Appends `text` as a JSON string, as nlohmann's dump() writes it (no whitespace, UTF-8 kept,
// invalid UTF-8 replaced by U+FFFD rather than thrown on). A plain string (printable ASCII, no
// quote or backslash) is copied between quotes without building a JSON value: writers of large
// manifests call this per name.
void AppendJsonString(std::string_view text, std::string& out);

// Whether `value` is a JSON integer that an int64_t holds. Check it before get<int64_t>():
// nlohmann casts a float (undefined behaviour out of range, truncation within it) and wraps an
// unsigned integer above INT64_MAX to a negative one.
bool IsInt64(const nlohmann::ordered_json& value);

}  // namespace zerograph

#endif  // ZEROGRAPH_CORE_JSON_H_
