#include "zerograph/core/hash.h"

#include <cstdio>

namespace zerograph {

uint64_t Fnv1a64(std::string_view bytes, uint64_t hash) {
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= kPrime;
  }
  return hash;
}

std::string Fnv1a64Text(uint64_t hash) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return std::string("fnv1a64:") + hex;
}

}  // namespace zerograph
