#ifndef ZEROGRAPH_IR_OP_ROLE_H_
#define ZEROGRAPH_IR_OP_ROLE_H_

#include <cstdint>
#include <string_view>

namespace zerograph {

// What a node does in a training step, numbered as Paddle's OpRole so that graphs written for the
// seed design read the same: 0 forward, 1 backward, 2 optimizer, plus bit 256 on the loss.
enum class OpRole : int64_t {
  kForward = 0,
  kBackward = 1,
  kOptimize = 2,
};
inline constexpr int64_t kLossRoleBit = 256;

// The attribute names under which annotations travel in ONNX (ONNX's checker skips names that start
// with two underscores, on standard ops too).
inline constexpr std::string_view kOpRoleAttr = "__op_role";
inline constexpr std::string_view kExecutionStreamAttr = "__execution_stream";
inline constexpr std::string_view kBucketAttr = "__bucket";
// The node attribute through which a node says it must wait, at the start of a step, for nodes of
// the previous step (STRINGS: their names). The overlap pass sets it; the executor turns it into a
// cross-step event.
inline constexpr std::string_view kAfterPreviousStepAttr = "__after_previous_step";

// Stream names, as Paddle's AutoParallelStreamType spells them.
inline constexpr std::string_view kComputeStream = "default";
inline constexpr std::string_view kCommStream = "auto_parallel_sharding";

// Our own operator domain.
inline constexpr std::string_view kZerographDomain = "org.zerograph";
inline constexpr std::string_view kTrainingDomain = "ai.onnx.preview.training";
// ONNX Runtime's ops (its training graphs' gradients).
inline constexpr std::string_view kMicrosoftDomain = "com.microsoft";

std::string_view OpRoleName(OpRole role);

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_OP_ROLE_H_
