// adamw-bench: the fused AdamW and SGD updates over one gradient bucket, and the fp32 -> bf16
// Cast of one, in bytes moved per second, next to memcpy moving the same number of bytes in the
// same process. AdamW reads X, G, M, V and writes X, M, V (in place, as the executor runs it), so
// it moves 7 bytes per byte of one tensor; SGD reads X and G and writes X, 3; Cast reads 4 bytes
// per element and writes 2, 6. The memcpy copies half of that, which reads and writes the same
// total. For AdamW a further column is a trivial loop with its exact access pattern (x += g;
// m += g; v += g on the raw bits): the bandwidth this pattern gets at best, so arithmetic the
// kernel fails to hide shows as a ratio below 1 there. Prints a Markdown table; the goal (issues
// 4 and 15) is kernel / memcpy >= 0.6 in every dtype.
//
//   adamw-bench --elements 16777216 --reps 7 --dtypes fp32,fp16,bf16
//
// The kernels come from the registry on one-node IR graphs, so this measures what graph-exec
// runs, dispatch included (negligible next to 64 MiB of traffic).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/half.h"
#include "zerograph/runtime/kernel.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::runtime {
namespace {

struct Options {
  int64_t elements = int64_t{1} << 24;  // 16M: 64 MiB per fp32 tensor, a typical bucket
  int reps = 7;
  std::vector<std::string> dtypes = {"fp32", "fp16", "bf16"};
};

// One kernel on one dtype: its node's kernel and tensors. The updates write in place over their
// inputs (`in_place` names the input of each output); Cast writes `outputs`.
struct Case {
  std::string op;  // AdamW, SGD or Cast (from fp32 to `dtype`)
  std::string label;
  DataType dtype = DataType::kUndefined;
  std::unique_ptr<OpKernel> kernel;
  std::vector<DeviceTensor> inputs;
  std::vector<DeviceTensor> outputs;
  std::vector<int> in_place;
  size_t bytes_moved = 0;
  std::vector<double> kernel_seconds;
  std::vector<double> memcpy_seconds;
  std::vector<double> loop_seconds;  // AdamW's same-pattern loop
};

StatusOr<DataType> ParseDtype(const std::string& name) {
  static const std::map<std::string, DataType> kNames = {
      {"fp32", DataType::kFloat32}, {"fp16", DataType::kFloat16}, {"bf16", DataType::kBFloat16}};
  auto it = kNames.find(name);
  ZG_RETURN_IF_NOT(it != kNames.end(), "unknown dtype '", name, "' (fp32, fp16 or bf16)");
  return it->second;
}

// Writes `value(i)` as T into every element: this also faults every page in before timing.
template <typename T, typename Fn>
void FillAs(DeviceTensor& tensor, Fn value) {
  T* data = tensor.data_as<T>();
  for (int64_t i = 0; i < tensor.numel(); ++i) data[i] = FromFloat<T>(value(i));
}

template <typename Fn>
void Fill(DeviceTensor& tensor, Fn value) {
  switch (tensor.dtype()) {
    case DataType::kFloat16:
      return FillAs<Float16>(tensor, value);
    case DataType::kBFloat16:
      return FillAs<BFloat16>(tensor, value);
    default:
      return FillAs<float>(tensor, value);
  }
}

// Values normal in every dtype (fp16's smallest normal is 6.1e-5; no zeros), so the 16-bit
// conversions see the values training does; V must be non-negative.
float Pattern(const std::string& name, int64_t i) {
  if (name == "x") return 0.02f * static_cast<float>(i % 101 - 50) + 0.01f;
  if (name == "g") return 1e-3f * static_cast<float>(i % 89 - 44) + 5e-4f;
  if (name == "m") return 1e-3f * static_cast<float>(i % 53 - 26) + 5e-4f;
  return 1e-4f * static_cast<float>(i % 61 + 1);
}

StatusOr<Case> MakeCase(const std::string& op, const std::string& label, const Options& options,
                        Device& device, const KernelRegistry& registry, Graph& graph) {
  Case c;
  c.op = op;
  c.label = label;
  ZG_ASSIGN_OR_RETURN(c.dtype, ParseDtype(label));
  GraphBuilder builder(graph);
  const Shape shape = {options.elements};
  const std::string prefix = StrCat(op, ".", label);
  std::vector<Value*> values;
  std::vector<std::string> tensors;  // the names of the big inputs, for their fill pattern
  if (op != "Cast") {
    ZG_ASSIGN_OR_RETURN(DeviceTensor lr, DeviceTensor::Allocate(device, DataType::kFloat32, {}));
    *lr.data_as<float>() = 1e-4f;
    values.push_back(builder.Input(StrCat(prefix, ".lr"), DataType::kFloat32, {}));
    c.inputs.push_back(std::move(lr));
  }
  if (op == "AdamW") {
    ZG_ASSIGN_OR_RETURN(DeviceTensor step, DeviceTensor::Allocate(device, DataType::kInt64, {}));
    *step.data_as<int64_t>() = 1;
    values.push_back(builder.Input(StrCat(prefix, ".step"), DataType::kInt64, {}));
    c.inputs.push_back(std::move(step));
    tensors = {"x", "g", "m", "v"};
    c.in_place = {2, 4, 5};
  } else if (op == "SGD") {
    tensors = {"x", "g"};
    c.in_place = {1};
  } else {
    tensors = {"x"};
  }
  const DataType input_dtype = op == "Cast" ? DataType::kFloat32 : c.dtype;
  for (const std::string& name : tensors) {
    values.push_back(builder.Input(StrCat(prefix, ".", name), input_dtype, shape));
    ZG_ASSIGN_OR_RETURN(DeviceTensor t, DeviceTensor::Allocate(device, input_dtype, shape));
    Fill(t, [&](int64_t i) { return Pattern(name, i); });
    c.inputs.push_back(std::move(t));
  }
  std::vector<std::string> outputs;
  const size_t num_outputs = op == "Cast" ? 1 : c.in_place.size();
  for (size_t o = 0; o < num_outputs; ++o) outputs.push_back(StrCat(prefix, ".out", o));
  Node* node;
  if (op == "Cast") {
    node =
        builder.AddNode({"", "Cast"}, values, outputs, {Attr("to", static_cast<int64_t>(c.dtype))});
  } else {
    node = builder.AddNode({kZerographDomain, op}, values, outputs);
  }
  std::vector<DataType> dtypes;
  for (const DeviceTensor& t : c.inputs) dtypes.push_back(t.dtype());
  ZG_ASSIGN_OR_RETURN(c.kernel, registry.CreateKernel(*node, DeviceType::kCpu, dtypes));

  std::vector<TensorSpec> specs;
  for (const DeviceTensor& t : c.inputs) specs.push_back({t.dtype(), t.shape()});
  std::vector<const TensorSpec*> spec_ptrs;
  for (const TensorSpec& spec : specs) spec_ptrs.push_back(&spec);
  ZG_ASSIGN_OR_RETURN(std::vector<OutputInfo> infos,
                      c.kernel->InferOutputs(ShapeContext{node, spec_ptrs, {}}));
  // The executor updates the parameters and states in place; check the kernel still allows it.
  ZG_RET_CHECK(infos.size() == num_outputs, op, " has ", infos.size(), " outputs");
  for (size_t o = 0; o < c.in_place.size(); ++o) {
    ZG_RET_CHECK(infos[o].in_place_input == c.in_place[o], op, " output ", o,
                 " is not in place over input ", c.in_place[o]);
  }
  const size_t tensor_bytes = c.inputs.back().byte_size();
  if (op == "Cast") {
    ZG_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Allocate(device, c.dtype, shape));
    Fill(out, [](int64_t) { return 0.0f; });
    c.bytes_moved = tensor_bytes + out.byte_size();
    c.outputs.push_back(std::move(out));
  } else {
    c.bytes_moved = (tensors.size() + c.in_place.size()) * tensor_bytes;
  }
  return c;
}

