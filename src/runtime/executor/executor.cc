#include "zerograph/runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/kernel_registry.h"
#include "zerograph/runtime/stream.h"

namespace zerograph::runtime {
namespace {

constexpr int64_t kEndOfStep = std::numeric_limits<int64_t>::max();

std::string Label(const Node& node) {
  return StrCat("node '", node.name(), "' (", node.op_type(), ")");
}

// Shape and Size: their outputs follow from their inputs' shapes, computed while planning; the
// inputs' data is never read.
bool ReadsShapeOnly(const Node& node) {
  return node.contract() != nullptr && node.contract()->values_from_shapes != nullptr;
}

size_t SpecBytes(const TensorSpec& spec) {
  return static_cast<size_t>(NumElements(spec.shape)) * ElementSize(spec.dtype);
}

// A region of memory that values share: an initializer, an input, or a node output that others
// view or update in place. Roots become buffers after liveness analysis.
struct Root {
  size_t bytes = 0;
  // Initializers, graph inputs and constants: own buffers, filled before the first step.
  bool persistent = false;
  // Touched by a stream other than compute: kept out of buffer reuse, since the compute stream's
  // order says nothing about when the other stream is done with it.
  bool off_compute = false;
  int64_t first_def = kEndOfStep;
  int64_t last_use = -1;
  std::shared_ptr<Buffer> buffer;
  std::vector<const Value*> aliases;
};

// Where a value lives.
struct Placement {
  int64_t root = -1;
  size_t byte_offset = 0;
  TensorSpec spec;
};

// steady_clock's own epoch (boot on Linux) is shared by every process on a machine, so traces of
// the ranks line up in time.
double MicrosecondsNow() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct PlannedNode {
  const Node* node = nullptr;
  std::unique_ptr<OpKernel> kernel;
  Stream* stream = nullptr;
  std::vector<const DeviceTensor*> inputs;
  std::vector<DeviceTensor*> outputs;
  std::vector<Event*> waits;
  Event* done = nullptr;
  // Its outputs are views the plan already made (LocalShard of a shard this rank holds): nothing
  // to run.
  bool elided = false;
};

// A node's run on a GPU whose times are read after the step: indices of its timeline marks.
struct GpuTraceEntry {
  const PlannedNode* planned;
  int64_t step;
  size_t start_mark;
  size_t end_mark;
};

// A copy that applies one entry of the state binding after a step.
struct BindingCopy {
  const DeviceTensor* from;
  DeviceTensor* to;
  Event* wait;  // the producer's event when it ran on another stream
};

}  // namespace

class Executor::Impl {
 public:
  Impl(const Graph& graph, Device& device, Communicator& comm, ExecutorOptions options)
      : graph_(graph), device_(device), comm_(comm), options_(std::move(options)) {}

  Status Plan(const KernelRegistry& registry);
  Status SetInput(std::string_view name, std::span<const std::byte> bytes);
  Status Run(int64_t step);
  // The step after the last run's (0 before the first).
  int64_t next_step() const { return step_; }
  Status Synchronize();
  const DeviceTensor* Find(std::string_view name) const;
  StatusOr<std::vector<std::byte>> Fetch(std::string_view name) const;
  Stream& compute_stream() { return *streams_.at(std::string(kComputeStream)); }
  Stream& comm_stream() { return *streams_.at(std::string(kCommStream)); }
  const MemoryReport& memory() const { return memory_; }
  std::vector<TraceEvent> TakeTrace();

 private:
  Status CheckRanks();
  StatusOr<Stream*> StreamFor(std::string_view name);
  Status PlaceSources();
  Status PlaceNode(int64_t index, const Node& node, const KernelRegistry& registry);
  int64_t NewRoot(size_t bytes, bool persistent);
  void Alias(const Value& value, int64_t root, size_t byte_offset, const TensorSpec& spec);
  // True when every reader of every value sharing `root` runs no later than `node`.
  bool RootDeadAfter(int64_t root, const Node& node) const;
  std::optional<Placement> InPlaceGather(const Node& node, const TensorSpec& out) const;
  std::optional<Placement> InPlaceUpdate(const Node& node, int input, const TensorSpec& out) const;
  Status AssignBuffers();
  Status BuildSchedule();
  Status Materialize(const Value& value);
  // Whether `value` is known before any step runs: an initializer or a value computed while
  // planning (a Constant's, a Shape's, small integer arithmetic on them).
  bool KnownAtPlanning(const Value& value) const;
  // Whether `node`, with outputs `infos`, is computed once while planning: small integer outputs
  // (shape arithmetic: Shape -> Gather -> Concat -> Reshape) from values known then.
  bool FoldsWhilePlanning(const Node& node, std::span<const OutputInfo> infos) const;
  // Computes `planned`'s outputs now and keeps them for every step.
  Status ComputeWhilePlanning(PlannedNode& planned, std::span<const TensorSpec* const> input_specs);
  StatusOr<const DeviceTensor*> HostMirror(const Value& value, const Node& reader);
  // Whether `kernel` reads input `i` from a host mirror (the device is not host accessible).
  bool ReadsFromHostMirror(const OpKernel& kernel, size_t i) const;
  // A state-binding copy in the compute stream's order.
  Status CopyBinding(const BindingCopy& copy);
  // Compute between two marks of `timeline_`; CollectGpuTrace turns them into trace events.
  Status ComputeTimedOnGpu(const PlannedNode& planned, const KernelContext& ctx, int64_t step);
  Status CollectGpuTrace();
  Event* DoneEvent(size_t planned_index);

