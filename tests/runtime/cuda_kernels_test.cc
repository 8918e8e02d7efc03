#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/runtime/cuda.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::runtime {
namespace {

using testing::ExpectNear;
using testing::KernelRunner;
using testing::UnitRoundoff;
using testing::Values;

// The host inputs a CUDA kernel has beyond its CPU twin: the optimizers' step scalars, Dropout's
// ratio and training mode, the accumulator's overwrite flag.
const std::map<std::pair<std::string, std::string>, std::vector<int>> kExtraCudaHostInputs = {
    {{"org.zerograph", "AdamW"}, {0, 1}},
    {{"org.zerograph", "SGD"}, {0}},
    {{"ai.onnx.preview.training", "Adam"}, {0, 1}},
    {{"ai.onnx.preview.training", "Momentum"}, {0, 1}},
    {{"ai.onnx.preview.training", "Adagrad"}, {0, 1}},
    {{"", "Dropout"}, {1, 2}},
    {{"com.microsoft", "DropoutGrad"}, {2, 3}},
    {{"com.microsoft", "InPlaceAccumulatorV2"}, {2}},
};

// Every CPU kernel key has a CUDA kernel with the same type input and host inputs (plus the
// optimizers' scalars), and CUDA has nothing the CPU lacks. Needs no GPU.
TEST(CudaKernelRegistrationTest, MirrorsEveryCpuKernel) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  const Status cuda = RegisterCudaKernels(registry);
  ASSERT_TRUE(cuda.ok()) << cuda.ToString();
  std::set<std::tuple<std::string, std::string, DataType>> cpu_keys, cuda_keys;
  for (const KernelKey& key : registry.Keys()) {
    (key.device == DeviceType::kCpu ? cpu_keys : cuda_keys)
        .emplace(key.domain, key.op_type, key.dtype);
  }
  EXPECT_EQ(cpu_keys, cuda_keys);
  for (const auto& [domain, op, dtype] : cpu_keys) {
    const std::string what = StrCat(domain, "::", op, " ", DataTypeName(dtype));
    const KernelDef* cpu = registry.Find(domain, op, DeviceType::kCpu, dtype);
    const KernelDef* gpu = registry.Find(domain, op, DeviceType::kCuda, dtype);
    ASSERT_NE(gpu, nullptr) << what;
    EXPECT_EQ(gpu->type_input, cpu->type_input) << what;
    auto extra = kExtraCudaHostInputs.find({domain, op});
    if (extra == kExtraCudaHostInputs.end()) {
      EXPECT_EQ(gpu->host_inputs, cpu->host_inputs) << what;
    } else {
      EXPECT_TRUE(cpu->host_inputs.empty()) << what;
      EXPECT_EQ(gpu->host_inputs, extra->second) << what;
    }
  }
}

// Runs nodes on GPU 0 through the CUDA registration: inputs copied to the GPU except the
// kernel's host inputs, outputs copied back into host tensors of `host`'s device.
class CudaRunner {
 public:
  // GPU 0 with a stream and the CUDA kernels.
  static StatusOr<std::unique_ptr<CudaRunner>> Create(KernelRunner& host) {
    auto runner = std::unique_ptr<CudaRunner>(new CudaRunner(host));
    ZG_ASSIGN_OR_RETURN(runner->device_, CreateCudaDevice(0));
    ZG_ASSIGN_OR_RETURN(runner->stream_, runner->device_->CreateStream("compute"));
    ZG_RETURN_IF_ERROR(RegisterCudaKernels(runner->registry_));
    return runner;
  }

