#ifndef ZEROGRAPH_CKPT_CHECKPOINT_CONVERT_H_
#define ZEROGRAPH_CKPT_CHECKPOINT_CONVERT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

#include "zerograph/ckpt/checkpoint.h"
#include "zerograph/core/status.h"

namespace zerograph {

struct ConvertOptions {
  CheckpointKind to = CheckpointKind::kBalanced;
  // Rank count of the result; 0 keeps the input's (or takes the target graph's).
  int64_t nranks = 0;
  // The graph an unbalanced result must fit (its layout); null keeps the input's layout.
  const StateModel* target = nullptr;
  // Print the copy plan (each output piece and the input ranges it comes from) and byte counts;
  // write nothing.
  bool dry_run = false;
  // Consolidated: also write the optimizer states, and start a new file above this many bytes.
  bool with_states = false;
  // Consolidated: write parameters that have an fp32 master copy from it (fp32), not as trained.
  bool master_weights = false;
  int64_t max_file_bytes = int64_t{5} << 30;
  // Bytes copied at a time: the memory a conversion needs, whatever the model's size.
  size_t chunk_bytes = size_t{16} << 20;
  std::ostream* out = nullptr;  // the plan and a summary (null: silent)
  // Called with the tensor bytes written so far and the total after every chunk, and once more at
  // the end (done == total); for a progress bar. Null: not called.
  std::function<void(int64_t done, int64_t total)> progress;
};

// Converts checkpoint `in` (a checkpoint folder or a --save folder) into a new folder `out` of
// another kind or rank count, by interval intersection of the layouts: every element of the
// result is read from the stored piece that covers it, a chunk at a time. Input checksums are
// computed from the copy's own reads (each input byte is read once) and all verified before the
// result is committed; the result gets its own. `out` must not exist; it appears whole or not at
// all (written under a temporary name, renamed only when every input checksum matched).
Status ConvertCheckpoint(const std::string& in, const std::string& out,
                         const ConvertOptions& options);

}  // namespace zerograph

#endif  // ZEROGRAPH_CKPT_CHECKPOINT_CONVERT_H_
