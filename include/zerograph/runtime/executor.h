#ifndef ZEROGRAPH_RUNTIME_EXECUTOR_H_
#define ZEROGRAPH_RUNTIME_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/kernel.h"

namespace zerograph {
class Graph;
}  // namespace zerograph

namespace zerograph::runtime {

class Communicator;
class Device;
class KernelRegistry;
class Stream;

struct ExecutorOptions {
  // Types of the graph inputs fed each step, when they differ from the declared ones (a data
  // input holds this rank's share of the global batch). Other inputs take their declared type.
  std::map<std::string, TensorSpec, std::less<>> input_specs;
  // Apply `zerograph.state_binding` after each step (training); off for a one-shot run.
  bool bind_state = true;
  // Record when each node starts and ends, for a Chrome trace.
  bool trace = false;
};

// One node's run as the trace records it.
struct TraceEvent {
  std::string name;
  std::string op_type;
  std::string stream;
  // The executor's run it belongs to, from 0.
  int64_t step = 0;
  // Microseconds of the machine's monotonic clock (the same in every process on a machine).
  double start_us = 0;
  double end_us = 0;
};

// Memory the plan holds, in bytes.
struct MemoryReport {
  size_t parameters_and_states = 0;  // initializers (this rank's shards of fused states)
  size_t inputs = 0;
  size_t activations = 0;  // node outputs after buffer reuse
  size_t activations_without_reuse = 0;
  size_t total() const { return parameters_and_states + inputs + activations; }
};

// Runs a graph on one rank, step after step, on two streams: each node on its annotated stream
// (compute "default", communication "auto_parallel_sharding"), a value produced on one stream and
// read on another joined by an event, and `__after_previous_step` waits across steps.
//
// Everything is decided once, in Create: the kernel of every node (an op without a kernel is named
// before step 1), every shape, and the memory plan. Parameters are views into their fused
// buckets; gradients are written straight into the fused gradient buffer (CoalesceTensors copies
// nothing); optimizer updates and the all-gather work in place; activations share buffers by
// liveness, never a buffer the communication stream touches. One rank materialises only its shard
// of initializers read solely through LocalShard (the fused optimizer states).
class Executor {
 public:
  static StatusOr<std::unique_ptr<Executor>> Create(const Graph& graph, Device& device,
                                                    Communicator& comm,
                                                    const KernelRegistry& registry,
                                                    ExecutorOptions options);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Copies host bytes into graph input `name` for the next step; sizes must match its type.
  Status SetInput(std::string_view name, std::span<const std::byte> bytes);
  // Runs one step, then the state binding; returns when the compute stream is done (the
  // communication stream may still be gathering: the next step waits for it where it must).
  // `step` is what step-dependent kernels see (KernelContext::step: Dropout's mask): a resumed
  // run passes the global step, so it draws what the uninterrupted run would. Without it, the
  // step after the previous run's (0 first).
  Status Run(int64_t step);
  Status Run();
  // Waits for both streams.
  Status Synchronize();

  // The tensor holding value `name` (a graph output, input or initializer; intermediate values
  // may share memory with others), or null.
  const DeviceTensor* Find(std::string_view name) const;
  // Copies value `name` to the host after Synchronize.
  StatusOr<std::vector<std::byte>> Fetch(std::string_view name) const;

  Stream& compute_stream();
  Stream& comm_stream();
  const MemoryReport& memory() const;
  // Trace events of every step so far (empty unless ExecutorOptions::trace).
  std::vector<TraceEvent> TakeTrace();

 private:
  class Impl;
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_EXECUTOR_H_