  const Graph& graph_;
  // The op contracts of the graph's nodes.
  GraphContracts contracts_{graph_};
  Device& device_;
  Communicator& comm_;
  ExecutorOptions options_;

  std::optional<TrainingSpec> spec_;
  std::map<std::string, std::unique_ptr<Stream>, std::less<>> streams_;
  std::vector<std::unique_ptr<Event>> events_;
  std::vector<Root> roots_;
  std::vector<std::optional<Placement>> placements_;  // by value id
  std::vector<DeviceTensor> tensors_;                 // by value id
  // Where the device's memory is not host accessible (CUDA): host copies of the values kernels
  // read on the host (lr, step, shapes), by value id, in memory of `host_device_`.
  std::unique_ptr<Device> host_device_;
  std::unordered_map<int64_t, DeviceTensor> host_mirrors_;
  std::vector<PlannedNode> planned_;
  std::unordered_map<const Node*, size_t> planned_index_;
  std::vector<BindingCopy> binding_copies_;
  // Gradients CoalesceTensors fuses: value id -> (fused root, byte offset).
  std::unordered_map<int64_t, std::pair<const Node*, int64_t>> fused_gradients_;
  std::unordered_map<const Node*, int64_t> fused_roots_;
  // Initializers read only through LocalShard: this rank holds only its shard.
  std::unordered_map<int64_t, int64_t> shard_only_;  // value id -> shard elements
  std::set<int64_t> binding_targets_;                // value ids of initializers bound to
  std::set<int64_t> binding_sources_;
  // Values computed while planning (ComputeWhilePlanning), by id.
  std::set<int64_t> known_at_planning_;
  MemoryReport memory_;
  int64_t step_ = 0;
  std::mutex trace_mutex_;
  std::vector<TraceEvent> trace_;
  // Tracing on a GPU (see ComputeTimedOnGpu).
  std::unique_ptr<GpuTimeline> timeline_;
  std::vector<GpuTraceEntry> gpu_trace_;
};

Status Executor::Impl::CheckRanks() {
  ZG_ASSIGN_OR_RETURN(spec_, ReadTrainingSpec(graph_));
  const int64_t graph_ranks = spec_ && spec_->nranks ? *spec_->nranks : 1;
  ZG_RETURN_IF_NOT(graph_ranks == comm_.size(), "the graph is rewritten for ", graph_ranks,
                   " ranks, but ", comm_.size(),
                   " ranks run it: rewrite the training graph with "
                   "rewrite-graph --nranks ",
                   comm_.size());
  if (spec_ && options_.bind_state) {
    for (const auto& [new_name, old_name] : spec_->state_binding) {
      binding_sources_.insert(graph_.FindValue(new_name)->id());
      binding_targets_.insert(graph_.FindValue(old_name)->id());
    }
  }
  return Status::Ok();
}

StatusOr<Stream*> Executor::Impl::StreamFor(std::string_view name) {
  auto it = streams_.find(name);
  if (it != streams_.end()) return it->second.get();
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, device_.CreateStream(name));
  Stream* raw = stream.get();
  streams_.emplace(std::string(name), std::move(stream));
  return raw;
}

int64_t Executor::Impl::NewRoot(size_t bytes, bool persistent) {
  Root& root = roots_.emplace_back();
  root.bytes = bytes;
  root.persistent = persistent;
  return static_cast<int64_t>(roots_.size()) - 1;
}

void Executor::Impl::Alias(const Value& value, int64_t root, size_t byte_offset,
                           const TensorSpec& spec) {
  placements_[static_cast<size_t>(value.id())] = Placement{root, byte_offset, spec};
  roots_[static_cast<size_t>(root)].aliases.push_back(&value);
}

