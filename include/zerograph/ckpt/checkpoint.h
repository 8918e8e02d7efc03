#ifndef ZEROGRAPH_CKPT_CHECKPOINT_H_
#define ZEROGRAPH_CKPT_CHECKPOINT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/layout_manifest.h"

namespace zerograph {

class Graph;

// The checkpoint kinds of docs/formats.md ("Checkpoints").
enum class CheckpointKind {
  kUnbalanced,    // each rank's buffers as they are in memory (fused bucket shards)
  kBalanced,      // every parameter and state under its own name, evenly split over the files
  kConsolidated,  // full parameters (and optionally states), readable by any safetensors reader
};
std::string_view CheckpointKindName(CheckpointKind kind);
StatusOr<CheckpointKind> ParseCheckpointKind(std::string_view name);

// A named tensor of a training state: a fused buffer, or an unfused parameter or optimizer state.
struct StateTensor {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  // Unfused tensors: true for a parameter, false for an optimizer state.
  bool is_param = false;
  int64_t numel() const;
  friend bool operator==(const StateTensor&, const StateTensor&) = default;
};

// What a graph trains, as a checkpoint sees it. `buffers` are the initializers the state binding
// replaces (for a rewritten graph the fused `fused@bucketK` and `fused@bucketK.stateJ`); the
// `canonical` tensors are the same state unfused: every parameter and optimizer state under its
// original name and shape, which is the same for the training graph and every rewrite of it.
struct StateModel {
  std::optional<LayoutManifest> layout;  // absent for a graph that is not rewritten
  std::vector<StateTensor> buffers;      // sorted by name
  std::vector<StateTensor> canonical;    // sorted by name

  static StatusOr<StateModel> FromGraph(const Graph& graph);
  int64_t nranks() const { return layout ? layout->nranks : 1; }
  // "fnv1a64:..." over the canonical tensors (names, dtypes, shapes): equal for two graphs that
  // train the same model, whatever their rank count and buckets.
  std::string ModelHash() const;
  // The buffer or canonical tensor called `name`, or null.
  const StateTensor* FindBuffer(std::string_view name) const;
  const StateTensor* FindCanonical(std::string_view name) const;
  // When `buffer` is a bucket buffer of the layout: its bucket and, for a state buffer, the state
  // index (-1 for the parameter buffer).
  struct BucketRef {
    const LayoutManifest::Bucket* bucket = nullptr;
    int state = -1;
  };
  std::optional<BucketRef> FindBucketBuffer(std::string_view buffer) const;
};

// One stored piece of a tensor: elements [begin, end) of the flattened tensor, in `file`.
struct CheckpointPiece {
  std::string file;
  int64_t begin = 0;
  int64_t end = 0;
};

// A stored tensor: its global dtype and shape and the pieces that cover it. In the safetensors
// files each piece is a 1-D tensor named like the tensor (a file holds at most one piece of each).
struct CheckpointTensor {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<CheckpointPiece> pieces;  // by begin, disjoint
  // A planned tensor read from another one of the input (a consolidated parameter written from
  // its fp32 master copy); empty: from `name`. Not part of a manifest.
  std::string source;
  int64_t numel() const;
  const std::string& source_name() const { return source.empty() ? name : source; }
};

// manifest.json of a checkpoint directory (docs/formats.md, "Checkpoints").
struct CheckpointManifest {
  static constexpr int kFormatVersion = 1;
  CheckpointKind kind = CheckpointKind::kUnbalanced;
  // The last step run (0-based), and the step training continues at (= the data position: the
  // dataset's batch of step s is a pure function of s).
  int64_t step = -1;
  int64_t next_step = 0;
  int64_t nranks = 1;
  int64_t global_batch = 0;
  // The LR schedule that trained it ("linear-warmup(...)"), for messages: the rate is a pure
  // function of the step, so restoring the step restores it.
  std::string lr_schedule;
  std::optional<LayoutManifest> layout;
  std::string model_hash;
  StateModel model;  // the buffers and canonical tensors of the graph that wrote it
  std::vector<CheckpointTensor> tensors;
  struct File {
    std::string name;
    int64_t bytes = 0;
    uint32_t crc32 = 0;
  };
  std::vector<File> files;