  StatusOr<std::vector<DeviceTensor>> Run(const Node& node,
                                          const std::vector<DeviceTensor>& inputs) {
    std::vector<DataType> dtypes;
    std::vector<TensorSpec> specs;
    for (const DeviceTensor& t : inputs) {
      dtypes.push_back(t.empty() ? DataType::kUndefined : t.dtype());
      specs.push_back(TensorSpec{t.dtype(), t.shape()});
    }
    ZG_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                        registry_.CreateKernel(node, DeviceType::kCuda, dtypes));
    std::vector<DeviceTensor> placed(inputs.size());
    std::vector<const TensorSpec*> spec_ptrs;
    std::vector<const DeviceTensor*> input_ptrs;
    std::vector<HostValue> host_values(inputs.size());
    std::vector<const HostValue*> values;
    for (size_t i = 0; i < inputs.size(); ++i) {
      bool host = false;
      for (int h : kernel->host_inputs()) host |= static_cast<size_t>(h) == i;
      if (!inputs[i].empty()) {
        if (host) {
          placed[i] = inputs[i];
        } else {
          ZG_ASSIGN_OR_RETURN(
              placed[i], DeviceTensor::Allocate(*device_, inputs[i].dtype(), inputs[i].shape()));
          ZG_RETURN_IF_ERROR(device_->CopyFromHost(
              {static_cast<const std::byte*>(inputs[i].data()), inputs[i].byte_size()}, placed[i]));
        }
      }
      spec_ptrs.push_back(inputs[i].empty() ? nullptr : &specs[i]);
      input_ptrs.push_back(inputs[i].empty() ? nullptr : &placed[i]);
      if (host && !inputs[i].empty()) host_values[i] = placed[i].host_value();
      values.push_back(host && !inputs[i].empty() ? &host_values[i] : nullptr);
    }
    ZG_ASSIGN_OR_RETURN(std::vector<OutputInfo> infos,
                        kernel->InferOutputs(ShapeContext{&node, spec_ptrs, values}));
    std::vector<DeviceTensor> outputs;
    for (const OutputInfo& info : infos) {
      ZG_ASSIGN_OR_RETURN(DeviceTensor out,
                          DeviceTensor::Allocate(*device_, info.spec.dtype, info.spec.shape));
      outputs.push_back(std::move(out));
    }
    std::vector<DeviceTensor*> output_ptrs;
    for (DeviceTensor& t : outputs) output_ptrs.push_back(&t);
    KernelContext ctx{input_ptrs, output_ptrs, stream_.get(), nullptr};
    ZG_RETURN_IF_ERROR(stream_->Enqueue([&] { return kernel->Compute(ctx); }));
    ZG_RETURN_IF_ERROR(stream_->Synchronize());
    std::vector<DeviceTensor> results;
    for (const DeviceTensor& out : outputs) {
      ZG_ASSIGN_OR_RETURN(DeviceTensor copy,
                          DeviceTensor::Allocate(host_.device(), out.dtype(), out.shape()));
      ZG_RETURN_IF_ERROR(
          device_->CopyToHost(out, {static_cast<std::byte*>(copy.data()), copy.byte_size()}));
      results.push_back(std::move(copy));
    }
    return results;
  }

 private:
  explicit CudaRunner(KernelRunner& host) : host_(host) {}

  KernelRunner& host_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<Stream> stream_;
  KernelRegistry registry_;
};

class CudaKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA GPU: nothing to compare on this machine";
    StatusOr<std::unique_ptr<CudaRunner>> cuda = CudaRunner::Create(cpu_);
    ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
    cuda_ = std::move(*cuda);
  }

  // Runs the node on both devices; expects every output within rtol (and an absolute floor of
  // rtol, for values near 0) of the CPU's.
  void ExpectSame(std::string_view domain, std::string_view op,
                  const std::vector<DeviceTensor>& inputs, size_t num_outputs,
                  const std::vector<Attr>& attrs, double rtol) {
    Node* node = cpu_.MakeNode(domain, op, inputs, num_outputs, attrs);
    StatusOr<std::vector<DeviceTensor>> expected = cpu_.Run(*node, inputs);
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    StatusOr<std::vector<DeviceTensor>> actual = cuda_->Run(*node, inputs);
    ASSERT_TRUE(actual.ok()) << actual.status().ToString();
    ASSERT_EQ(actual->size(), expected->size());
    for (size_t i = 0; i < expected->size(); ++i) {
      EXPECT_EQ((*actual)[i].shape(), (*expected)[i].shape()) << op << " output " << i;
      ExpectNear(Values((*actual)[i]), Values((*expected)[i]), rtol, rtol,
                 StrCat(op, " output ", i));
    }
  }

  KernelRunner cpu_;
  std::unique_ptr<CudaRunner> cuda_;
};

