#ifndef ZEROGRAPH_TRAIN_TRAINER_H_
#define ZEROGRAPH_TRAIN_TRAINER_H_

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/runtime/executor.h"
#include "zerograph/train/dataset.h"
#include "zerograph/train/lr_schedule.h"

namespace zerograph {

class Graph;

namespace runtime {
class Communicator;
class Device;
class KernelRegistry;
class Stream;
}  // namespace runtime

struct TrainOptions {
  // Steps to run, starting at 0-based step `first_step` (a resumed run starts later).
  int64_t steps = 1;
  int64_t first_step = 0;
  LrSchedule schedule;
  // Rank 0 writes each step's loss with its exact bits here ("" for none).
  std::string loss_log;
  // A Chrome trace of every node on every stream and rank ("" for none).
  std::string trace;
  // Rank 0's step lines and summary (null: silent).
  std::ostream* out = nullptr;
  // A progress bar on rank 0's stderr when it is a terminal, erased before each step line.
  bool progress = true;
  // Called on every rank after each step (0-based), once its line is out: where graph-exec saves
  // checkpoints. `stopping` is true after the last step a stop request lets run. An error stops
  // training. Optional.
  std::function<Status(int64_t step, bool stopping)> after_step;
  // The signal this rank was asked to stop by (SIGINT, SIGTERM), or 0: read once per step. The
  // ranks agree on it with the step's loss, so every rank stops after the same step. Optional.
  std::function<int()> stop_signal;
};

struct StepResult {
  int64_t step = 0;  // 0-based
  float loss = 0;    // the mean over ranks, so N ranks report what one rank would
  float lr = 0;
  double seconds = 0;
  // With gradient control (GradientControlPass): the global gradient norm (unscaled, before
  // clipping), whether the update was skipped (its gradients overflowed under loss scaling), and
  // the loss scale the next step uses (0 without loss scaling).
  bool controlled = false;
  float grad_norm = 0;
  bool skipped = false;
  float loss_scale = 0;
};

// Trains a graph on one rank of a group: feeds each step this rank's rows of the global batch,
// the learning rate and the 1-based update count, runs the executor, and averages the loss over
// ranks. Every rank runs the same steps.
class Trainer {
 public:
  // Plans the graph for this rank (the executor) against the dataset's shapes. `global_batch`
  // (0: not given) binds a symbolic batch dimension (Dataset::Open).
  static StatusOr<std::unique_ptr<Trainer>> Create(const Graph& graph, const std::string& data_path,
                                                   runtime::Device& device,
                                                   runtime::Communicator& comm,
                                                   const runtime::KernelRegistry& registry,
                                                   bool trace, int64_t global_batch = 0);

  StatusOr<std::vector<StepResult>> Train(const TrainOptions& options);

  runtime::Executor& executor() { return *executor_; }
  // The signal the last Train stopped for (SIGINT wins over SIGTERM when ranks differ), or 0.
  int stopped_by_signal() const { return stopped_by_signal_; }
  const Dataset& dataset() const { return *dataset_; }

 private:
  Trainer() = default;
  Status WriteTrace(const std::string& path);
  Status CopyStepControl(runtime::Stream& stream);

  const Graph* graph_ = nullptr;
  TrainingSpec spec_;
  runtime::Device* device_ = nullptr;
  runtime::Communicator* comm_ = nullptr;
  std::unique_ptr<Dataset> dataset_;
  std::unique_ptr<runtime::Executor> executor_;
  // Per step, reduced over ranks: [loss (mean), SIGINT requests, SIGTERM requests (means)].
  runtime::DeviceTensor step_summary_;
  // The gradient control's outputs, when the graph has them: the control [multiplier, skip,
  // norm] and the new loss scale (may be empty), and their copy [4] read after each step.
  std::string control_output_;
  std::string loss_scale_output_;
  runtime::DeviceTensor step_control_;
  int stopped_by_signal_ = 0;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_TRAIN_TRAINER_H_
