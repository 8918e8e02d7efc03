#ifndef ZEROGRAPH_TESTS_RUNTIME_KERNEL_TEST_UTIL_H_
#define ZEROGRAPH_TESTS_RUNTIME_KERNEL_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/half.h"
#include "zerograph/runtime/kernel.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::runtime::testing {

// Runs single nodes through the CPU kernel registry the way the executor will: make the kernel
// from an IR node, infer output shapes (host inputs passed as values), allocate the outputs, and
// compute on a CPU stream's worker thread.
class KernelRunner {
 public:
  KernelRunner();

  Device& device() { return *device_; }
  const KernelRegistry& registry() const { return registry_; }
  void set_rank(int rank, int nranks) {
    rank_ = rank;
    nranks_ = nranks;
  }
  void set_communicator(Communicator* comm) { comm_ = comm; }
  // The default domain's opset version of the nodes and their kernels' contracts.
  void set_opset_version(int64_t version) {
    graph_.SetOpsetVersion("", version);
    opset_version_ = version;
  }
  // The executor's run number kernels see (KernelContext::step).
  void set_step(int64_t step) { step_ = step; }

  // A node `op` in `domain` whose inputs have the types of `inputs` (an empty tensor is an
  // omitted optional input) and `num_outputs` outputs.
  Node* MakeNode(std::string_view domain, std::string_view op,
                 const std::vector<DeviceTensor>& inputs, size_t num_outputs,
                 const std::vector<Attr>& attrs = {});

  // Makes the kernel, infers, allocates and computes. With `alias`, outputs that the kernel says
  // may be views of an input, or may run in place over one, take that input's memory (the
  // executor's zero-copy path); else they are allocated. Both must give the same values.
  StatusOr<std::vector<DeviceTensor>> Run(const Node& node, const std::vector<DeviceTensor>& inputs,
                                          bool alias = false);
  // MakeNode + Run.
  StatusOr<std::vector<DeviceTensor>> Run(std::string_view domain, std::string_view op,
                                          const std::vector<DeviceTensor>& inputs,
                                          size_t num_outputs, const std::vector<Attr>& attrs = {},
                                          bool alias = false);

  // The output specs of a node, without running it.
  StatusOr<std::vector<OutputInfo>> Infer(const Node& node,
                                          const std::vector<DeviceTensor>& inputs);

  // A tensor of `dtype` holding `values` (converted from double, rounding to nearest).
  DeviceTensor MakeTensor(DataType dtype, Shape shape, const std::vector<double>& values);
  // A tensor of uniform random values in [lo, hi), from `seed`.
  DeviceTensor Random(DataType dtype, Shape shape, uint32_t seed, double lo = -1, double hi = 1);

 private:
  std::unique_ptr<Device> device_;
  std::unique_ptr<Stream> stream_;
  KernelRegistry registry_;
  Graph graph_;
  GraphBuilder builder_{graph_};
  int rank_ = 0;
  int nranks_ = 1;
  Communicator* comm_ = nullptr;
  std::optional<int64_t> opset_version_;
  int64_t step_ = 0;
};

// The elements of a tensor as doubles, whatever its dtype.
std::vector<double> Values(const DeviceTensor& tensor);

// Unit roundoff of the floating dtypes (2^-24 for fp32, 2^-11 fp16, 2^-8 bf16, 2^-53 fp64).
double UnitRoundoff(DataType dtype);

// Expects |actual - expected| <= atol + rtol·|expected| element-wise, naming the first misses.
void ExpectNear(const std::vector<double>& actual, const std::vector<double>& expected, double rtol,
                double atol, std::string_view what = "");

// Central differences of a scalar function: g[i] = (f(x + h·e_i) - f(x - h·e_i)) / 2h. For
// checking a gradient kernel against its forward kernel (run f in double where the kernel takes
// it).
std::vector<double> NumericGradient(const std::function<double(const std::vector<double>&)>& f,
                                    std::vector<double> x, double h = 1e-6);

// Row-major index helpers for references.
std::vector<int64_t> Unravel(int64_t index, const Shape& shape);
int64_t BroadcastIndex(const std::vector<int64_t>& out_index, const Shape& in_shape);

}  // namespace zerograph::runtime::testing

#endif  // ZEROGRAPH_TESTS_RUNTIME_KERNEL_TEST_UTIL_H_