// Initializers, inputs and constants get their own buffers, filled before the first step.
Status Executor::Impl::PlaceSources() {
  for (const Value* value : graph_.initializers()) {
    const Tensor& tensor = *value->initializer();
    TensorSpec spec{tensor.dtype(), Shape(tensor.dims().begin(), tensor.dims().end())};
    bool only_local_shards = !value->users().empty();
    for (const Use& use : value->users()) {
      const OpContract* contract = contracts_.Find(*use.node);
      only_local_shards &= contract != nullptr && contract->memory.selects_rank_shard;
    }
    size_t bytes = SpecBytes(spec);
    if (only_local_shards && comm_.size() > 1) {
      const int64_t numel = NumElements(spec.shape);
      ZG_RETURN_IF_NOT(numel % comm_.size() == 0, "initializer '", value->name(), "' (", numel,
                       " elements) does not split into ", comm_.size(), " equal shards");
      shard_only_[value->id()] = numel / comm_.size();
      bytes /= static_cast<size_t>(comm_.size());
    }
    const int64_t root_id = NewRoot(bytes, /*persistent=*/true);
    Alias(*value, root_id, 0, spec);
    Root& root = roots_[static_cast<size_t>(root_id)];
    ZG_ASSIGN_OR_RETURN(root.buffer, device_.Allocate(bytes));
    memory_.parameters_and_states += bytes;
    ZG_ASSIGN_OR_RETURN(std::span<const std::byte> data, tensor.Bytes());
    Shape held = spec.shape;
    if (auto shard = shard_only_.find(value->id()); shard != shard_only_.end()) {
      held = Shape{shard->second};
      data = data.subspan(static_cast<size_t>(comm_.rank()) * bytes, bytes);
    }
    ZG_ASSIGN_OR_RETURN(tensors_[static_cast<size_t>(value->id())],
                        DeviceTensor::Create(root.buffer, 0, spec.dtype, held));
    ZG_RETURN_IF_ERROR(device_.CopyFromHost(data, tensors_[static_cast<size_t>(value->id())]));
  }
  for (const Value* value : graph_.inputs()) {
    if (value->initializer() != nullptr) continue;
    TensorSpec spec;
    if (auto it = options_.input_specs.find(value->name()); it != options_.input_specs.end()) {
      spec = it->second;
    } else {
      std::optional<TensorType> type = value->type();
      ZG_RETURN_IF_NOT(type && type->dims && type->numel(), "graph input '", value->name(),
                       "' has no fully known type; give its shape");
      spec = TensorSpec{type->dtype, *type->dims};
    }
    memory_.inputs += SpecBytes(spec);
    const int64_t root_id = NewRoot(SpecBytes(spec), /*persistent=*/true);
    Alias(*value, root_id, 0, spec);
    ZG_ASSIGN_OR_RETURN(roots_[static_cast<size_t>(root_id)].buffer,
                        device_.Allocate(SpecBytes(spec)));
    ZG_RETURN_IF_ERROR(Materialize(*value));
  }
  return Status::Ok();
}

bool Executor::Impl::RootDeadAfter(int64_t root, const Node& node) const {
  for (const Value* alias : roots_[static_cast<size_t>(root)].aliases) {
    if (alias->is_graph_output() || binding_sources_.count(alias->id()) > 0) return false;
    for (const Use& use : alias->users()) {
      if (use.node != &node && !use.node->IsBefore(node) && !ReadsShapeOnly(*use.node)) {
        return false;
      }
    }
  }
  return true;
}

// AllGather writes straight into the buffer its input is this rank's slice of.
std::optional<Placement> Executor::Impl::InPlaceGather(const Node& node,
                                                       const TensorSpec& out) const {
  const std::optional<Placement>& in = placements_[static_cast<size_t>(node.input(0)->id())];
  if (!in) return std::nullopt;
  const Root& root = roots_[static_cast<size_t>(in->root)];
  const size_t slice = SpecBytes(in->spec);
  if (root.bytes != SpecBytes(out) ||
      in->byte_offset != slice * static_cast<size_t>(comm_.rank())) {
    return std::nullopt;
  }
  if (root.persistent && binding_targets_.count(root.aliases.front()->id()) == 0)
    return std::nullopt;
  for (const Value* alias : root.aliases) {
    for (const Use& use : alias->users()) {
      if (use.node != &node && !use.node->IsBefore(node)) return std::nullopt;
    }
  }
  return Placement{in->root, 0, out};
}

// An update may overwrite its input when nothing reads that memory later in the step and, for
// an initializer, the binding replaces it at the end of the step anyway.
std::optional<Placement> Executor::Impl::InPlaceUpdate(const Node& node, int input,
                                                       const TensorSpec& out) const {
  const Value* value = node.input(static_cast<size_t>(input));
  if (value == nullptr) return std::nullopt;
  const std::optional<Placement>& in = placements_[static_cast<size_t>(value->id())];
  if (!in || SpecBytes(in->spec) != SpecBytes(out) || in->spec.dtype != out.dtype)
    return std::nullopt;
  const Root& root = roots_[static_cast<size_t>(in->root)];
  if (root.persistent) {
    const Value* owner = root.aliases.front();
    if (owner->initializer() == nullptr || binding_targets_.count(owner->id()) == 0)
      return std::nullopt;
  }
  if (!RootDeadAfter(in->root, node)) return std::nullopt;
  return Placement{in->root, in->byte_offset, out};
}