const DataType kFloatDtypes[] = {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16};

// Element-wise ops agree with the CPU exactly (one rounding each) in every float dtype, with and
// without broadcasting.
TEST_F(CudaKernelsTest, ElementwiseOpsMatchCpu) {
  for (DataType dtype : kFloatDtypes) {
    const DeviceTensor a = cpu_.Random(dtype, {4, 33}, 1);
    const DeviceTensor b = cpu_.Random(dtype, {4, 33}, 2, 0.5, 2);
    const DeviceTensor row = cpu_.Random(dtype, {33}, 3, 0.5, 2);
    const DeviceTensor column = cpu_.Random(dtype, {4, 1}, 4, 0.5, 2);
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Greater"}) {
      ExpectSame("", op, {a, b}, 1, {}, 0);
      ExpectSame("", op, {a, row}, 1, {}, 0);
      ExpectSame("", op, {column, row}, 1, {}, 0);
    }
    ExpectSame(kZerographDomain, "ReluGrad", {a, b}, 1, {}, 0);
    for (const char* op : {"Relu", "Neg"}) ExpectSame("", op, {a}, 1, {}, 0);
    ExpectSame("", "Sqrt", {b}, 1, {}, 0);
    // CUDA's sinf and glibc's differ in the last bits; ONNX's Sin takes no bfloat16.
    if (dtype != DataType::kBFloat16) {
      ExpectSame("", "Sin", {a}, 1, {}, dtype == DataType::kFloat64 ? 1e-14 : 1e-6);
    }
    ExpectSame("", "Cast", {a}, 1, {Attr("to", int64_t{1})}, 0);   // to fp32
    ExpectSame("", "Cast", {a}, 1, {Attr("to", int64_t{10})}, 0);  // to fp16
    ExpectSame("", "Transpose", {cpu_.Random(dtype, {2, 3, 5}, 5)}, 1,
               {Attr("perm", std::vector<int64_t>{2, 0, 1})}, 0);
  }
}

