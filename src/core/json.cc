#include "zerograph/core/json.h"

#include <algorithm>
#include <limits>
#include <set>
#include <vector>

#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

// A SAX handler that builds nothing: it tracks depth and each open object's keys, and stops at
// the first problem, which it keeps as a message.
class JsonChecker : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit JsonChecker(int max_depth) : max_depth_(max_depth) {}

  const std::string& error() const { return error_; }

  bool key(string_t& name) override {
    if (!keys_[static_cast<size_t>(depth_ - 1)].insert(name).second) {
      return Fail(StrCat("has the key '", name, "' twice"));
    }
    return true;
  }
  bool start_object(std::size_t) override {
    if (!Enter()) return false;
    // One key set per depth, reused: an open object's keys are those of the set at its depth.
    if (keys_.size() < static_cast<size_t>(depth_)) keys_.resize(static_cast<size_t>(depth_));
    keys_[static_cast<size_t>(depth_ - 1)].clear();
    return true;
  }
  bool end_object() override { return Leave(); }
  bool start_array(std::size_t) override { return Enter(); }
  bool end_array() override { return Leave(); }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& exception) override {
    // "[json.exception.parse_error.101] parse error at line 1, ...": the part after the tag.
    std::string_view text = exception.what();
    const size_t tag_end = text.find("] ");
    if (tag_end != std::string_view::npos) text.remove_prefix(tag_end + 2);
    return Fail(StrCat("is not valid JSON: ", text));
  }

 private:
  bool Enter() {
    if (++depth_ > max_depth_) return Fail(StrCat("nests deeper than ", max_depth_, " levels"));
    return true;
  }
  bool Leave() {
    --depth_;
    return true;
  }
  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  int max_depth_;
  int depth_ = 0;
  std::vector<std::set<std::string>> keys_;
  std::string error_;
};

}  // namespace

Status CheckJson(std::string_view text, std::string_view what, const JsonLimits& limits) {
  ZG_RETURN_IF_NOT(text.size() <= limits.max_bytes, what, " is ", text.size(),
                   " bytes, more than the limit of ", limits.max_bytes);
  JsonChecker checker(limits.max_depth);
  const bool parsed = nlohmann::json::sax_parse(text.begin(), text.end(), &checker);
  if (!parsed || !checker.error().empty()) {
    return InvalidArgumentError(
        StrCat(what, " ", checker.error().empty() ? "is not valid JSON" : checker.error()));
  }
  return Status::Ok();
}

StatusOr<nlohmann::ordered_json> ParseJson(std::string_view text, std::string_view what,
                                           const JsonLimits& limits) {
  ZG_RETURN_IF_ERROR(CheckJson(text, what, limits));
  // Checked first and built second: nlohmann's callback parser, which could check while building,
  // slows down with the size of the arrays it fills (a 23 MB layout took minutes).
  nlohmann::ordered_json json =
      nlohmann::ordered_json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  ZG_RET_CHECK(!json.is_discarded(), "JSON that passed the check failed to parse");
  return json;
}

bool IsInt64(const nlohmann::ordered_json& value) {
  if (value.is_number_unsigned()) {
    return value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  }
  return value.is_number_integer();
}

void AppendJsonString(std::string_view text, std::string& out) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';
  });
  if (!plain) {
    out += nlohmann::json(std::string(text))
               .dump(/*indent=*/-1, ' ', /*ensure_ascii=*/false,
                     nlohmann::json::error_handler_t::replace);
    return;
  }
  out += '"';
  out += text;
  out += '"';
}

}  // namespace zerograph