Status Executor::Impl::PlaceNode(int64_t index, const Node& node, const KernelRegistry& registry) {
  std::vector<const TensorSpec*> input_specs(node.num_inputs(), nullptr);
  std::vector<DataType> input_dtypes(node.num_inputs(), DataType::kUndefined);
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const Value* input = node.input(i);
    if (input == nullptr) continue;
    const std::optional<Placement>& placement = placements_[static_cast<size_t>(input->id())];
    ZG_RET_CHECK(placement.has_value(), Label(node), " reads '", input->name(),
                 "' before it is planned");
    input_specs[i] = &placement->spec;
    input_dtypes[i] = placement->spec.dtype;
  }
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                      registry.CreateKernel(node, device_.type(), input_dtypes, comm_.rank(),
                                            comm_.size(), graph_.OpsetVersion(node.domain())));
  std::vector<HostValue> host_values(node.num_inputs());
  std::vector<const HostValue*> input_values(node.num_inputs(), nullptr);
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const Value* input = node.input(i);
    if (input == nullptr) continue;
    // Shape inference may read constants only: inputs are filled after planning, every step.
    const bool constant = KnownAtPlanning(*input);
    const DeviceTensor* tensor = &tensors_[static_cast<size_t>(input->id())];
    if (ReadsFromHostMirror(*kernel, i)) {
      ZG_ASSIGN_OR_RETURN(tensor, HostMirror(*input, node));
    } else if (!device_.host_accessible()) {
      continue;  // in device memory, which shape inference on the host cannot read
    }
    if (constant && !tensor->empty()) {
      host_values[i] = tensor->host_value();
      input_values[i] = &host_values[i];
    }
  }
  ZG_ASSIGN_OR_RETURN(
      std::vector<OutputInfo> infos,
      kernel->InferOutputs(ShapeContext{&node, input_specs, input_values, comm_.size()}));
  // An op that fuses its inputs into output 0 (CoalesceTensors) gets a buffer of its own, into
  // which their producers write.
  const OpMemory& memory = kernel->contract()->memory;
  const bool fuses_inputs = memory.input_offsets_in_output != nullptr;
  bool elided = false;
  for (size_t o = 0; o < node.num_outputs(); ++o) {
    const Value* output = node.output(o);
    if (output == nullptr) continue;
    const OutputInfo& info = infos[o];
    std::optional<Placement> placement;
    if (info.view) {
      const Value* source = node.input(static_cast<size_t>(info.view->input));
      const Placement& in = *placements_[static_cast<size_t>(source->id())];
      if (shard_only_.count(source->id()) > 0) {
        placement = Placement{in.root, 0, info.spec};  // LocalShard of a shard this rank holds
        elided = true;
      } else {
        placement = Placement{
            in.root,
            in.byte_offset + static_cast<size_t>(info.view->offset) * ElementSize(in.spec.dtype),
            info.spec};
      }
    } else if (auto fused = fused_gradients_.find(output->id()); fused != fused_gradients_.end()) {
      auto [coalesce, byte_offset] = fused->second;
      auto root = fused_roots_.find(coalesce);
      if (root == fused_roots_.end()) {
        root = fused_roots_.emplace(coalesce, NewRoot(0, false)).first;
      }
      placement = Placement{
          root->second, static_cast<size_t>(byte_offset) * ElementSize(info.spec.dtype), info.spec};
    } else if (fuses_inputs) {
      auto root = fused_roots_.find(&node);
      if (root == fused_roots_.end()) root = fused_roots_.emplace(&node, NewRoot(0, false)).first;
      roots_[static_cast<size_t>(root->second)].bytes = SpecBytes(info.spec);
      placement = Placement{root->second, 0, info.spec};
    } else if (memory.gathers_rank_shards) {
      placement = InPlaceGather(node, info.spec);
    } else if (info.in_place_input) {
      placement = InPlaceUpdate(node, *info.in_place_input, info.spec);
    }
    if (!placement) placement = Placement{NewRoot(SpecBytes(info.spec), false), 0, info.spec};
    Alias(*output, placement->root, placement->byte_offset, placement->spec);
    Root& root = roots_[static_cast<size_t>(placement->root)];
    root.first_def = std::min(root.first_def, index);
  }
  // A Shape node, computed while planning, keeps no buffer alive (the backward's Shape of a
  // forward activation must not hold that activation until the backward).
  for (const Value* input : ReadsShapeOnly(node) ? std::span<Value* const>() : node.inputs()) {
    if (input == nullptr) continue;
    Root& root = roots_[static_cast<size_t>(placements_[static_cast<size_t>(input->id())]->root)];
    root.last_use = std::max(root.last_use, index);
    if (node.stream() != kComputeStream) root.off_compute = true;
  }
  if (node.stream() != kComputeStream) {
    for (const Value* output : node.outputs()) {
      if (output != nullptr) {
        roots_[static_cast<size_t>(placements_[static_cast<size_t>(output->id())]->root)]
            .off_compute = true;
      }
    }
  }
  PlannedNode& planned = planned_.emplace_back();
  planned.node = &node;
  planned.kernel = std::move(kernel);
  planned.elided = elided;
  ZG_ASSIGN_OR_RETURN(planned.stream, StreamFor(node.stream()));
  planned_index_[&node] = planned_.size() - 1;
  if (node.num_inputs() == 0 || planned.kernel->contract()->values_from_shapes != nullptr ||
      FoldsWhilePlanning(node, infos)) {
    ZG_RETURN_IF_ERROR(ComputeWhilePlanning(planned, input_specs));
  }
  return Status::Ok();
}

