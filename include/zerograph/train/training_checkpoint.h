#ifndef ZEROGRAPH_TRAIN_TRAINING_CHECKPOINT_H_
#define ZEROGRAPH_TRAIN_TRAINING_CHECKPOINT_H_

#include <cstdint>
#include <string>

#include "zerograph/ckpt/checkpoint.h"
#include "zerograph/core/status.h"

namespace zerograph {

namespace runtime {
class Communicator;
class Device;
class Executor;
}  // namespace runtime

// Where a training run's state lives: the executor of every rank, with the graph's state model.
struct TrainingState {
  const StateModel* model = nullptr;
  runtime::Executor* executor = nullptr;
  runtime::Communicator* comm = nullptr;
  runtime::Device* device = nullptr;
};

struct SaveCheckpointOptions {
  // Checkpoints go to `root`/step-NNNNNN; `root`/latest names the newest committed one.
  std::string root;
  CheckpointKind kind = CheckpointKind::kUnbalanced;
  int64_t step = 0;  // the last step run (0-based)
  int64_t global_batch = 0;
  std::string lr_schedule;
};

// Saves the state after step `options.step`; every rank calls it. Each rank writes its own file
// into `root`/.tmp-step-NNNNNN and flushes it; the ranks agree that all files are written; rank 0
// writes manifest.json, renames the folder to `root`/step-NNNNNN and points `root`/latest at it.
// A crash at any point leaves the previous checkpoint (and `latest`) as they were. Unbalanced:
// no communication but the agreement; balanced: the state shards are all-gathered first.
// Returns the checkpoint's folder.
StatusOr<std::string> SaveCheckpoint(const TrainingState& state,
                                     const SaveCheckpointOptions& options);

// Loads checkpoint `dir` into every rank's executor (each rank reads the ranges it holds). Refuses
// a checkpoint of another model, one trained with another global batch than this run's
// (`rows_per_rank` × ranks: the data position would not continue), and an unbalanced one of
// another layout, naming what differs and what fixes it (the batch dimension to give the graph;
// the checkpoint-convert command, which `graph_path` completes). The batch is checked first, so
// the suggested conversion leads to a run that continues.
StatusOr<CheckpointManifest> LoadCheckpoint(const TrainingState& state, const std::string& dir,
                                            const std::string& graph_path, int64_t rows_per_rank);

}  // namespace zerograph

#endif  // ZEROGRAPH_TRAIN_TRAINING_CHECKPOINT_H_