// The element-wise family: the ops built from +, -, ·, / and comparisons agree exactly (same
// steps in the same order); those calling libm (exp, erf, tanh, pow) within two units of
// roundoff, where CUDA's and glibc's last bits differ.
TEST_F(CudaKernelsTest, ElementwiseFamilyMatchesCpu) {
  for (DataType dtype : kFloatDtypes) {
    const double libm = dtype == DataType::kFloat32 ? 1e-6 : 2 * UnitRoundoff(dtype);
    const DeviceTensor a = cpu_.Random(dtype, {4, 33}, 11, -3, 3);
    const DeviceTensor b = cpu_.Random(dtype, {4, 33}, 12, 0.5, 2);
    const DeviceTensor row = cpu_.Random(dtype, {33}, 13, 0.5, 2);
    const DeviceTensor column = cpu_.Random(dtype, {4, 1}, 14, -1, 1);
    const DeviceTensor safe = cpu_.Random(dtype, {4, 33}, 15, -0.5, 3);  // no cancellation
    for (const char* op : {"Abs", "Floor", "Ceil", "Sign", "Reciprocal"}) {
      ExpectSame("", op, {a}, 1, {}, 0);
    }
    for (const char* op : {"Exp", "Erf", "Tanh", "Sigmoid"}) ExpectSame("", op, {a}, 1, {}, libm);
    ExpectSame("", "Log", {b}, 1, {}, libm);
    ExpectSame("", "Gelu", {safe}, 1, {}, libm);
    ExpectSame("", "Gelu", {safe}, 1, {Attr("approximate", "tanh")}, libm);
    ExpectSame("", "LeakyRelu", {a}, 1, {Attr("alpha", 0.25)}, 0);
    ExpectSame("", "Clip", {a, cpu_.MakeTensor(dtype, {}, {-1}), cpu_.MakeTensor(dtype, {}, {2})},
               1, {}, 0);
    ExpectSame("", "Pow", {b, row}, 1, {}, libm);
    ExpectSame("", "Mod", {a, row}, 1, {Attr("fmod", 1)}, 0);
    for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
      ExpectSame("", op, {a, row, column}, 1, {}, 0);
    }
    const DeviceTensor condition = cpu_.Random(DataType::kBool, {4, 1}, 16, 0, 2);
    ExpectSame("", "Where", {condition, a, row}, 1, {}, 0);
    for (const char* op : {"Equal", "Less", "LessOrEqual", "GreaterOrEqual"}) {
      ExpectSame("", op, {a, column}, 1, {}, 0);
    }
    // TanhGrad's 1 - Y² may fuse into one FMA on the GPU: a last-bit difference.
    const DeviceTensor y = cpu_.Random(dtype, {4, 33}, 18, -0.9, 0.9);
    ExpectSame(kMicrosoftDomain, "ReluGrad", {a, y}, 1, {}, 0);
    ExpectSame(kMicrosoftDomain, "SigmoidGrad", {a, y}, 1, {}, 0);
    ExpectSame(kMicrosoftDomain, "TanhGrad", {a, y}, 1, {}, libm);
    for (const char* op : {"GeluGrad", "FastGeluGrad"}) {
      ExpectSame(kMicrosoftDomain, op, {a, safe}, 1, {}, libm);
    }
    ExpectSame(kMicrosoftDomain, "BiasGeluGrad_dX", {a, safe, cpu_.Random(dtype, {33}, 17, 0, 1)},
               1, {}, libm);
    ExpectSame(kMicrosoftDomain, "DivGrad", {a, a, row}, 2, {}, 0);
    ExpectSame(kMicrosoftDomain, "DivGrad", {a, column, b}, 2, {}, 0);
    ExpectSame(kMicrosoftDomain, "Scale", {a, cpu_.MakeTensor(DataType::kInt64, {1}, {4})}, 1,
               {Attr("scale_down", int64_t{1})}, 0);
  }
}

// Reductions accumulate in double on both devices, in different orders: at most one unit in the
// last place apart after the final rounding.
TEST_F(CudaKernelsTest, ReductionsMatchCpu) {
  for (DataType dtype : kFloatDtypes) {
    const DeviceTensor x = cpu_.Random(dtype, {8, 3, 1500}, 6);
    for (const std::vector<int64_t>& axes :
         std::vector<std::vector<int64_t>>{{0}, {2}, {0, 2}, {1}}) {
      const DeviceTensor axes_tensor =
          cpu_.MakeTensor(DataType::kInt64, {static_cast<int64_t>(axes.size())},
                          std::vector<double>(axes.begin(), axes.end()));
      ExpectSame("", "ReduceSum", {x, axes_tensor}, 1, {}, 2 * UnitRoundoff(dtype));
      ExpectSame("", "ReduceMean", {x, axes_tensor}, 1, {Attr("keepdims", int64_t{0})},
                 2 * UnitRoundoff(dtype));
    }
  }
}