bool Executor::Impl::KnownAtPlanning(const Value& value) const {
  return value.initializer() != nullptr || known_at_planning_.count(value.id()) > 0;
}

bool Executor::Impl::FoldsWhilePlanning(const Node& node, std::span<const OutputInfo> infos) const {
  // Shape arithmetic only: a float node on constants may be random (Dropout) or large.
  constexpr int64_t kMaxElements = 4096;
  for (const OutputInfo& info : infos) {
    const DataType dtype = info.spec.dtype;
    if ((dtype != DataType::kInt64 && dtype != DataType::kInt32 && dtype != DataType::kBool) ||
        NumElements(info.spec.shape) > kMaxElements) {
      return false;
    }
  }
  for (const Value* output : node.outputs()) {
    if (output == nullptr) return false;  // kernels run with every output
  }
  for (const Value* input : node.inputs()) {
    // An initializer the state binding updates changes between steps.
    if (input != nullptr && (!KnownAtPlanning(*input) || binding_targets_.count(input->id()) > 0)) {
      return false;
    }
  }
  return true;
}

Status Executor::Impl::ComputeWhilePlanning(PlannedNode& planned,
                                            std::span<const TensorSpec* const> input_specs) {
  const Node& node = *planned.node;
  std::vector<DeviceTensor*> outputs;
  for (const Value* output : node.outputs()) {
    if (output == nullptr) continue;
    Root& root = roots_[static_cast<size_t>(placements_[static_cast<size_t>(output->id())]->root)];
    root.persistent = true;
    if (root.buffer == nullptr) {  // else a view of a value already computed
      memory_.parameters_and_states += root.bytes;
      ZG_ASSIGN_OR_RETURN(root.buffer, device_.Allocate(root.bytes));
    }
    ZG_RETURN_IF_ERROR(Materialize(*output));
    outputs.push_back(&tensors_[static_cast<size_t>(output->id())]);
    known_at_planning_.insert(output->id());
  }
  const OpKernel& kernel = *planned.kernel;
  if (auto values_from_shapes = kernel.contract()->values_from_shapes) {
    StatusOr<std::vector<int64_t>> values =
        values_from_shapes(ShapeContext{&node, input_specs, {}, comm_.size()});
    if (!values.ok()) return std::move(values).status().WithContext(Label(node));
    ZG_RETURN_IF_ERROR(device_.CopyFromHost(std::as_bytes(std::span(*values)), *outputs[0]));
  } else {
    std::vector<const DeviceTensor*> inputs(node.num_inputs(), nullptr);
    for (size_t i = 0; i < node.num_inputs(); ++i) {
      const Value* input = node.input(i);
      if (input == nullptr) continue;
      inputs[i] = &tensors_[static_cast<size_t>(input->id())];
      if (ReadsFromHostMirror(kernel, i)) {
        ZG_ASSIGN_OR_RETURN(inputs[i], HostMirror(*input, node));
      }
    }
    ZG_RETURN_IF_ERROR(kernel.Compute(KernelContext{inputs, outputs, planned.stream, &comm_}));
    ZG_RETURN_IF_ERROR(planned.stream->Synchronize());
  }
  planned.elided = true;
  return Status::Ok();
}

bool Executor::Impl::ReadsFromHostMirror(const OpKernel& kernel, size_t i) const {
  if (device_.host_accessible()) return false;
  const std::vector<int>& host = kernel.host_inputs();
  return std::find(host.begin(), host.end(), static_cast<int>(i)) != host.end();
}

// The host copy of `value` for `reader`, made on first use: graph inputs (SetInput fills it
// beside the device's copy), initializers and constants (copied from the device once, now). A
// value the device computes every step has none: reading it on the host would need a copy and a
// wait inside the step.
StatusOr<const DeviceTensor*> Executor::Impl::HostMirror(const Value& value, const Node& reader) {
  if (auto it = host_mirrors_.find(value.id()); it != host_mirrors_.end()) return &it->second;
  const bool constant = KnownAtPlanning(value);
  if ((!constant && !value.is_graph_input()) || binding_targets_.count(value.id()) > 0) {
    return UnimplementedError(
        StrCat(Label(reader), " reads '", value.name(), "' on the host, but ", device_.name(),
               " computes or updates it every step; on a device the host cannot read, only graph "
               "inputs, initializers and constants can be read on the host"));
  }
  if (host_device_ == nullptr) host_device_ = CreateCpuDevice();
  const DeviceTensor& on_device = tensors_[static_cast<size_t>(value.id())];
  ZG_ASSIGN_OR_RETURN(DeviceTensor mirror,
                      DeviceTensor::Allocate(*host_device_, on_device.dtype(), on_device.shape()));
  if (constant) {
    ZG_RETURN_IF_ERROR(device_.CopyToHost(
        on_device,
        std::span<std::byte>(static_cast<std::byte*>(mirror.data()), mirror.byte_size())));
  }
  return &host_mirrors_.emplace(value.id(), std::move(mirror)).first->second;
}

