#ifndef ZEROGRAPH_PASSES_AMP_PASS_H_
#define ZEROGRAPH_PASSES_AMP_PASS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/passes/pass.h"

namespace zerograph {

class Node;

// Automatic mixed precision for a forward model, run before the autodiff pass: the matrix
// products run in bfloat16 or float16 (half the bytes moved, and the fast units of a GPU) while
// what loses accuracy in low precision (sums over many elements, exp and log, normalizations, the
// loss) stays float32. The autodiff then differentiates through the Casts this pass inserts, so
// the backward runs in the same precision as the forward.
//
//   O1:  x ─Cast(low)─┐                     parameters stay float32; only `low_ops` change
//        w ─Cast(low)─┴─ MatMul ─ Cast(float) ─ (every other op as before)
//   O2:  every floating initializer stored in low precision, every op computes in low precision
//        but `fp32_ops`, whose low inputs are cast to float32
//
// One Cast per value and target dtype, shared by its readers. Graph outputs keep their dtype (a
// Cast back, under the output's name), so a loss built on them is float32. Integer, bool and
// shape values, and inputs an op reads on the host, are never touched. An op without a kernel for
// the low dtype stays float32 (counted in the stats).
class AmpPass : public GraphPass {
 public:
  enum class Level {
    kO1,  // only `low_ops` compute in low precision
    kO2,  // low-precision parameters; everything but `fp32_ops` computes in low precision
  };
  // Whether `node` has a kernel computing in `dtype`. The passes cannot see the runtime's kernel
  // registry, so the caller answers; null: every op has one.
  using KernelCheck = std::function<bool(const Node& node, DataType dtype)>;

  struct Options {
    // kBFloat16 or kFloat16.
    DataType low = DataType::kBFloat16;
    Level level = Level::kO1;
    // O1's ops that compute in low precision, by op type (any domain).
    std::vector<std::string> low_ops = DefaultLowOps();
    // O2's ops that stay float32, by op type (any domain).
    std::vector<std::string> fp32_ops = DefaultFp32Ops();
    KernelCheck has_kernel;
  };

  // MatMul, Gemm, FusedMatMul: the ops of torch.autocast's and Paddle's low-precision lists that
  // the op library has (docs/training.md, "Mixed precision").
  static std::vector<std::string> DefaultLowOps();
  // The normalizations, Softmax and LogSoftmax, the summing Reduce* ops, the losses, Exp, Log,
  // Pow and Reciprocal: torch.autocast's float32 list and Paddle's black list, for the ops the op
  // library has.
  static std::vector<std::string> DefaultFp32Ops();

  explicit AmpPass(Options options) : options_(std::move(options)) {}

  std::string_view name() const override { return "amp"; }
  std::string StatsString() const override;

 protected:
  StatusOr<bool> RunImpl(Graph& graph) override;

 private:
  struct Stats {
    int64_t low_nodes = 0;
    int64_t casts = 0;
    int64_t initializers = 0;  // converted to the low dtype (O2)
    int64_t bytes_before = 0;
    int64_t bytes_after = 0;
    std::map<std::string, int64_t> fp32_listed;  // op type → nodes kept float32 by the list
    std::map<std::string, int64_t> no_kernel;    // op type → nodes kept float32: no kernel
    std::map<std::string, int64_t> not_allowed;  // op type → kept float32: the contract says so
  };

  Options options_;
  Stats stats_;
};

// "bf16"/"bfloat16" and "fp16"/"float16" / "O1", "O2": the CLI's spellings.
std::optional<DataType> AmpDtypeFromName(std::string_view name);
std::optional<AmpPass::Level> AmpLevelFromName(std::string_view name);

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_AMP_PASS_H_
