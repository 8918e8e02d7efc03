#ifndef ZEROGRAPH_SRC_PASSES_BUFFER_FUSION_H_
#define ZEROGRAPH_SRC_PASSES_BUFFER_FUSION_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"

namespace zerograph {

class Graph;
class Tensor;
class Value;

// Fills fused initializers (tensors laid end to end at element offsets, zeros between) on a
// worker thread while the caller goes on editing the graph. Fusing a large model's parameters and
// optimizer states writes hundreds of MB of fresh pages, and none of the edits that follow read
// those bytes. Each byte is written once: there is no zeroing pass before the copies.
class BufferFusion {
 public:
  BufferFusion() = default;
  BufferFusion(const BufferFusion&) = delete;
  BufferFusion& operator=(const BufferFusion&) = delete;
  // Stops the worker after the buffer it is filling; none is handed over.
  ~BufferFusion();

  // Fills initializer `target` (`total` elements of `dtype`, its bytes not yet set) with
  // `sources[i]` at element `offsets[i]`, offsets ascending; a source of another floating dtype is
  // converted (master weights: fp32 copies of low-precision parameters). The sources must not
  // change until Finish: erasing their initializers does not change them.
  void Add(Value* target, std::vector<const Tensor*> sources, std::vector<int64_t> offsets,
           int64_t total, DataType dtype);

  // Waits for every buffer and gives each to its initializer; the first error, if any, names the
  // source tensor whose bytes could not be read.
  Status Finish(Graph& graph);

 private:
  struct Job {
    Value* target;
    std::vector<const Tensor*> sources;
    std::vector<int64_t> offsets;
    int64_t total;
    DataType dtype;
    std::string bytes;
    Status status;
  };

  // Fills `job.bytes`.
  static Status Fuse(Job& job);
  void Work();

  std::mutex mutex_;
  std::condition_variable added_;
  // A deque: the worker fills jobs in place while more are added.
  std::deque<Job> jobs_;
  size_t next_ = 0;
  bool finishing_ = false;
  // Set when the rewrite failed: the buffers will not be needed.
  bool dropping_ = false;
  // The worker, once one could be started.
  std::vector<std::thread> workers_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_SRC_PASSES_BUFFER_FUSION_H_