// MatMul with broadcast batch dimensions and Gemm with transposes and a broadcast C, in fp32, fp16
// and bf16 (cuBLAS's order of summation differs from BLAS's: a few units of roundoff per K).
TEST_F(CudaKernelsTest, MatrixProductsMatchCpu) {
  const DataType f32 = DataType::kFloat32;
  const double tolerance = 64 * UnitRoundoff(f32);
  ExpectSame("", "MatMul", {cpu_.Random(f32, {2, 1, 5, 7}, 7), cpu_.Random(f32, {3, 7, 4}, 8)}, 1,
             {}, tolerance);
  ExpectSame("", "MatMul", {cpu_.Random(f32, {6, 5, 7}, 9), cpu_.Random(f32, {7, 4}, 10)}, 1, {},
             tolerance);
  ExpectSame("", "MatMul", {cpu_.Random(f32, {7}, 11), cpu_.Random(f32, {2, 7, 4}, 12)}, 1, {},
             tolerance);
  ExpectSame(
      "", "Gemm",
      {cpu_.Random(f32, {7, 5}, 13), cpu_.Random(f32, {4, 7}, 14), cpu_.Random(f32, {4}, 15)}, 1,
      {Attr("transA", int64_t{1}), Attr("transB", int64_t{1}), Attr("alpha", 0.5),
       Attr("beta", 2.0)},
      tolerance);
  // fp16 and bf16 multiply in fp32 on both devices; CUDA rounds beta·C once more before adding.
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16}) {
    const double narrow = tolerance + 4 * UnitRoundoff(dtype);
    ExpectSame("", "MatMul",
               {cpu_.Random(dtype, {2, 1, 5, 7}, 16), cpu_.Random(dtype, {3, 7, 4}, 17)}, 1, {},
               narrow);
    ExpectSame("", "Gemm",
               {cpu_.Random(dtype, {7, 5}, 18), cpu_.Random(dtype, {4, 7}, 19),
                cpu_.Random(dtype, {4}, 20)},
               1, {Attr("transA", int64_t{1}), Attr("transB", int64_t{1}), Attr("beta", 2.0)},
               narrow);
  }
}

// The fused multi-tensor AdamW equals the CPU's bit for bit in both modes: three tensors (one not
// a multiple of the vector width) in one launch, every dtype, at step 3.
TEST_F(CudaKernelsTest, FusedAdamWMatchesCpu) {
  for (DataType dtype : kFloatDtypes) {
    const std::vector<Shape> shapes = {{64, 8}, {37}, {1000}};
    std::vector<DeviceTensor> inputs = {cpu_.MakeTensor(DataType::kFloat32, {}, {1e-3}),
                                        cpu_.MakeTensor(DataType::kInt64, {}, {3})};
    uint32_t seed = 20;
    for (int group = 0; group < 4; ++group) {
      for (const Shape& shape : shapes) {
        const double scale = group == 1 ? 1e-2 : group == 2 ? 1e-3 : group == 3 ? 1e-6 : 1;
        inputs.push_back(cpu_.Random(dtype, shape, seed++, group == 3 ? 0 : -scale, scale));
      }
    }
    ExpectSame(kZerographDomain, "AdamW", inputs, 9, {}, 0);
    ExpectSame(kZerographDomain, "AdamW", inputs, 9,
               {Attr("adam_mode", int64_t{1}), Attr("correct_bias", int64_t{0}),
                Attr("weight_decay", 0.1)},
               0);
    std::vector<DeviceTensor> sgd = {inputs[0]};
    for (size_t i = 2; i < 2 + 2 * shapes.size(); ++i) sgd.push_back(inputs[i]);
    ExpectSame(kZerographDomain, "SGD", sgd, shapes.size(), {}, 0);
  }
}

// The fused-buffer ops move the same bytes: padding zeroed, views and shards where the CPU puts
// them.
TEST_F(CudaKernelsTest, FusedBufferOpsMatchCpu) {
  for (DataType dtype : kFloatDtypes) {
    const DeviceTensor a = cpu_.Random(dtype, {3, 5}, 30);
    const DeviceTensor b = cpu_.Random(dtype, {7}, 31);
    ExpectSame(kZerographDomain, "CoalesceTensors", {a, b}, 1,
               {Attr("offsets", std::vector<int64_t>{0, 16}),
                Attr("numels", std::vector<int64_t>{15, 7}), Attr("total", int64_t{32})},
               0);
    const DeviceTensor fused = cpu_.Random(dtype, {32}, 32);
    ExpectSame(
        kZerographDomain, "TensorViews", {fused}, 2,
        {Attr("offsets", std::vector<int64_t>{0, 16}),
         Attr("shapes", std::vector<int64_t>{3, 5, 7}), Attr("ranks", std::vector<int64_t>{2, 1})},
        0);
    ExpectSame(kZerographDomain, "LocalShard", {fused}, 1, {}, 0);
    ExpectSame(kZerographDomain, "Nop", {fused, a}, 1, {}, 0);
  }
}

