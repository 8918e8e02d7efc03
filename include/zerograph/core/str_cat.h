#ifndef ZEROGRAPH_CORE_STR_CAT_H_
#define ZEROGRAPH_CORE_STR_CAT_H_

#include <charconv>
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>

namespace zerograph {
namespace internal {

inline void AppendPiece(std::string& out, std::string_view piece) { out.append(piece); }
inline void AppendPiece(std::string& out, const char* piece) { out.append(piece); }
inline void AppendPiece(std::string& out, char piece) { out.push_back(piece); }
inline void AppendPiece(std::string& out, bool piece) { out.append(piece ? "true" : "false"); }

template <typename T>
requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
         !std::is_same_v<T, char>) void AppendPiece(std::string& out, T piece) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), piece);
  out.append(buffer, result.ptr);
}

template <typename T>
requires std::is_enum_v<T>
void AppendPiece(std::string& out, T piece) {
  AppendPiece(out, static_cast<std::underlying_type_t<T>>(piece));
}

}  // namespace internal

// Concatenates strings and numbers (shortest round-trip form for floating point) into one string.
template <typename... Pieces>
std::string StrCat(const Pieces&... pieces) {
  std::string out;
  (internal::AppendPiece(out, pieces), ...);
  return out;
}

// Joins the elements of `items` with `separator`, formatting each with StrCat.
template <typename Range>
std::string StrJoin(const Range& items, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out.append(separator);
    first = false;
    internal::AppendPiece(out, item);
  }
  return out;
}

}  // namespace zerograph

#endif  // ZEROGRAPH_CORE_STR_CAT_H_
