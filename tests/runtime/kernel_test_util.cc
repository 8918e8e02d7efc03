#include "runtime/kernel_test_util.h"

#include <cmath>
#include <cstring>

#include "zerograph/core/str_cat.h"

namespace zerograph::runtime::testing {
namespace {

template <typename T>
void Fill(DeviceTensor& t, const std::vector<double>& values) {
  T* data = t.data_as<T>();
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      // Through fp32: the kernels' inputs are what the test can represent exactly.
      data[i] = FromFloat<T>(static_cast<float>(values[i]));
    } else {
      data[i] = static_cast<T>(values[i]);
    }
  }
}

template <typename T>
void Read(const DeviceTensor& t, std::vector<double>& out) {
  const T* data = t.data_as<const T>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      out.push_back(ToFloat(data[i]));
    } else {
      out.push_back(static_cast<double>(data[i]));
    }
  }
}

template <typename Fn>
void ForDtype(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DataType::kFloat32:
      return fn(float{});
    case DataType::kFloat64:
      return fn(double{});
    case DataType::kFloat16:
      return fn(Float16{});
    case DataType::kBFloat16:
      return fn(BFloat16{});
    case DataType::kInt64:
      return fn(int64_t{});
    case DataType::kInt32:
      return fn(int32_t{});
    case DataType::kInt8:
      return fn(int8_t{});
    case DataType::kUint8:
      return fn(uint8_t{});
    case DataType::kBool:
      return fn(bool{});
    default:
      ADD_FAILURE() << "no test support for " << DataTypeName(dtype);
  }
}

}  // namespace

KernelRunner::KernelRunner() : device_(CreateCpuDevice()) {
  stream_ = std::move(device_->CreateStream("compute")).value();
  Status status = RegisterCpuKernels(registry_);
  EXPECT_TRUE(status.ok()) << status.ToString();
}

Node* KernelRunner::MakeNode(std::string_view domain, std::string_view op,
                             const std::vector<DeviceTensor>& inputs, size_t num_outputs,
                             const std::vector<Attr>& attrs) {
  std::vector<Value*> values;
  for (const DeviceTensor& t : inputs) {
    values.push_back(t.empty() ? nullptr : builder_.Input("in", t.dtype(), t.shape()));
  }
  std::vector<std::string> outputs;
  for (size_t i = 0; i < num_outputs; ++i) outputs.push_back(graph_.UniqueValueName("out"));
  Node* node = builder_.AddNode(OpName(domain, op), values, outputs);
  for (const Attr& attr : attrs) GraphBuilder::SetAttr(*node, attr);
  return node;
}

StatusOr<std::vector<OutputInfo>> KernelRunner::Infer(const Node& node,
                                                      const std::vector<DeviceTensor>& inputs) {
  std::vector<DataType> dtypes;
  std::vector<TensorSpec> specs;
  for (const DeviceTensor& t : inputs) {
    dtypes.push_back(t.empty() ? DataType::kUndefined : t.dtype());
    specs.push_back(TensorSpec{t.dtype(), t.shape()});
  }
  ZG_ASSIGN_OR_RETURN(
      std::unique_ptr<OpKernel> kernel,
      registry_.CreateKernel(node, DeviceType::kCpu, dtypes, rank_, nranks_, opset_version_));
  std::vector<const TensorSpec*> spec_ptrs;
  std::vector<HostValue> host_values(inputs.size());
  std::vector<const HostValue*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    spec_ptrs.push_back(inputs[i].empty() ? nullptr : &specs[i]);
    if (!inputs[i].empty()) host_values[i] = inputs[i].host_value();
    values.push_back(inputs[i].empty() ? nullptr : &host_values[i]);
  }
  return kernel->InferOutputs(ShapeContext{&node, spec_ptrs, values, nranks_});
}