// The data-movement and indexed ops move the same bytes as the CPU's (GatherGrad's atomic adds
// may sum repeated rows in another order: one rounding of slack).
TEST_F(CudaKernelsTest, DataMovementMatchesCpu) {
  // Scatter targets [4,6,5] along axis 1 from [2,2,5]: element (a, b, c) goes to row 3·b + a,
  // distinct per (a, c), so that reduction "none" does not depend on the order of stores.
  std::vector<double> rows_of(20);
  for (size_t i = 0; i < rows_of.size(); ++i) {
    rows_of[i] = static_cast<double>(3 * ((i / 5) % 2) + i / 10);
  }
  const DeviceTensor distinct = cpu_.MakeTensor(DataType::kInt64, {2, 2, 5}, rows_of);
  auto ints = [&](std::vector<double> values) {
    return cpu_.MakeTensor(DataType::kInt64, {static_cast<int64_t>(values.size())}, values);
  };
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kInt8}) {
    const DeviceTensor x = cpu_.Random(dtype, {4, 6, 5}, 40, 0, 100);
    ExpectSame("", "Shape", {x}, 1, {Attr("start", int64_t{1})}, 0);
    ExpectSame("", "Size", {x}, 1, {}, 0);
    ExpectSame("", "Expand", {cpu_.Random(dtype, {6, 1}, 41, 0, 100), ints({4, 6, 7})}, 1, {}, 0);
    ExpectSame("", "Tile", {x, ints({2, 1, 3})}, 1, {}, 0);
    ExpectSame("", "Slice", {x, ints({1, -1}), ints({3, -100}), ints({0, 2}), ints({1, -2})}, 1, {},
               0);
    ExpectSame("", "Split", {x, ints({2, 4})}, 2, {Attr("axis", int64_t{1})}, 0);
    ExpectSame("", "Concat", {x, cpu_.Random(dtype, {4, 2, 5}, 42, 0, 100)}, 1,
               {Attr("axis", int64_t{1})}, 0);
    ExpectSame("", "Unsqueeze", {x, ints({0})}, 1, {}, 0);
    ExpectSame("", "Trilu", {x, ints({1})}, 1, {Attr("upper", int64_t{0})}, 0);
    const DeviceTensor rows = cpu_.MakeTensor(DataType::kInt32, {2, 2}, {0, -1, 5, 2});
    ExpectSame("", "Gather", {x, rows}, 1, {Attr("axis", int64_t{1})}, 0);
    const DeviceTensor elements =
        cpu_.MakeTensor(DataType::kInt64, {2, 2, 5}, std::vector<double>(20, 3));
    ExpectSame("", "GatherElements", {x, elements}, 1, {Attr("axis", int64_t{1})}, 0);
    const DeviceTensor updates = cpu_.Random(dtype, {2, 2, 5}, 43, 0, 2);
    // int8 has no atomic reduction on CUDA.
    for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
      if (dtype == DataType::kInt8 && std::string_view(reduction) != "none") continue;
      ExpectSame("", "ScatterElements", {x, distinct, updates}, 1,
                 {Attr("axis", int64_t{1}), Attr("reduction", reduction)}, 1e-2);
    }
    ExpectSame("", "CastLike", {x, cpu_.Random(DataType::kFloat32, {1}, 44)}, 1, {}, 0);
  }
  ExpectSame(
      "", "Range",
      {cpu_.MakeTensor(DataType::kInt32, {}, {3}), cpu_.MakeTensor(DataType::kInt32, {}, {50}),
       cpu_.MakeTensor(DataType::kInt32, {}, {4})},
      1, {}, 0);
  ExpectSame("", "ConstantOfShape", {ints({3, 4})}, 1, {}, 0);
  for (DataType dtype : kFloatDtypes) {
    const DeviceTensor indices = cpu_.MakeTensor(DataType::kInt64, {4}, {1, -1, 1, 0});
    ExpectSame("com.microsoft", "GatherGrad",
               {ints({5, 3}), indices, cpu_.Random(dtype, {4, 3}, 45)}, 1, {},
               UnitRoundoff(dtype) * 4);
  }
  // An index out of range is an error naming the node, not a crash.
  const DeviceTensor x = cpu_.Random(DataType::kFloat32, {3, 2}, 46);
  const DeviceTensor bad = cpu_.MakeTensor(DataType::kInt64, {1}, {3});
  Node* node = cpu_.MakeNode("", "Gather", {x, bad}, 1, {});
  StatusOr<std::vector<DeviceTensor>> out = cuda_->Run(*node, {x, bad});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("out of range"), std::string::npos);
}