Status Executor::Impl::Materialize(const Value& value) {
  const Placement& placement = *placements_[static_cast<size_t>(value.id())];
  const Root& root = roots_[static_cast<size_t>(placement.root)];
  ZG_ASSIGN_OR_RETURN(tensors_[static_cast<size_t>(value.id())],
                      DeviceTensor::Create(root.buffer, placement.byte_offset, placement.spec.dtype,
                                           placement.spec.shape));
  return Status::Ok();
}

// Gives every root that is not persistent a buffer, sharing buffers between roots whose lives do
// not overlap (greedy, best fit by size, in order of definition).
Status Executor::Impl::AssignBuffers() {
  std::vector<size_t> order;
  for (size_t r = 0; r < roots_.size(); ++r) {
    if (roots_[r].buffer == nullptr) order.push_back(r);
  }
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return roots_[a].first_def < roots_[b].first_def; });
  std::multimap<size_t, std::shared_ptr<Buffer>> free_buffers;  // by size
  std::multimap<int64_t, size_t> live;                          // last use -> root
  for (size_t r : order) {
    Root& root = roots_[r];
    for (const Value* alias : root.aliases) {
      if (alias->is_graph_output() || binding_sources_.count(alias->id()) > 0) {
        root.last_use = kEndOfStep;
      }
    }
    // A root nothing reads is still written by its node: it lives through that node, so the
    // node's other outputs are not given its buffer.
    root.last_use = std::max(root.last_use, root.first_def);
    memory_.activations_without_reuse += root.bytes;
    while (!live.empty() && live.begin()->first < root.first_def) {
      Root& done = roots_[live.begin()->second];
      free_buffers.emplace(done.buffer->size(), done.buffer);
      live.erase(live.begin());
    }
    const bool reusable = !root.off_compute && root.last_use != kEndOfStep;
    if (reusable) {
      auto fit = free_buffers.lower_bound(root.bytes);
      if (fit != free_buffers.end()) {
        root.buffer = fit->second;
        free_buffers.erase(fit);
        live.emplace(root.last_use, r);
        continue;
      }
    }
    ZG_ASSIGN_OR_RETURN(root.buffer, device_.Allocate(root.bytes));
    memory_.activations += root.bytes;
    if (reusable) live.emplace(root.last_use, r);
  }
  return Status::Ok();
}

Event* Executor::Impl::DoneEvent(size_t planned_index) {
  PlannedNode& planned = planned_[planned_index];
  if (planned.done == nullptr) {
    StatusOr<std::unique_ptr<Event>> event = device_.CreateEvent();
    ZG_CHECK(event.ok(), event.status().ToString());
    planned.done = event->get();
    events_.push_back(std::move(event).value());
  }
  return planned.done;
}

// Wires tensors into every node's context and joins streams with events: a node waits for the
// producers of its inputs that run on other streams, and for the nodes named in
// `__after_previous_step` (recorded in the previous step).
Status Executor::Impl::BuildSchedule() {
  for (size_t p = 0; p < planned_.size(); ++p) {
    PlannedNode& planned = planned_[p];
    const Node& node = *planned.node;
    for (size_t i = 0; i < node.num_inputs(); ++i) {
      const Value* input = node.input(i);
      if (input == nullptr) {
        planned.inputs.push_back(nullptr);
        continue;
      }
      planned.inputs.push_back(ReadsFromHostMirror(*planned.kernel, i)
                                   ? &host_mirrors_.at(input->id())
                                   : &tensors_[static_cast<size_t>(input->id())]);
      if (input->producer() == nullptr) continue;
      auto producer = planned_index_.find(input->producer());
      if (producer == planned_index_.end() || planned_[producer->second].elided) continue;
      if (planned_[producer->second].stream == planned.stream) continue;
      Event* event = DoneEvent(producer->second);
      if (std::find(planned.waits.begin(), planned.waits.end(), event) == planned.waits.end()) {
        planned.waits.push_back(event);
      }
    }
    for (const Value* output : node.outputs()) {
      planned.outputs.push_back(output == nullptr ? nullptr
                                                  : &tensors_[static_cast<size_t>(output->id())]);
    }
    if (std::optional<std::vector<std::string_view>> after =
            node.GetStrings(kAfterPreviousStepAttr)) {
      for (std::string_view name : *after) {
        const Node* previous = graph_.FindNode(name);
        ZG_RETURN_IF_NOT(previous != nullptr && planned_index_.count(previous) > 0, Label(node),
                         ": ", kAfterPreviousStepAttr, " names '", name, "', which is no node");
        planned.waits.push_back(DoneEvent(planned_index_.at(previous)));
      }
    }
  }
  if (!spec_ || !options_.bind_state) return Status::Ok();
  for (const auto& [new_name, old_name] : spec_->state_binding) {
    const Value* from = graph_.FindValue(new_name);
    const Value* to = graph_.FindValue(old_name);
    DeviceTensor& target = tensors_[static_cast<size_t>(to->id())];
    const DeviceTensor& source = tensors_[static_cast<size_t>(from->id())];
    ZG_RETURN_IF_NOT(source.byte_size() == target.byte_size() && source.dtype() == target.dtype(),
                     "state binding: '", new_name, "' (", source.ToString(), ") cannot replace '",
                     old_name, "' (", target.ToString(), ")");
    if (source.data() == target.data()) continue;  // updated in place
    Event* wait = nullptr;
    if (from->producer() != nullptr) {
      size_t producer = planned_index_.at(from->producer());
      if (planned_[producer].stream != &compute_stream()) wait = DoneEvent(producer);
    }
    binding_copies_.push_back({&source, &target, wait});
  }
  return Status::Ok();
}