  std::string ToJson() const;
  static StatusOr<CheckpointManifest> FromJson(std::string_view json);
  const CheckpointTensor* FindTensor(std::string_view name) const;
};

// "rank-00001-of-00004.safetensors".
std::string RankFileName(int64_t rank, int64_t nranks);

// What each file of a checkpoint holds: for every file, the pieces it stores, as
// (tensor, [begin, end)). Unbalanced: rank r's file holds [r·S, (r+1)·S) of every bucket buffer and
// rank 0's every whole buffer. Balanced: rank r's file holds elements
// [floor(r·n/M), floor((r+1)·n/M)) of every canonical tensor of n elements.
struct CheckpointPlan {
  std::vector<CheckpointTensor> tensors;
  std::vector<std::string> files;
};
CheckpointPlan PlanCheckpoint(CheckpointKind kind, const StateModel& model, int64_t nranks);
// Consolidated: the full parameters (and, with `with_states`, the optimizer states) in
// `model.safetensors`, or split over `model-0000i-of-0000k.safetensors` so that no file holds more
// than `max_file_bytes` of data (a tensor larger than that gets a file of its own). With
// `master_weights`, a parameter that has an fp32 master copy (--master-weights) is written from it,
// in fp32, under the parameter's name.
CheckpointPlan PlanConsolidated(const StateModel& model, bool with_states, int64_t max_file_bytes,
                                bool master_weights = false);

// When a CheckpointReader verifies a file's checksum.
enum class ChecksumTiming {
  // Before the first read from the file, by reading it whole: whatever a read returns is verified.
  kBeforeReading,
  // From the reads themselves (each range checksummed as it is copied), completed by VerifyAll(),
  // which reads only what no read covered: every byte is read once, but what reads return is
  // unverified until VerifyAll() succeeds. For a caller that commits nothing before that.
  kWhileReading,
};

// An opened checkpoint: reads any element range of any tensor, fused or not, whichever kind it
// was saved as. Files are opened on first use, and their checksums verified as `timing` says.
class CheckpointReader {
 public:
  // Reads `dir`/manifest.json. A directory without one is refused as not committed.
  static StatusOr<std::unique_ptr<CheckpointReader>> Open(
      const std::string& dir, ChecksumTiming timing = ChecksumTiming::kBeforeReading);
  ~CheckpointReader();

  const CheckpointManifest& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }

  // Copies elements [begin, end) of canonical tensor `name` (a parameter or optimizer state under
  // its unfused name) into `out`, wherever the checkpoint stores them.
  Status ReadCanonical(std::string_view name, int64_t begin, int64_t end, std::span<std::byte> out);
  // Copies elements [begin, end) of `buffer` of `target` (a fused bucket buffer or a whole state
  // tensor): from the same buffer when the checkpoint has the same layout, else parameter by
  // parameter from the canonical tensors, zeros in the padding.
  Status ReadBuffer(const StateModel& target, std::string_view buffer, int64_t begin, int64_t end,
                    std::span<std::byte> out);
  // Verifies every file's checksum (opening those not used yet, reading what was not read).
  Status VerifyAll();

  // Where a read's bytes come from: bytes [begin, end) of `piece` of stored tensor `tensor` (as
  // the piece is stored in its file) go to bytes [out_offset, out_offset + end - begin) of the
  // output. Pointers into manifest().
  struct SourceRange {
    const CheckpointTensor* tensor = nullptr;
    const CheckpointPiece* piece = nullptr;
    int64_t begin = 0;
    int64_t end = 0;
    int64_t out_offset = 0;
  };
  // The source ranges of ReadCanonical / ReadBuffer for an output of `out_bytes`, in output order
  // (bytes of the output no range covers are padding, read as zeros). Reads no file.
  StatusOr<std::vector<SourceRange>> LocateCanonical(std::string_view name, int64_t begin,
                                                     int64_t end, int64_t out_bytes) const;
  StatusOr<std::vector<SourceRange>> LocateBuffer(const StateModel& target, std::string_view buffer,
                                                  int64_t begin, int64_t end,
                                                  int64_t out_bytes) const;

 private:
  struct OpenedFile;

  CheckpointReader() = default;
  Status LocateStored(const CheckpointTensor& tensor, int64_t begin, int64_t end,
                      int64_t out_offset, std::vector<SourceRange>& ranges) const;
  Status LocateCanonical(std::string_view name, int64_t begin, int64_t end, int64_t out_bytes,
                         int64_t out_offset, std::vector<SourceRange>& ranges) const;
  // Reads `ranges` into `out`, zeros where no range goes.
  Status Copy(std::span<const SourceRange> ranges, std::span<std::byte> out);
  StatusOr<OpenedFile*> File(const std::string& name);
  Status VerifyChecksum(const std::string& name, OpenedFile& file);

  std::string dir_;
  ChecksumTiming timing_ = ChecksumTiming::kBeforeReading;
  CheckpointManifest manifest_;
  std::map<std::string, std::unique_ptr<OpenedFile>, std::less<>> files_;
};

// The checkpoint folder `path` names: itself when it has manifest.json, else the one its
// `latest` file names (a --save root).
StatusOr<std::string> ResolveCheckpointDir(const std::string& path);

// Produces the bytes of elements [begin, end) of a planned tensor, in chunks.
using PieceSource = std::function<Status(const CheckpointTensor& tensor, int64_t begin, int64_t end,
                                         std::span<std::byte> out)>;

// Writes `plan`'s file `file_index` into `dir` through an AtomicFile (`dir` is itself the
// checkpoint's temporary folder), pulling the bytes through `source` at most `chunk_bytes` at a
// time. The file is on disk when this returns.
// Returns the file's size and CRC-32.
StatusOr<CheckpointManifest::File> WriteCheckpointFile(const std::string& dir,
                                                       const CheckpointPlan& plan,
                                                       size_t file_index, const PieceSource& source,
                                                       size_t chunk_bytes = size_t{16} << 20);

}  // namespace zerograph

#endif  // ZEROGRAPH_CKPT_CHECKPOINT_H_
