#ifndef ZEROGRAPH_CORE_HASH_H_
#define ZEROGRAPH_CORE_HASH_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace zerograph {

// FNV-1a's 64-bit offset basis: the hash of no bytes, where every hash starts.
inline constexpr uint64_t kFnv1a64Basis = 0xcbf29ce484222325ULL;

// Continues the 64-bit FNV-1a hash `hash` over `bytes`, so that a text in parts hashes as the
// whole: Fnv1a64(b, Fnv1a64(a)) == Fnv1a64(a + b). Not cryptographic: it tells apart honest
// changes (a model's or a layout's contents), not forged ones.
uint64_t Fnv1a64(std::string_view bytes, uint64_t hash = kFnv1a64Basis);

// "fnv1a64:" and `hash` in 16 lowercase hex digits, as checkpoints and layouts record it.
std::string Fnv1a64Text(uint64_t hash);

}  // namespace zerograph

#endif  // ZEROGRAPH_CORE_HASH_H_
