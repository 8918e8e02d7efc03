#include "zerograph/runtime/kernel_registry.h"

#include <algorithm>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

using testing::KernelRunner;

// A kernel that does nothing, to exercise the registry alone.
class NullKernel final : public OpKernel {
 public:
  using OpKernel::OpKernel;

 protected:
  Status ComputeImpl(const KernelContext&) const override { return Status::Ok(); }
};

StatusOr<std::unique_ptr<OpKernel>> MakeNull(const KernelInfo& info) {
  return std::unique_ptr<OpKernel>(new NullKernel(info));
}

// A key registered twice is our bug, reported as such.
TEST(KernelRegistryTest, DuplicateKeyIsRefused) {
  KernelRegistry registry;
  ASSERT_TRUE(
      registry.Register({"", "Relu", DeviceType::kCpu, {DataType::kFloat32}, 0, {}, MakeNull})
          .ok());
  Status status =
      registry.Register({"", "Relu", DeviceType::kCpu, {DataType::kFloat32}, 0, {}, MakeNull});
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("registered twice"), std::string_view::npos);
  // Another dtype of the same op is fine; "ai.onnx" is the default domain.
  EXPECT_TRUE(
      registry
          .Register({"ai.onnx", "Relu", DeviceType::kCpu, {DataType::kFloat16}, 0, {}, MakeNull})
          .ok());
  EXPECT_NE(registry.Find("", "Relu", DeviceType::kCpu, DataType::kFloat16), nullptr);
  EXPECT_EQ(registry.Find("", "Relu", DeviceType::kCuda, DataType::kFloat16), nullptr);
}

// Kernels of one op must agree on which input picks the dtype.
TEST(KernelRegistryTest, DisagreeingTypeInputIsRefused) {
  KernelRegistry registry;
  ASSERT_TRUE(
      registry.Register({"", "Add", DeviceType::kCpu, {DataType::kFloat32}, 0, {}, MakeNull}).ok());
  Status status =
      registry.Register({"", "Add", DeviceType::kCpu, {DataType::kFloat16}, 1, {}, MakeNull});
  EXPECT_NE(status.message().find("disagree"), std::string_view::npos) << status.ToString();
}

// Every kernel implements an op contract: a kernel for an op without one is refused.
TEST(KernelRegistryTest, KernelWithoutContractIsRefused) {
  KernelRegistry registry;
  Status status =
      registry.Register({"", "Foo", DeviceType::kCpu, {DataType::kFloat32}, 0, {}, MakeNull});
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("without a contract"), std::string_view::npos)
      << status.ToString();
}

// A kernel may claim only dtypes its contract allows (Sqrt is for floats), on every device.
TEST(KernelRegistryTest, KernelForForbiddenDtypeIsRefused) {
  KernelRegistry registry;
  for (DeviceType device : {DeviceType::kCpu, DeviceType::kCuda}) {
    Status status = registry.Register(
        {"", "Sqrt", device, {DataType::kFloat32, DataType::kInt32}, 0, {}, MakeNull});
    EXPECT_EQ(status.code(), StatusCode::kInternal);
    EXPECT_NE(status.message().find("int32, which Sqrt-6 forbids"), std::string_view::npos)
        << status.ToString();
  }
  EXPECT_TRUE(
      registry.Register({"", "Sqrt", DeviceType::kCpu, {DataType::kFloat32}, 0, {}, MakeNull})
          .ok());
}

// The contract's host-read inputs reach the kernel without the registration naming them.
TEST(KernelRegistryTest, HostInputsComeFromTheContract) {
  KernelRunner runner;
  const KernelDef* reshape =
      runner.registry().Find("", "Reshape", DeviceType::kCpu, DataType::kFloat32);
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->host_inputs, std::vector<int>{1});
}

// Every op contract has a CPU kernel: a contract is a promise that the op runs.
TEST(KernelRegistryTest, EveryContractHasACpuKernel) {
  KernelRunner runner;
  const std::vector<KernelKey> keys = runner.registry().Keys();
  for (const OpContract* contract : OpContracts::Get().All()) {
    const bool found = std::any_of(keys.begin(), keys.end(), [&](const KernelKey& key) {
      return key.domain == contract->domain && key.op_type == contract->name &&
             key.device == DeviceType::kCpu;
    });
    EXPECT_TRUE(found) << contract->ToString() << " has no CPU kernel";
  }
}

