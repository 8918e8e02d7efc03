#ifndef ZEROGRAPH_TESTS_PASSES_AUTODIFF_GRADIENT_CHECK_H_
#define ZEROGRAPH_TESTS_PASSES_AUTODIFF_GRADIENT_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "zerograph/ir/graph.h"

namespace zerograph::autodiff {

struct GradientCheckOptions {
  // Central differences (f(x + h) − f(x − h)) / 2h with this h. In fp32, 1e-2 keeps the rounding
  // of f (about 1e-7·|f| / h) far below the tolerance, and the O(h²) truncation error of smooth
  // ops too; a wrong rule is off by O(1).
  float step = 1e-2f;
  // An element passes when |analytic − numeric| ≤ atol + rtol·|numeric|.
  float atol = 1e-3f;
  float rtol = 1e-2f;
  // Float initializers not to differentiate (treated as constants: masks, indices kept as float).
  std::set<std::string> skip;
  // Seed of the weights R of the checked function.
  uint32_t seed = 1;
};

// Checks AppendBackward on `graph` against finite differences. The function is
// f = Σ_outputs Σ(output ⊙ R), R a fixed random tensor per graph output (so that every element
// of every output weighs differently and a transposed or misplaced gradient shows), differentiated
// with respect to every float32 initializer but `options.skip`, run on the CPU executor. Each
// element of each gradient is compared; a failure names the initializer and the element.
// Every graph output needs a static shape (recorded or inferable).
void ExpectGradientsMatchFiniteDifferences(std::unique_ptr<Graph> graph,
                                           const GradientCheckOptions& options = {});

// `n` values uniform in [lo, hi), the same for the same seed: weights and inputs for tests.
std::vector<float> RandomValues(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

}  // namespace zerograph::autodiff

#endif  // ZEROGRAPH_TESTS_PASSES_AUTODIFF_GRADIENT_CHECK_H_