Status Executor::Impl::Plan(const KernelRegistry& registry) {
  ZG_RETURN_IF_ERROR(CheckRanks());
  placements_.resize(static_cast<size_t>(graph_.value_id_bound()));
  tensors_.resize(static_cast<size_t>(graph_.value_id_bound()));
  ZG_RETURN_IF_ERROR(StreamFor(kComputeStream).status());
  ZG_RETURN_IF_ERROR(StreamFor(kCommStream).status());
  if (options_.trace) {
    ZG_ASSIGN_OR_RETURN(timeline_, device_.CreateTimeline());
  }
  ZG_RETURN_IF_ERROR(registry.CheckEveryOpHasKernel(graph_, device_.type()));
  ZG_RETURN_IF_ERROR(PlaceSources());
  // Gradients that an op fuses into its output (CoalesceTensors) are produced straight into the
  // fused buffer.
  for (const Node* node : graph_.nodes()) {
    const OpContract* contract = contracts_.Find(*node);
    if (contract == nullptr || contract->memory.input_offsets_in_output == nullptr) continue;
    const std::vector<int64_t> offsets = contract->memory.input_offsets_in_output(*node);
    if (offsets.size() != node->num_inputs()) continue;
    for (size_t i = 0; i < node->num_inputs(); ++i) {
      const Value* gradient = node->input(i);
      if (gradient == nullptr || gradient->producer() == nullptr ||
          gradient->producer()->num_inputs() == 0 || gradient->is_graph_output() ||
          binding_sources_.count(gradient->id()) > 0 ||
          fused_gradients_.count(gradient->id()) > 0) {
        continue;
      }
      fused_gradients_[gradient->id()] = {node, offsets[i]};
    }
  }
  int64_t index = 0;
  for (const Node* node : graph_.nodes()) {
    Status placed = PlaceNode(index++, *node, registry);
    if (!placed.ok()) return placed;
  }
  ZG_RETURN_IF_ERROR(AssignBuffers());
  for (const Node* node : graph_.nodes()) {
    for (const Value* output : node->outputs()) {
      if (output != nullptr && tensors_[static_cast<size_t>(output->id())].empty()) {
        ZG_RETURN_IF_ERROR(Materialize(*output));
      }
    }
  }
  return BuildSchedule();
}

Status Executor::Impl::SetInput(std::string_view name, std::span<const std::byte> bytes) {
  const Value* value = graph_.FindValue(name);
  ZG_RETURN_IF_NOT(value != nullptr && value->is_graph_input(), "'", name, "' is no graph input");
  DeviceTensor& tensor = tensors_[static_cast<size_t>(value->id())];
  ZG_RETURN_IF_NOT(bytes.size() == tensor.byte_size(), "input '", name, "' takes ",
                   tensor.byte_size(), " bytes (", tensor.ToString(), "), got ", bytes.size());
  if (auto mirror = host_mirrors_.find(value->id()); mirror != host_mirrors_.end()) {
    ZG_RETURN_IF_ERROR(host_device_->CopyFromHost(bytes, mirror->second));
  }
  return device_.CopyFromHost(bytes, tensor);
}

Status Executor::Impl::Run(int64_t run) {
  step_ = run + 1;
  if (timeline_ != nullptr) {
    gpu_trace_.clear();
    ZG_RETURN_IF_ERROR(timeline_->Anchor(compute_stream()));
  }
  for (PlannedNode& planned : planned_) {
    if (planned.elided) continue;
    for (Event* event : planned.waits) ZG_RETURN_IF_ERROR(planned.stream->WaitEvent(*event));
    ZG_RETURN_IF_ERROR(planned.stream->Enqueue([this, &planned, step = run]() -> Status {
      KernelContext ctx{planned.inputs, planned.outputs, planned.stream, &comm_, step};
      if (!options_.trace) return planned.kernel->Compute(ctx);
      if (timeline_ != nullptr) return ComputeTimedOnGpu(planned, ctx, step);
      const double start = MicrosecondsNow();
      Status status = planned.kernel->Compute(ctx);
      const double end = MicrosecondsNow();
      std::lock_guard<std::mutex> lock(trace_mutex_);
      trace_.push_back({std::string(planned.node->name()), std::string(planned.node->op_type()),
                        planned.stream->name(), step, start, end});
      return status;
    }));
    if (planned.done != nullptr) ZG_RETURN_IF_ERROR(planned.stream->RecordEvent(*planned.done));
  }
  Stream& compute = compute_stream();
  for (const BindingCopy& copy : binding_copies_) {
    if (copy.wait != nullptr) ZG_RETURN_IF_ERROR(compute.WaitEvent(*copy.wait));
    ZG_RETURN_IF_ERROR(compute.Enqueue([this, copy] { return CopyBinding(copy); }));
  }
  ZG_RETURN_IF_ERROR(Synchronize());
  return CollectGpuTrace();
}