// x += g; m += g; v += g over the bits, as integers (so no float special cases): reads 4
// streams and writes 3 in place, like AdamW, with next to no arithmetic.
template <typename U>
void SamePatternLoop(int64_t n, U* x, const U* g, U* m, U* v) {
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<U>(x[i] + g[i]);
    m[i] = static_cast<U>(m[i] + g[i]);
    v[i] = static_cast<U>(v[i] + g[i]);
  }
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Status Run(const Options& options) {
  std::unique_ptr<Device> device = CreateCpuDevice();
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, device->CreateStream("compute"));
  KernelRegistry registry;
  ZG_RETURN_IF_ERROR(RegisterCpuKernels(registry));
  Graph graph;
  std::vector<Case> cases;
  size_t max_bytes = 0;
  for (const std::string op : {"AdamW", "SGD", "Cast"}) {
    for (const std::string& label : options.dtypes) {
      if (op == "Cast" && label == "fp32") continue;  // Cast rows: fp32 to each 16-bit dtype
      ZG_ASSIGN_OR_RETURN(Case c, MakeCase(op, label, options, *device, registry, graph));
      max_bytes = std::max(max_bytes, c.bytes_moved);
      cases.push_back(std::move(c));
    }
  }
  // memcpy's source and destination, each half of the largest case's traffic, pages touched.
  ZG_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> source, device->Allocate(max_bytes / 2));
  ZG_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> destination, device->Allocate(max_bytes / 2));
  std::memset(source->data(), 0x3c, source->size());
  std::memset(destination->data(), 0, destination->size());
  // The same-pattern loop's own four tensors, so it never turns the AdamW inputs into garbage.
  std::vector<std::shared_ptr<Buffer>> scratch;
  for (int i = 0; i < 4; ++i) {
    ZG_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, device->Allocate(max_bytes / 7));
    std::memset(buffer->data(), i + 1, buffer->size());
    scratch.push_back(std::move(buffer));
  }

  // Computed on this thread, like memcpy: the CPU kernel runs synchronously wherever it is called
  // (on graph-exec's stream worker); the stream is only part of the contract.
  auto run_kernel = [&](Case& c) -> Status {
    std::vector<const DeviceTensor*> inputs;
    for (const DeviceTensor& t : c.inputs) inputs.push_back(&t);
    std::vector<DeviceTensor*> outputs;
    for (int input : c.in_place) outputs.push_back(&c.inputs[static_cast<size_t>(input)]);
    for (DeviceTensor& t : c.outputs) outputs.push_back(&t);
    if (c.op == "AdamW") ++*c.inputs[1].data_as<int64_t>();  // a real step counter
    return c.kernel->Compute(KernelContext{inputs, outputs, stream.get(), nullptr});
  };
  auto run_memcpy = [&](const Case& c) {
    std::memcpy(destination->data(), source->data(), c.bytes_moved / 2);
  };
  auto run_loop = [&](const Case& c) {
    auto as = [&](int i, auto* type) { return static_cast<decltype(type)>(scratch[i]->data()); };
    const int64_t n = c.inputs[2].numel();
    if (c.inputs[2].element_size() == 4) {
      uint32_t* t = nullptr;
      SamePatternLoop(n, as(0, t), as(1, t), as(2, t), as(3, t));
    } else {
      uint16_t* t = nullptr;
      SamePatternLoop(n, as(0, t), as(1, t), as(2, t), as(3, t));
    }
  };

  // One untimed round warms caches, TLBs and the branch predictors; then they alternate, so load
  // from other processes on a shared machine hits them alike.
  for (Case& c : cases) {
    run_memcpy(c);
    if (c.op == "AdamW") run_loop(c);
    ZG_RETURN_IF_ERROR(run_kernel(c));
  }
  for (int rep = 0; rep < options.reps; ++rep) {
    for (Case& c : cases) {
      auto start = std::chrono::steady_clock::now();
      run_memcpy(c);
      c.memcpy_seconds.push_back(Seconds(start));
      if (c.op == "AdamW") {
        start = std::chrono::steady_clock::now();
        run_loop(c);
        c.loop_seconds.push_back(Seconds(start));
      }
      start = std::chrono::steady_clock::now();
      ZG_RETURN_IF_ERROR(run_kernel(c));
      c.kernel_seconds.push_back(Seconds(start));
    }
  }

  std::printf(
      "Median of %d alternating repetitions after one warm-up, one thread, warm pages. Bytes "
      "moved: AdamW 7 x one tensor (X, G, M, V read; X, M, V written in place), SGD 3 x (X, G "
      "read; X written in place), Cast fp32 -> 16-bit 4 + 2 bytes per element; memcpy copies half "
      "that many bytes, so it reads and writes the same total; the same-pattern loop moves "
      "exactly AdamW's bytes with integer adds.\n\n",
      options.reps);
  std::printf(
      "| kernel | dtype | elements | bytes moved (MiB) | kernel ms | kernel GB/s | memcpy GB/s "
      "| kernel / memcpy | same-pattern loop GB/s | kernel / loop |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Case& c : cases) {
    const double bytes = static_cast<double>(c.bytes_moved);
    const double kernel = Median(c.kernel_seconds);
    const double copy = Median(c.memcpy_seconds);
    const std::string dtype = c.op == "Cast" ? StrCat("fp32 -> ", c.label) : c.label;
    std::printf("| %s | %s | %lld | %.0f | %.2f | %.2f | %.2f | **%.2f** | ", c.op.c_str(),
                dtype.c_str(), static_cast<long long>(options.elements), bytes / (1 << 20),
                kernel * 1e3, bytes / kernel / 1e9, bytes / copy / 1e9, copy / kernel);
    if (c.loop_seconds.empty()) {
      std::printf("- | - |\n");
    } else {
      const double loop = Median(c.loop_seconds);
      std::printf("%.2f | %.2f |\n", bytes / loop / 1e9, loop / kernel);
    }
  }
  return Status::Ok();
}

}  // namespace
}  // namespace zerograph::runtime

int main(int argc, char** argv) {
  zerograph::runtime::Options options;
  CLI::App app("The fused AdamW and SGD updates and Cast against memcpy of the same bytes.");
  app.add_option("--elements", options.elements, "Elements per tensor (one bucket)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--reps", options.reps, "Timed repetitions of each")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--dtypes", options.dtypes, "Element types: fp32, fp16, bf16")
      ->delimiter(',')
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  zerograph::Status status = zerograph::runtime::Run(options);
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
    return status.ExitCode();
  }
  return 0;
}