// The other reductions and ArgMax/ArgMin (axes as attributes, opset 17): accumulators as on the
// CPU; the results one rounding apart, indices equal.
TEST_F(CudaKernelsTest, ReductionFamilyMatchesCpu) {
  for (DataType dtype : kFloatDtypes) {
    const DeviceTensor x = cpu_.Random(dtype, {8, 3, 1500}, 7, 0.5, 1.5);
    for (const char* op : {"ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
                           "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
      for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{0}, {2}, {0, 2}}) {
        ExpectSame("", op, {x}, 1, {Attr("axes", axes)}, 2 * UnitRoundoff(dtype));
      }
    }
    for (const char* op : {"ArgMax", "ArgMin"}) {
      ExpectSame("", op, {x}, 1, {Attr("axis", int64_t{1}), Attr("select_last_index", int64_t{1})},
                 0);
    }
  }
}

// Softmax and its gradients along the last axis (a block per row) and a middle one (a thread per
// column); exp() differs in its last bits between CUDA and glibc.
TEST_F(CudaKernelsTest, SoftmaxFamilyMatchesCpu) {
  for (DataType dtype : kFloatDtypes) {
    const double rtol = dtype == DataType::kFloat32 ? 1e-5 : 2 * UnitRoundoff(dtype);
    for (int64_t axis : {-1, 1}) {
      const DeviceTensor x = cpu_.Random(dtype, {4, 33, 300}, 8, -5, 5);
      const DeviceTensor y = cpu_.Random(dtype, {4, 33, 300}, 9, 0, 1);
      for (const char* op : {"Softmax", "LogSoftmax"}) {
        ExpectSame("", op, {x}, 1, {Attr("axis", axis)}, rtol);
      }
      for (const char* op : {"SoftmaxGrad_13", "LogSoftmaxGrad_13"}) {
        ExpectSame("com.microsoft", op, {x, y}, 1, {Attr("axis", axis)}, rtol);
      }
    }
  }
}

// The normalizations and their gradients: sums in double on both devices.
TEST_F(CudaKernelsTest, LayerNormFamilyMatchesCpu) {
  for (DataType dtype : kFloatDtypes) {
    const double rtol = dtype == DataType::kFloat32 ? 1e-5 : 2 * UnitRoundoff(dtype);
    const DeviceTensor x = cpu_.Random(dtype, {6, 2, 384}, 10, -3, 3);
    const DeviceTensor dy = cpu_.Random(dtype, {6, 2, 384}, 11);
    const DeviceTensor scale = cpu_.Random(dtype, {2, 384}, 12, 0.5, 2);
    const DeviceTensor bias = cpu_.Random(dtype, {2, 384}, 13);
    const DeviceTensor mean = cpu_.Random(DataType::kFloat32, {6, 1, 1}, 14, -0.1, 0.1);
    const DeviceTensor inv = cpu_.Random(DataType::kFloat32, {6, 1, 1}, 15, 0.5, 2);
    const std::vector<Attr> attrs = {Attr("axis", int64_t{1})};
    ExpectSame("", "LayerNormalization", {x, scale, bias}, 3, attrs, rtol);
    ExpectSame("com.microsoft", "SimplifiedLayerNormalization", {x, scale}, 2, attrs, rtol);
    ExpectSame("com.microsoft", "LayerNormalizationGrad", {dy, x, scale, mean, inv}, 3, attrs,
               rtol);
    ExpectSame("com.microsoft", "SimplifiedLayerNormalizationGrad", {dy, x, scale, inv}, 2, attrs,
               rtol);
  }
}

