#ifndef ZEROGRAPH_TRAIN_DATASET_H_
#define ZEROGRAPH_TRAIN_DATASET_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zerograph/ckpt/safetensors.h"
#include "zerograph/core/status.h"
#include "zerograph/runtime/kernel.h"

namespace zerograph {

class Graph;
struct TrainingSpec;

// The rows a training graph's data inputs take, from a safetensors file holding one tensor per
// data input (named like it, first dimension = samples). Batches are read in order, wrapping
// around at the end, and the global batch is split contiguously across ranks:
//
//   global batch of step s = samples [s·B, s·B + B) (mod samples), B = rows_per_rank · nranks
//   rank r reads rows [r·rows_per_rank, (r+1)·rows_per_rank) of it
//
// so the same global batch reaches N ranks as it reaches one.
class Dataset {
 public:
  // Opens `path` and checks it against the graph's data inputs: each present, of the input's
  // dtype and per-row shape, all with the same number of samples. `rows_per_rank` is the batch
  // dimension the graph declares; a symbolic one (an exported model's `batch`) is bound to
  // `global_batch` / `nranks` (0: not given, an error then), and other symbolic dimensions to the
  // file's. Errors name the file and the tensor.
  static StatusOr<std::unique_ptr<Dataset>> Open(const std::string& path, const Graph& graph,
                                                 const TrainingSpec& spec, int64_t nranks,
                                                 int64_t global_batch = 0);

  int64_t samples() const { return samples_; }
  int64_t rows_per_rank() const { return rows_per_rank_; }
  int64_t global_batch() const { return rows_per_rank_ * nranks_; }
  // The shape one rank feeds for each data input: [rows_per_rank, ...].
  const std::vector<std::pair<std::string, runtime::TensorSpec>>& inputs() const { return inputs_; }

  // Copies rank `rank`'s rows of data input `input` for `step` into `out`.
  Status Rows(std::string_view input, int64_t step, int64_t rank, std::span<std::byte> out) const;

 private:
  Dataset() = default;

  std::unique_ptr<SafetensorsFile> file_;
  std::vector<std::pair<std::string, runtime::TensorSpec>> inputs_;
  int64_t samples_ = 0;
  int64_t rows_per_rank_ = 0;
  int64_t nranks_ = 1;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_TRAIN_DATASET_H_