// An op without a kernel is NotFound naming the node and op; a dtype without one also lists the
// dtypes that exist.
TEST(KernelRegistryTest, MissingKernelNamesNodeOpAndDtypes) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2}, {1, 2});
  Node* node = runner.MakeNode("", "NoSuchOp", {x}, 1);
  StatusOr<std::unique_ptr<OpKernel>> kernel =
      runner.registry().CreateKernel(*node, DeviceType::kCpu, std::vector{DataType::kFloat32});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), StatusCode::kNotFound);
  EXPECT_NE(kernel.status().message().find(std::string(node->name())), std::string_view::npos);
  EXPECT_NE(kernel.status().message().find("NoSuchOp"), std::string_view::npos);

  DeviceTensor i = runner.MakeTensor(DataType::kUint8, {2}, {1, 2});
  Node* relu = runner.MakeNode("", "Relu", {i}, 1);
  kernel = runner.registry().CreateKernel(*relu, DeviceType::kCpu, std::vector{DataType::kUint8});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("uint8"), std::string_view::npos);
  EXPECT_NE(kernel.status().message().find("registered: float"), std::string_view::npos)
      << kernel.status().ToString();
}

// A bad attribute is reported when the kernel is made (before any step), naming the node.
TEST(KernelRegistryTest, BadAttributeFailsAtCreation) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2}, {1, 2});
  Node* node = runner.MakeNode("", "Cast", {x}, 1, {Attr("to", "float")});
  StatusOr<std::unique_ptr<OpKernel>> kernel =
      runner.registry().CreateKernel(*node, DeviceType::kCpu, std::vector{DataType::kFloat32});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(kernel.status().message().find("'to'"), std::string_view::npos);
  EXPECT_NE(kernel.status().message().find(std::string(node->name())), std::string_view::npos);
}

#if ZG_WITH_CUDA
// The CUDA list passes the same contract checks (no GPU needed to register) and covers every op
// the CPU runs, so a graph that runs on the CPU runs on a GPU.
TEST(KernelRegistryTest, CudaKernelsMatchTheirContractsAndTheCpuList) {
  KernelRegistry registry;
  Status status = RegisterCudaKernels(registry);
  ASSERT_TRUE(status.ok()) << status.ToString();
  KernelRunner runner;
  for (const KernelKey& key : runner.registry().Keys()) {
    EXPECT_NE(registry.Find(key.domain, key.op_type, DeviceType::kCuda, key.dtype), nullptr)
        << key.op_type << " " << DataTypeName(key.dtype);
  }
}
#endif

// The CPU list covers every op the models and the rewrite use, for the dtypes docs/formats.md asks.
TEST(KernelRegistryTest, CpuKernelsCoverTheTrainingOps) {
  KernelRunner runner;
  const KernelRegistry& r = runner.registry();
  using enum DataType;
  const std::string z(kZerographDomain);
  for (const char* op :
       {"MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Relu", "Transpose", "ReduceSum",
        "ReduceMean", "Cast", "Greater", "Identity", "Reshape", "Neg", "Sqrt"}) {
    EXPECT_NE(r.Find("", op, DeviceType::kCpu, kFloat32), nullptr) << op;
  }
  EXPECT_NE(r.Find("", "Constant", DeviceType::kCpu, kUndefined), nullptr);
  for (const char* op : {"Adam", "Momentum", "Adagrad"}) {
    EXPECT_NE(r.Find("ai.onnx.preview.training", op, DeviceType::kCpu, kFloat32), nullptr) << op;
  }
  for (DataType dtype : {kFloat32, kFloat16, kBFloat16}) {
    for (const char* op : {"AdamW", "SGD", "CoalesceTensors", "TensorViews", "LocalShard", "Nop",
                           "ReduceScatter", "AllGather", "AllReduce", "ReluGrad"}) {
      EXPECT_NE(r.Find(z, op, DeviceType::kCpu, dtype), nullptr)
          << op << " " << DataTypeName(dtype);
    }
    EXPECT_NE(r.Find("", "Cast", DeviceType::kCpu, dtype), nullptr);
  }
  const std::vector<KernelKey> keys = r.Keys();
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

}  // namespace
}  // namespace zerograph::runtime