StatusOr<std::vector<DeviceTensor>> KernelRunner::Run(const Node& node,
                                                      const std::vector<DeviceTensor>& inputs,
                                                      bool alias) {
  std::vector<DataType> dtypes;
  std::vector<TensorSpec> specs;
  for (const DeviceTensor& t : inputs) {
    dtypes.push_back(t.empty() ? DataType::kUndefined : t.dtype());
    specs.push_back(TensorSpec{t.dtype(), t.shape()});
  }
  ZG_ASSIGN_OR_RETURN(
      std::unique_ptr<OpKernel> kernel,
      registry_.CreateKernel(node, DeviceType::kCpu, dtypes, rank_, nranks_, opset_version_));
  std::vector<const TensorSpec*> spec_ptrs;
  std::vector<const DeviceTensor*> input_ptrs;
  std::vector<HostValue> host_values(inputs.size());
  std::vector<const HostValue*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    spec_ptrs.push_back(inputs[i].empty() ? nullptr : &specs[i]);
    input_ptrs.push_back(inputs[i].empty() ? nullptr : &inputs[i]);
    // Only host inputs are offered, as the executor will.
    bool host = false;
    for (int h : kernel->host_inputs()) host |= static_cast<size_t>(h) == i;
    if (host && input_ptrs.back() != nullptr) host_values[i] = inputs[i].host_value();
    values.push_back(host && input_ptrs.back() != nullptr ? &host_values[i] : nullptr);
  }
  ZG_ASSIGN_OR_RETURN(std::vector<OutputInfo> infos,
                      kernel->InferOutputs(ShapeContext{&node, spec_ptrs, values, nranks_}));
  std::vector<DeviceTensor> outputs;
  for (const OutputInfo& info : infos) {
    if (alias && info.in_place_input) {
      outputs.push_back(inputs[static_cast<size_t>(*info.in_place_input)]);
    } else if (alias && info.view) {
      ZG_ASSIGN_OR_RETURN(DeviceTensor view, inputs[static_cast<size_t>(info.view->input)].View(
                                                 info.view->offset, info.spec.shape));
      outputs.push_back(std::move(view));
    } else {
      ZG_ASSIGN_OR_RETURN(DeviceTensor out,
                          DeviceTensor::Allocate(*device_, info.spec.dtype, info.spec.shape));
      // Garbage, so a kernel that skips an element is caught.
      std::memset(out.data(), 0x7f, out.byte_size());
      outputs.push_back(std::move(out));
    }
  }
  std::vector<DeviceTensor*> output_ptrs;
  for (DeviceTensor& t : outputs) output_ptrs.push_back(&t);
  KernelContext ctx{input_ptrs, output_ptrs, stream_.get(), comm_, step_};
  ZG_RETURN_IF_ERROR(stream_->Enqueue([&] { return kernel->Compute(ctx); }));
  ZG_RETURN_IF_ERROR(stream_->Synchronize());
  return outputs;
}

StatusOr<std::vector<DeviceTensor>> KernelRunner::Run(std::string_view domain, std::string_view op,
                                                      const std::vector<DeviceTensor>& inputs,
                                                      size_t num_outputs,
                                                      const std::vector<Attr>& attrs, bool alias) {
  Node* node = MakeNode(domain, op, inputs, num_outputs, attrs);
  return Run(*node, inputs, alias);
}

DeviceTensor KernelRunner::MakeTensor(DataType dtype, Shape shape,
                                      const std::vector<double>& values) {
  DeviceTensor t = std::move(DeviceTensor::Allocate(*device_, dtype, std::move(shape))).value();
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel()) << "values for " << t.ToString();
  ForDtype(dtype, [&](auto tag) { Fill<decltype(tag)>(t, values); });
  return t;
}

DeviceTensor KernelRunner::Random(DataType dtype, Shape shape, uint32_t seed, double lo,
                                  double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(static_cast<size_t>(NumElements(shape)));
  for (double& v : values) v = dist(rng);
  if (dtype == DataType::kInt64 || dtype == DataType::kInt32) {
    for (double& v : values) v = std::floor(v);
  }
  return MakeTensor(dtype, std::move(shape), values);
}

std::vector<double> Values(const DeviceTensor& tensor) {
  std::vector<double> out;
  ForDtype(tensor.dtype(), [&](auto tag) { Read<decltype(tag)>(tensor, out); });
  return out;
}

std::vector<double> NumericGradient(const std::function<double(const std::vector<double>&)>& f,
                                    std::vector<double> x, double h) {
  std::vector<double> gradient(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i];
    x[i] = xi + h;
    const double up = f(x);
    x[i] = xi - h;
    const double down = f(x);
    x[i] = xi;
    gradient[i] = (up - down) / (2 * h);
  }
  return gradient;
}

double UnitRoundoff(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return std::ldexp(1.0, -11);
    case DataType::kBFloat16:
      return std::ldexp(1.0, -8);
    case DataType::kFloat64:
      return std::ldexp(1.0, -53);
    default:
      return std::ldexp(1.0, -24);
  }
}

void ExpectNear(const std::vector<double>& actual, const std::vector<double>& expected, double rtol,
                double atol, std::string_view what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int misses = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double tol = atol + rtol * std::fabs(expected[i]);
    const bool both_nan = std::isnan(actual[i]) && std::isnan(expected[i]);
    if (!both_nan && !(std::fabs(actual[i] - expected[i]) <= tol)) {
      if (++misses <= 5) {
        ADD_FAILURE() << what << " element " << i << ": got " << actual[i] << ", expected "
                      << expected[i] << " (tolerance " << tol << ")";
      }
    }
  }
  EXPECT_EQ(misses, 0) << what << ": " << misses << " of " << actual.size() << " elements off";
}

std::vector<int64_t> Unravel(int64_t index, const Shape& shape) {
  std::vector<int64_t> out(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    out[d] = index % shape[d];
    index /= shape[d];
  }
  return out;
}

int64_t BroadcastIndex(const std::vector<int64_t>& out_index, const Shape& in_shape) {
  int64_t index = 0;
  const size_t offset = out_index.size() - in_shape.size();
  for (size_t d = 0; d < in_shape.size(); ++d) {
    index = index * in_shape[d] + (in_shape[d] == 1 ? 0 : out_index[offset + d]);
  }
  return index;
}

}  // namespace zerograph::runtime::testing