// The losses sum in double on both devices in different orders; their gradients, Dropout (the
// same counter-based mask), DropoutGrad and the accumulator round once, as the CPU does;
// FusedMatMul is cuBLAS against BLAS.
TEST_F(CudaKernelsTest, TrainingOpsMatchCpu) {
  const char* kMicrosoft = "com.microsoft";
  for (DataType dtype : kFloatDtypes) {
    const double tolerance = 4 * UnitRoundoff(dtype);
    const DeviceTensor scores = cpu_.Random(dtype, {6, 50, 3}, 40, -5, 5);
    std::vector<double> label_values(18);
    for (size_t i = 0; i < label_values.size(); ++i) label_values[i] = double((i * 7) % 50);
    const DeviceTensor labels = cpu_.MakeTensor(DataType::kInt64, {6, 3}, label_values);
    const DeviceTensor weights = cpu_.Random(dtype, {50}, 41, 0.5, 2);
    for (const char* reduction : {"none", "sum", "mean"}) {
      const std::vector<Attr> attrs = {Attr("reduction", reduction), Attr("ignore_index", 7)};
      ExpectSame("", "SoftmaxCrossEntropyLoss", {scores, labels, weights}, 2, attrs, tolerance);
      const DeviceTensor dy = std::string(reduction) == "none" ? cpu_.Random(dtype, {6, 3}, 42)
                                                               : cpu_.Random(dtype, {}, 42);
      const DeviceTensor log_prob = cpu_.Random(dtype, {6, 50, 3}, 43, -6, -1);
      ExpectSame(kMicrosoft, "SoftmaxCrossEntropyLossGrad", {dy, log_prob, labels, weights}, 1,
                 attrs, tolerance);
    }
    const DeviceTensor x = cpu_.Random(dtype, {4099}, 44);
    ExpectSame("", "Dropout",
               {x, cpu_.MakeTensor(DataType::kFloat32, {}, {0.3}),
                cpu_.MakeTensor(DataType::kBool, {}, {1})},
               2, {Attr("seed", 5)}, 0);
    std::vector<double> mask_values(4099);
    for (size_t i = 0; i < mask_values.size(); ++i) mask_values[i] = i % 3 != 0 ? 1 : 0;
    const DeviceTensor mask = cpu_.MakeTensor(DataType::kBool, {4099}, mask_values);
    ExpectSame(kMicrosoft, "DropoutGrad", {x, mask, cpu_.MakeTensor(DataType::kFloat32, {}, {0.3})},
               1, {}, 0);
    ExpectSame(kMicrosoft, "InPlaceAccumulatorV2",
               {x, cpu_.Random(DataType::kFloat32, {4099}, 46),
                cpu_.MakeTensor(DataType::kBool, {1}, {0})},
               2, {}, 0);
    ExpectSame(kMicrosoft, "FusedMatMul",
               {cpu_.Random(dtype, {5, 2, 3, 7}, 47), cpu_.Random(dtype, {2, 3, 9, 7}, 48)}, 1,
               {Attr("transBatchA", 1), Attr("transB", 1), Attr("alpha", 0.5)},
               64 * UnitRoundoff(DataType::kFloat32) + 2 * UnitRoundoff(dtype));
  }
}

}  // namespace
}  // namespace zerograph::runtime
