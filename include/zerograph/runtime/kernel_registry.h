#ifndef ZEROGRAPH_RUNTIME_KERNEL_REGISTRY_H_
#define ZEROGRAPH_RUNTIME_KERNEL_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/kernel.h"

namespace zerograph {
class Graph;
class Node;
}  // namespace zerograph

namespace zerograph::runtime {

// Makes the kernel of one node; returns InvalidArgument naming what is wrong with the node.
using KernelFactory = std::function<StatusOr<std::unique_ptr<OpKernel>>(const KernelInfo&)>;

// One registration: an op on a device for a set of dtypes.
struct KernelDef {
  // "" for ONNX's default domain ("ai.onnx" is accepted as the same), "org.zerograph", ...
  std::string domain;
  std::string op_type;
  DeviceType device = DeviceType::kCpu;
  // The dtypes of input `type_input` the factory handles; each becomes one registry key.
  std::vector<DataType> dtypes;
  // Which input's dtype selects the kernel: 0 for most ops, 2 (X1) for the optimizers. -1 for ops
  // without a typed input (Constant): register them for DataType::kUndefined.
  int type_input = 0;
  // Inputs this kernel reads on the host beyond its contract's host-read inputs (a GPU
  // optimizer's lr and step, read when it launches); see OpKernel::host_inputs().
  std::vector<int> host_inputs;
  KernelFactory factory;
};

// A key of the registry.
struct KernelKey {
  std::string domain;
  std::string op_type;
  DeviceType device;
  DataType dtype;
  friend auto operator<=>(const KernelKey&, const KernelKey&) = default;
};

// Kernels by (domain, op, device, dtype). Filled from explicit lists (RegisterCpuKernels), never by
// static initializers, which a static library silently drops when nothing references them.
class KernelRegistry {
 public:
  // Fails when the op has no contract (OpContracts), a dtype is one the contract's type input
  // forbids, a key is already taken, or the def disagrees with an earlier one of the same op and
  // device on type_input or host_inputs.
  Status Register(KernelDef def);

  // The registration for the key, or null.
  const KernelDef* Find(std::string_view domain, std::string_view op_type, DeviceType device,
                        DataType dtype) const;

  // The kernel for `node` on `device`, chosen by the dtype of its type input (`input_dtypes` has
  // one entry per node input, kUndefined for an omitted one), made for the node's op contract at
  // `opset_version` (nullopt: the newest), after checking the node against that contract.
  // NotFound names the node, the op and what is registered; the other errors name the node.
  StatusOr<std::unique_ptr<OpKernel>> CreateKernel(
      const Node& node, DeviceType device, std::span<const DataType> input_dtypes, int rank = 0,
      int nranks = 1, std::optional<int64_t> opset_version = std::nullopt) const;

  // Whether any kernel of the op is registered on `device`.
  bool HasOp(std::string_view domain, std::string_view op_type, DeviceType device) const;

  // Every op of `graph` without a kernel on `device`, in one NotFound error naming each op with
  // its nodes (so a user bringing a new model learns everything that is missing at once); Ok when
  // every op has one.
  Status CheckEveryOpHasKernel(const Graph& graph, DeviceType device) const;

  // Every key, sorted (for listing the ops a build supports).
  std::vector<KernelKey> Keys() const;

 private:
  // What all dtypes of one (domain, op, device) share.
  struct OpEntry {
    int type_input = 0;
    std::vector<int> host_inputs;
    std::map<DataType, KernelDef> by_dtype;
  };
  using OpKey = std::tuple<std::string, std::string, DeviceType>;
  std::map<OpKey, OpEntry> ops_;
};

// Adds every CPU kernel. The one list of what the CPU backend runs.
Status RegisterCpuKernels(KernelRegistry& registry);

#if ZG_WITH_CUDA
// Adds every CUDA kernel: the CPU's (domain, op, dtypes, type input), so a graph that runs on the
// CPU runs on a GPU. Host inputs are the CPU's too, plus the optimizers' step scalars (lr and step
// of AdamW, lr of SGD, R and T of Adam, Momentum and Adagrad), which a GPU kernel reads on the
// host when it launches. Declared only in builds with the CUDA backend: without it there is
// nothing to register, and a caller that needs GPU kernels should not compile.
Status RegisterCudaKernels(KernelRegistry& registry);
#endif

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_KERNEL_REGISTRY_H_
