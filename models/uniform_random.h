#ifndef ZEROGRAPH_MODELS_UNIFORM_RANDOM_H_
#define ZEROGRAPH_MODELS_UNIFORM_RANDOM_H_

#include <cstdint>
#include <random>
#include <vector>

namespace zerograph {

// Uniform in [0, 1) from the top 24 bits of one draw. std::uniform_real_distribution is
// implementation-defined, so it would make the committed files depend on the standard library;
// mt19937's output sequence is fixed by the standard.
inline float Uniform01(std::mt19937& rng) { return static_cast<float>(rng() >> 8) * 0x1p-24f; }

inline std::vector<float> UniformVector(std::mt19937& rng, int64_t count, float low, float high) {
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = low + (high - low) * Uniform01(rng);
  return values;
}

}  // namespace zerograph

#endif  // ZEROGRAPH_MODELS_UNIFORM_RANDOM_H_
