#ifndef ZEROGRAPH_RUNTIME_KERNEL_H_
#define ZEROGRAPH_RUNTIME_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/op_contract.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"

namespace zerograph::runtime {

class Communicator;

// Shapes come from the IR's op contracts (zerograph/ir/op_contract.h).
using zerograph::ShapeContext;
using zerograph::TensorSpec;

// One output as shape inference sees it: its spec, and how it may share memory with an input.
struct OutputInfo {
  // The output is exactly elements [offset, offset + numel) of input `input`, which is contiguous
  // (Reshape, Identity, TensorViews, LocalShard, Nop). The executor may make the output that view;
  // the kernel then copies nothing.
  struct View {
    int input = 0;
    int64_t offset = 0;
  };

  OutputInfo() = default;
  explicit OutputInfo(TensorSpec output_spec, std::optional<View> output_view = std::nullopt,
                      std::optional<int> in_place = std::nullopt)
      : spec(std::move(output_spec)), view(output_view), in_place_input(in_place) {}

  TensorSpec spec;
  std::optional<View> view;
  // The output may take input `in_place_input`'s memory (same dtype and size; the kernel reads each
  // element before writing it): for element-wise ops and optimizer updates, when the executor knows
  // the input is dead after this node.
  std::optional<int> in_place_input;
};

// What a kernel is made from: once per node, before the first step, so bad attributes and a
// graph made for another number of ranks are reported before anything runs.
struct KernelInfo {
  // Valid during the factory call: read the attributes there.
  const Node* node = nullptr;
  DeviceType device = DeviceType::kCpu;
  // The dtype the kernel was selected for (of its KernelDef::type_input).
  DataType dtype = DataType::kUndefined;
  // This process's rank and the number of ranks.
  int rank = 0;
  int nranks = 1;
  // The contract's host-read inputs and the kernel's own (KernelDef::host_inputs).
  std::vector<int> host_inputs;
  // The node's op contract (the version of the graph's opset).
  const OpContract* contract = nullptr;
};

// The run-time inputs of a kernel.
struct KernelContext {
  // One per node input, null for an omitted optional input; every tensor contiguous, on the
  // kernel's device (host inputs in host memory).
  std::span<const DeviceTensor* const> inputs;
  // One per node output, allocated by the caller with the shapes InferOutputs gave (or views).
  std::span<DeviceTensor* const> outputs;
  // The stream the kernel runs on: the CPU kernel runs synchronously on the stream's thread; a
  // CUDA kernel launches on its native handle.
  Stream* stream = nullptr;
  // For collective kernels; may be null for graphs without collectives.
  Communicator* comm = nullptr;
  // The executor's run, from 0: what makes Dropout's mask differ from step to step.
  int64_t step = 0;
};

// The kernel of one node, made by a factory of the KernelRegistry. Two phases: InferOutputs once
// while planning (output dtypes and shapes from the op contract, aliasing from the kernel), then
// Compute every step into outputs the executor allocated. The public members check the contract
// once (counts, contiguity, device) and add the node's name to errors; subclasses implement the
// protected ones.
class OpKernel {
 public:
  explicit OpKernel(const KernelInfo& info);
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  const std::string& node_name() const { return node_name_; }
  const std::string& op_type() const { return op_type_; }
  DeviceType device() const { return device_; }
  DataType dtype() const { return dtype_; }
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  size_t num_inputs() const { return num_inputs_; }
  size_t num_outputs() const { return num_outputs_; }
  // The op contract the kernel was made for.
  const OpContract* contract() const { return contract_; }
  // Inputs the kernel reads on the host: in shape inference (Reshape's shape, ReduceSum's axes),
  // or when launching (a GPU optimizer's lr and step). The executor keeps them in host memory,
  // whatever the kernel's device, and passes their values to InferOutputs when they are known
  // before running (ShapeContext::values); a kernel that needs a value it did not get says so.
  // Optional: none by default.
  const std::vector<int>& host_inputs() const { return host_inputs_; }

  // One OutputInfo per node output: the contract's shape function, then PlanOutputs. Errors name
  // the node.
  StatusOr<std::vector<OutputInfo>> InferOutputs(const ShapeContext& ctx) const;
  // Runs the kernel. Errors name the node.
  Status Compute(const KernelContext& ctx) const;

 protected:
  // Optional (default: nothing): the kernel's part of planning its outputs, after the contract's
  // shape function: marks the outputs that may be views of an input or reuse an input's memory
  // (OutputInfo::view, in_place_input), and refuses inputs this kernel cannot run although the
  // contract allows them (BLAS's int dimensions).
  virtual Status PlanOutputs(const ShapeContext& ctx, std::span<OutputInfo> outputs) const;
  virtual Status ComputeImpl(const KernelContext& ctx) const = 0;

  // "node 'MatMul_3' (MatMul)", for messages.
  std::string Describe() const;

 private:
  std::string node_name_;
  std::string op_type_;
  DeviceType device_;
  DataType dtype_;
  int rank_;
  int nranks_;
  size_t num_inputs_;
  size_t num_outputs_;
  std::vector<int> host_inputs_;
  const OpContract* contract_;
};

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_KERNEL_H_