// On a GPU the task only launches the kernel, so the host's clock around it would time the
// launch: the node's times are those of timing events recorded around it on its stream.
Status Executor::Impl::ComputeTimedOnGpu(const PlannedNode& planned, const KernelContext& ctx,
                                         int64_t step) {
  ZG_ASSIGN_OR_RETURN(size_t start, timeline_->Mark(*planned.stream));
  Status status = planned.kernel->Compute(ctx);
  ZG_ASSIGN_OR_RETURN(size_t end, timeline_->Mark(*planned.stream));
  gpu_trace_.push_back({&planned, step, start, end});
  return status;
}

Status Executor::Impl::CollectGpuTrace() {
  if (timeline_ == nullptr) return Status::Ok();
  ZG_ASSIGN_OR_RETURN(std::vector<double> times, timeline_->MarkTimes());
  std::lock_guard<std::mutex> lock(trace_mutex_);
  for (const GpuTraceEntry& entry : gpu_trace_) {
    const Node& node = *entry.planned->node;
    trace_.push_back({std::string(node.name()), std::string(node.op_type()),
                      entry.planned->stream->name(), entry.step, times[entry.start_mark],
                      times[entry.end_mark]});
  }
  gpu_trace_.clear();
  return Status::Ok();
}

Status Executor::Impl::CopyBinding(const BindingCopy& copy) {
  if (device_.host_accessible()) {
    std::memcpy(copy.to->data(), copy.from->data(), copy.from->byte_size());
    return Status::Ok();
  }
  return device_.CopyAsync(*copy.from, *copy.to, compute_stream());
}

Status Executor::Impl::Synchronize() {
  Status first;
  for (auto& [name, stream] : streams_) {
    Status status = stream->Synchronize();
    if (first.ok() && !status.ok()) first = std::move(status);
  }
  return first;
}

const DeviceTensor* Executor::Impl::Find(std::string_view name) const {
  const Value* value = graph_.FindValue(name);
  if (value == nullptr) return nullptr;
  const DeviceTensor& tensor = tensors_[static_cast<size_t>(value->id())];
  return tensor.empty() ? nullptr : &tensor;
}

StatusOr<std::vector<std::byte>> Executor::Impl::Fetch(std::string_view name) const {
  const DeviceTensor* tensor = Find(name);
  ZG_RETURN_IF_NOT(tensor != nullptr, "no value '", name, "' to fetch");
  std::vector<std::byte> bytes(tensor->byte_size());
  ZG_RETURN_IF_ERROR(device_.CopyToHost(*tensor, bytes));
  return bytes;
}

std::vector<TraceEvent> Executor::Impl::TakeTrace() {
  std::lock_guard<std::mutex> lock(trace_mutex_);
  return std::exchange(trace_, {});
}

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() {
  if (impl_ != nullptr) impl_->Synchronize().IgnoreError();
}

StatusOr<std::unique_ptr<Executor>> Executor::Create(const Graph& graph, Device& device,
                                                     Communicator& comm,
                                                     const KernelRegistry& registry,
                                                     ExecutorOptions options) {
  auto impl = std::make_unique<Impl>(graph, device, comm, std::move(options));
  ZG_RETURN_IF_ERROR(impl->Plan(registry));
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

Status Executor::SetInput(std::string_view name, std::span<const std::byte> bytes) {
  return impl_->SetInput(name, bytes);
}
Status Executor::Run(int64_t step) { return impl_->Run(step); }
Status Executor::Run() { return impl_->Run(impl_->next_step()); }
Status Executor::Synchronize() { return impl_->Synchronize(); }
const DeviceTensor* Executor::Find(std::string_view name) const { return impl_->Find(name); }
StatusOr<std::vector<std::byte>> Executor::Fetch(std::string_view name) const {
  return impl_->Fetch(name);
}
Stream& Executor::compute_stream() { return impl_->compute_stream(); }
Stream& Executor::comm_stream() { return impl_->comm_stream(); }
const MemoryReport& Executor::memory() const { return impl_->memory(); }
std::vector<TraceEvent> Executor::TakeTrace() { return impl_->TakeTrace(); }

}  // namespace zerograph::runtime
