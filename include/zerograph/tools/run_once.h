#ifndef ZEROGRAPH_TOOLS_RUN_ONCE_H_
#define ZEROGRAPH_TOOLS_RUN_ONCE_H_

#include <memory>
#include <string>

#include "zerograph/core/status.h"

// In namespace runtime, where it was declared before it moved above the runtime and the ONNX
// loader (it uses both).
namespace zerograph::runtime {

// Runs an ONNX model once on the CPU, as ONNX's backend tests do: reads `input_N.pb` from
// `input_dir` for the graph's N-th input that is not an initializer (N = 0, 1, ...), runs the
// graph, and writes `output_N.pb` (a TensorProto named after the output) into `output_dir`,
// creating it. An input's file fixes its shape, so dynamic dimensions need no other hint; its
// dtype must be the declared one. Inputs that a kernel reads while planning (Reshape's shape,
// ReduceSum's axes) are fed as constants, since all inputs are known before the run. Each output
// is written to a temporary file and renamed into place, so a reader never sees half a file.
//
// Errors name the file or tensor at fault: a missing file is NotFound, an unparsable one
// DataLoss, a dtype mismatch or an input file without a graph input InvalidArgument, an op
// without a kernel NotFound.
Status RunOnce(const std::string& model_path, const std::string& input_dir,
               const std::string& output_dir);

// RunOnce in its three parts, for a caller that runs the same model on the same inputs many
// times (bench/run_model_bench.cc): Prepare loads, plans and sets the inputs once; Run runs the
// graph again on them; WriteOutputs writes what the last run computed. Errors as RunOnce's.
class PreparedRun {
 public:
  static StatusOr<std::unique_ptr<PreparedRun>> Prepare(const std::string& model_path,
                                                        const std::string& input_dir);
  ~PreparedRun();
  PreparedRun(const PreparedRun&) = delete;
  PreparedRun& operator=(const PreparedRun&) = delete;

  Status Run();
  Status WriteOutputs(const std::string& output_dir) const;

 private:
  struct State;
  explicit PreparedRun(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_TOOLS_RUN_ONCE_H_
