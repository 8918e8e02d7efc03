// gpu-kernel-check: every CUDA kernel against the CPU kernel of the same key on the same random
// inputs, then the fused AdamW update's bandwidth next to a device-to-device copy of the same
// bytes. Prints Markdown tables. Exit codes: 0 every kernel within its dtype's tolerance, 1 some
// kernel failed, 3 no CUDA GPU (the message says "no CUDA GPU found") or the GPU failed.
//
//   gpu-kernel-check [--bench-mib 256] [--reps 20] [--no-bench]
//
// Inputs come from a table of small representative shapes per op (odd lengths reach the vector
// kernels' tails; broadcasts reach the strided ones); the optimizers get training-like magnitudes.
// An output's error is |gpu − cpu| / max(|cpu|, 1e-3 · max|cpu|): relative, with a floor so values
// near 0 in a tensor of larger ones do not dominate.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/cuda.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/half.h"
#include "zerograph/runtime/kernel.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph::runtime {
namespace {

struct Options {
  int64_t bench_mib = 256;  // bytes of each of AdamW's X, G, M, V
  int reps = 20;
  bool no_bench = false;
};

// Calls fn(T{}) with T the C++ type of `dtype`, for every dtype a kernel is registered for.
template <typename Fn>
void VisitDtype(DataType dtype, Fn&& fn) {
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
    case DataType::kInt16:
      return fn(int16_t{});
    case DataType::kInt8:
      return fn(int8_t{});
    case DataType::kUint64:
      return fn(uint64_t{});
    case DataType::kUint32:
      return fn(uint32_t{});
    case DataType::kUint16:
      return fn(uint16_t{});
    case DataType::kUint8:
      return fn(uint8_t{});
    case DataType::kBool:
      return fn(bool{});
    default:
      return;
  }
}

template <typename T>
constexpr bool kNarrow = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

bool IsFloat(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat64 ||
         dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
}

// Host tensors and nodes for the cases.
class Inputs {
 public:
  explicit Inputs(Device& cpu) : cpu_(cpu) {}

  DeviceTensor Make(DataType dtype, Shape shape, const std::vector<double>& values) {
    DeviceTensor t = std::move(DeviceTensor::Allocate(cpu_, dtype, std::move(shape))).value();
    VisitDtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      T* data = t.data_as<T>();
      for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i) {
        if constexpr (kNarrow<T>) {
          data[i] = FromFloat<T>(static_cast<float>(values[i]));
        } else {
          data[i] = static_cast<T>(values[i]);
        }
      }
    });
    return t;
  }
  // Uniform in [lo, hi); whole numbers for the integer dtypes.
  DeviceTensor Random(DataType dtype, Shape shape, double lo = -1, double hi = 1) {
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> values(static_cast<size_t>(NumElements(shape)));
    for (double& v : values) v = IsFloat(dtype) ? dist(rng_) : std::floor(dist(rng_));
    return Make(dtype, std::move(shape), values);
  }
  DeviceTensor Scalar(DataType dtype, double value) { return Make(dtype, {}, {value}); }
  DeviceTensor Int64s(const std::vector<int64_t>& values) {
    return Make(DataType::kInt64, {static_cast<int64_t>(values.size())},
                std::vector<double>(values.begin(), values.end()));
  }

  // A node whose inputs have the given dtypes and shapes.
  Node* MakeNode(const std::string& domain, const std::string& op,
                 const std::vector<TensorSpec>& inputs, size_t num_outputs,
                 const std::vector<Attr>& attrs) {
    std::vector<Value*> values;
    for (const TensorSpec& t : inputs) values.push_back(builder_.Input("in", t.dtype, t.shape));
    std::vector<std::string> outputs;
    for (size_t i = 0; i < num_outputs; ++i) outputs.push_back(graph_.UniqueValueName("out"));
    Node* node = builder_.AddNode(OpName(domain, op), values, outputs);
    for (const Attr& attr : attrs) GraphBuilder::SetAttr(*node, attr);
    return node;
  }

 private:
  Device& cpu_;
  std::mt19937 rng_{2024};
  Graph graph_;
  GraphBuilder builder_{graph_};
};

// One row of the table: a node and its inputs.
struct Case {
  Case(std::string case_shape, std::vector<DeviceTensor> case_inputs, size_t case_outputs = 1,
       std::vector<Attr> case_attrs = {})
      : shape(std::move(case_shape)),
        inputs(std::move(case_inputs)),
        outputs(case_outputs),
        attrs(std::move(case_attrs)) {}

  std::string shape;  // what the row prints
  std::vector<DeviceTensor> inputs;
  size_t outputs;
  std::vector<Attr> attrs;
};

// The cases of one (op, dtype); empty when the table has none for the op.
std::vector<Case> CasesFor(const KernelKey& key, Inputs& in) {
  const std::string& op = key.op_type;
  const DataType d = key.dtype;
  // The unsigned dtypes take no negative values.
  const bool is_unsigned = d == DataType::kUint8 || d == DataType::kUint16 ||
                           d == DataType::kUint32 || d == DataType::kUint64;
  const double low = is_unsigned ? 0 : -100;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Greater" || op == "Less" ||
      op == "LessOrEqual" || op == "GreaterOrEqual" || op == "Equal" || op == "And" || op == "Or" ||
      op == "Mod") {
    const bool divides = op == "Div" || op == "Mod";
    const double top = d == DataType::kBool ? 2 : 100;
    const double lo = divides ? (IsFloat(d) ? 0.5 : 1) : d == DataType::kBool ? 0 : low;
    const double hi = divides ? (IsFloat(d) ? 2 : 50) : top;
    const std::vector<Attr> attrs =
        op == "Mod" && IsFloat(d) ? std::vector<Attr>{Attr("fmod", 1)} : std::vector<Attr>{};
    const double a_lo = d == DataType::kBool ? 0 : low;
    return {Case{"[4099] (+) [4099]",
                 {in.Random(d, {4099}, a_lo, top), in.Random(d, {4099}, lo, hi)},
                 1,
                 attrs},
            Case{"[4,1,33] (+) [3,33]",
                 {in.Random(d, {4, 1, 33}, a_lo, top), in.Random(d, {3, 33}, lo, hi)},
                 1,
                 attrs}};
  }
  if (op == "Max" || op == "Min" || op == "Sum" || op == "Mean") {
    return {Case{"[4099]", {in.Random(d, {4099}, low, 100)}},
            Case{"[4,1,33] (+) [3,33] (+) [33]",
                 {in.Random(d, {4, 1, 33}, low, 100), in.Random(d, {3, 33}, low, 100),
                  in.Random(d, {33}, low, 100)}}};
  }
  if (op == "Where") {
    const double top = d == DataType::kBool ? 2 : 100;
    return {Case{"[4,1,33] ? [3,33] : [33]",
                 {in.Random(DataType::kBool, {4, 1, 33}, 0, 2), in.Random(d, {3, 33}, 0, top),
                  in.Random(d, {33}, 0, top)}}};
  }
  if (op == "Pow") {
    const bool whole = !IsFloat(d);
    return {Case{"[4099] ^ [4099]",
                 {in.Random(d, {4099}, whole ? 0 : 0.5, whole ? 6 : 2),
                  in.Random(d, {4099}, whole ? 0 : -3, 4)}},
            Case{"[4,1,33] ^ [3,33]",
                 {in.Random(d, {4, 1, 33}, whole ? 0 : 0.5, whole ? 6 : 2),
                  in.Random(d, {3, 33}, whole ? 0 : -3, 4)}}};
  }
  if (op == "Clip") {
    return {Case{"[4099] min max",
                 {in.Random(d, {4099}, low, 100), in.Scalar(d, 10), in.Scalar(d, 60)}},
            Case{"[4099] min only", {in.Random(d, {4099}, low, 100), in.Scalar(d, 10)}}};
  }
  if (op == "LeakyRelu")
    return {Case{"[4099] alpha 0.1", {in.Random(d, {4099}, -10, 10)}, 1, {Attr("alpha", 0.1)}}};
  if (op == "Gelu") {
    // Not far below 0, where 1 + erf(x/√2) cancels.
    return {Case{"[4099]", {in.Random(d, {4099}, -1, 5)}},
            Case{"[4099] tanh", {in.Random(d, {4099}, -1, 5)}, 1, {Attr("approximate", "tanh")}}};
  }
  if (op == "Abs" || op == "Sign" || op == "Floor" || op == "Ceil" || op == "Exp" || op == "Erf" ||
      op == "Tanh" || op == "Sigmoid") {
    return {Case{"[4099]", {in.Random(d, {4099}, IsFloat(d) ? -5 : low, IsFloat(d) ? 5 : 100)}}};
  }
  if (op == "Log" || op == "Reciprocal") return {Case{"[4099]", {in.Random(d, {4099}, 0.1, 100)}}};
  if (op == "Not") return {Case{"[4099]", {in.Random(d, {4099}, 0, 2)}}};
  // Inputs away from where a result cancels to near zero (Gelu' at x = -0.75, 1 - Y² at |Y| = 1),
  // where one ulp of a libm difference would be a large relative error.
  if (op == "SigmoidGrad" || op == "TanhGrad") {
    return {Case{"[4099], [4099]", {in.Random(d, {4099}), in.Random(d, {4099}, -0.9, 0.9)}}};
  }
  if (op == "GeluGrad" || op == "FastGeluGrad" ||
      (op == "ReluGrad" && key.domain == "com.microsoft")) {
    return {Case{"[4099], [4099]", {in.Random(d, {4099}), in.Random(d, {4099}, -0.5, 3)}}};
  }
  if (op == "BiasGeluGrad_dX") {
    return {Case{
        "[33,129], [33,129], [129]",
        {in.Random(d, {33, 129}), in.Random(d, {33, 129}, 0.5, 3), in.Random(d, {129}, -1, 0)}}};
  }
  if (op == "DivGrad") {
    return {Case{"[4,3,33] / [3,1]",
                 {in.Random(d, {4, 3, 33}), in.Random(d, {4, 3, 33}), in.Random(d, {3, 1}, 0.5, 2)},
                 2},
            Case{"[33] / [4,3,33]",
                 {in.Random(d, {4, 3, 33}), in.Random(d, {33}), in.Random(d, {4, 3, 33}, 0.5, 2)},
                 2}};
  }
  if (op == "Scale") {
    return {Case{"[4099] x 3", {in.Random(d, {4099}), in.Scalar(DataType::kFloat32, 3)}},
            Case{"[4099] / 4 (int64)",
                 {in.Random(d, {4099}), in.Scalar(DataType::kInt64, 4)},
                 1,
                 {Attr("scale_down", int64_t{1})}}};
  }
  if (op == "ReluGrad")
    return {Case{"[4099], [4099]", {in.Random(d, {4099}), in.Random(d, {4099})}}};
  if (op == "Relu" || op == "Neg") return {Case{"[4099]", {in.Random(d, {4099}, -100, 100)}}};
  if (op == "Sqrt") return {Case{"[4099]", {in.Random(d, {4099}, 0, 100)}}};
  if (op == "Sin") return {Case{"[4099]", {in.Random(d, {4099}, -10, 10)}}};
  if (op == "Cast") {
    std::vector<Case> cases;
    for (DataType to :
         {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16,
          DataType::kInt64, DataType::kInt32, DataType::kInt8, DataType::kUint8, DataType::kBool}) {
      // Non-negative and below 128: every cast is defined.
      cases.push_back(Case{StrCat("[1001] to ", DataTypeName(to)),
                           {in.Random(d, {1001}, 0, d == DataType::kBool ? 2 : 100)},
                           1,
                           {Attr("to", static_cast<int64_t>(to))}});
    }
    return cases;
  }
  if (op == "ReduceSum" || op == "ReduceSumTraining") {
    const DeviceTensor x = in.Random(d, {8, 3, 1500}, -100, 100);
    return {Case{"[8,3,1500] axes [2]", {x, in.Int64s({2})}},
            Case{"[8,3,1500] axes [0]", {x, in.Int64s({0})}},
            Case{"[8,3,1500] axes [0,2] keepdims 0",
                 {x, in.Int64s({0, 2})},
                 1,
                 {Attr("keepdims", int64_t{0})}}};
  }
  if (op.starts_with("Reduce")) {
    // Positive, so that the logs are defined; axes as the attribute (opset 17).
    const DeviceTensor x = in.Random(d, {8, 3, 1500}, 0.5, 1.5);
    return {Case{"[8,3,1500] axes [2]", {x}, 1, {Attr("axes", std::vector<int64_t>{2})}},
            Case{"[8,3,1500] axes [0]", {x}, 1, {Attr("axes", std::vector<int64_t>{0})}},
            Case{"[8,3,1500] axes [0,2] keepdims 0",
                 {x},
                 1,
                 {Attr("axes", std::vector<int64_t>{0, 2}), Attr("keepdims", int64_t{0})}}};
  }
  if (op == "ArgMax" || op == "ArgMin") {
    return {Case{"[8,3,1500] axis 2",
                 {in.Random(d, {8, 3, 1500}, -100, 100)},
                 1,
                 {Attr("axis", int64_t{2})}},
            Case{"[8,300,5] axis 1 last",
                 {in.Random(d, {8, 300, 5}, -100, 100)},
                 1,
                 {Attr("axis", int64_t{1}), Attr("select_last_index", int64_t{1})}}};
  }
  if (op == "Softmax" || op == "LogSoftmax") {
    return {Case{"[64,1000] axis -1", {in.Random(d, {64, 1000}, -10, 10)}},
            Case{"[4,33,17] axis 1",
                 {in.Random(d, {4, 33, 17}, -10, 10)},
                 1,
                 {Attr("axis", int64_t{1})}}};
  }
  if (op == "SoftmaxGrad_13" || op == "LogSoftmaxGrad_13") {
    return {Case{"[64,1000] axis -1", {in.Random(d, {64, 1000}), in.Random(d, {64, 1000}, 0, 1)}},
            Case{"[4,33,17] axis 1",
                 {in.Random(d, {4, 33, 17}), in.Random(d, {4, 33, 17}, 0, 1)},
                 1,
                 {Attr("axis", int64_t{1})}}};
  }
  if (op == "LayerNormalization") {
    return {Case{"[64,768] scale bias, 3 outputs",
                 {in.Random(d, {64, 768}, -3, 3), in.Random(d, {768}), in.Random(d, {768})},
                 3}};
  }
  if (op == "SimplifiedLayerNormalization") {
    return {Case{
        "[64,768] scale, 2 outputs", {in.Random(d, {64, 768}, -3, 3), in.Random(d, {768})}, 2}};
  }
  if (op == "LayerNormalizationGrad" || op == "SimplifiedLayerNormalizationGrad") {
    std::vector<DeviceTensor> inputs = {in.Random(d, {64, 768}), in.Random(d, {64, 768}, -3, 3),
                                        in.Random(d, {768})};
    if (op == "LayerNormalizationGrad") {
      inputs.push_back(in.Random(DataType::kFloat32, {64, 1}, -0.1, 0.1));
    }
    inputs.push_back(in.Random(DataType::kFloat32, {64, 1}, 0.5, 2));
    return {Case{"[64,768] scale [768]", std::move(inputs),
                 op == "LayerNormalizationGrad" ? size_t{3} : size_t{2}}};
  }
  if (op == "MatMul") {
    return {Case{"[2,1,5,7] x [3,7,4]", {in.Random(d, {2, 1, 5, 7}), in.Random(d, {3, 7, 4})}},
            Case{"[4,64,128] x [128,32]", {in.Random(d, {4, 64, 128}), in.Random(d, {128, 32})}},
            Case{"[7] x [2,7,4]", {in.Random(d, {7}), in.Random(d, {2, 7, 4})}}};
  }
  if (op == "Gemm") {
    return {Case{"A'[7,5] B'[4,7] C[4]",
                 {in.Random(d, {7, 5}), in.Random(d, {4, 7}), in.Random(d, {4})},
                 1,
                 {Attr("transA", int64_t{1}), Attr("transB", int64_t{1}), Attr("alpha", 0.5),
                  Attr("beta", 2.0)}},
            Case{"A[33,65] B[65,17]", {in.Random(d, {33, 65}), in.Random(d, {65, 17})}}};
  }
  if (op == "FusedMatMul") {
    return {Case{"[4,64,128]' x [128,32], alpha 0.5",
                 {in.Random(d, {4, 128, 64}), in.Random(d, {128, 32})},
                 1,
                 {Attr("transA", int64_t{1}), Attr("alpha", 0.5)}},
            Case{"[5,2,3,7] transBatchA x [2,3,9,7]'",
                 {in.Random(d, {5, 2, 3, 7}), in.Random(d, {2, 3, 9, 7})},
                 1,
                 {Attr("transBatchA", int64_t{1}), Attr("transB", int64_t{1})}}};
  }
  // Losses: labels in [0, C), some of them the ignored 3.
  const bool loss = op == "SoftmaxCrossEntropyLoss" || op == "NegativeLogLikelihoodLoss" ||
                    op == "SoftmaxCrossEntropyLossInternal";
  if (loss) {
    const double lo = op == "NegativeLogLikelihoodLoss" ? -8 : -20;
    const double hi = op == "NegativeLogLikelihoodLoss" ? 0 : 20;
    const size_t outputs = op == "NegativeLogLikelihoodLoss" ? 1 : 2;
    std::vector<DeviceTensor> mean_inputs = {in.Random(d, {256, 1000}, lo, hi),
                                             in.Random(DataType::kInt64, {256}, 0, 1000),
                                             in.Random(d, {1000}, 0.5, 2)};
    std::vector<DeviceTensor> none_inputs = {in.Random(d, {4, 5, 3, 7}, lo, hi),
                                             in.Random(DataType::kInt32, {4, 3, 7}, 0, 5)};
    std::vector<Attr> mean_attrs = {Attr("reduction", "mean")};
    if (op == "SoftmaxCrossEntropyLossInternal") {
      mean_inputs.push_back(in.Make(DataType::kInt64, {}, {3}));
    } else {
      mean_attrs.push_back(Attr("ignore_index", int64_t{3}));
    }
    return {Case{"[256,1000] mean, weights, ignore 3", mean_inputs, outputs, mean_attrs},
            Case{"[4,5,3,7] none", none_inputs, outputs, {Attr("reduction", "none")}}};
  }
  if (op == "SoftmaxCrossEntropyLossGrad" || op == "SoftmaxCrossEntropyLossInternalGrad") {
    const bool internal = op == "SoftmaxCrossEntropyLossInternalGrad";
    std::vector<DeviceTensor> mean_inputs = {
        in.Random(d, {}, 0.5, 2), in.Random(d, {256, 1000}, -12, -1),
        in.Random(DataType::kInt64, {256}, 0, 1000), in.Random(d, {1000}, 0.5, 2)};
    std::vector<Attr> mean_attrs = {Attr("reduction", "mean")};
    if (internal) {
      mean_inputs.push_back(in.Make(DataType::kInt64, {}, {3}));
      mean_inputs.push_back(in.Random(d, {256, 1000}));
    } else {
      mean_attrs.push_back(Attr("ignore_index", int64_t{3}));
    }
    return {Case{"[256,1000] mean, weights, ignore 3", mean_inputs, 1, mean_attrs},
            Case{"[4,5,3,7] none",
                 {in.Random(d, {4, 3, 7}), in.Random(d, {4, 5, 3, 7}, -5, -0.1),
                  in.Random(DataType::kInt32, {4, 3, 7}, 0, 5)},
                 1,
                 {Attr("reduction", "none")}}};
  }
  if (op == "Dropout") {
    const DeviceTensor x = in.Random(d, {4099}, -100, 100);
    return {Case{"[4099] training, ratio 0.3, seed 7",
                 {x, in.Scalar(DataType::kFloat32, 0.3), in.Make(DataType::kBool, {}, {1})},
                 2,
                 {Attr("seed", int64_t{7})}},
            Case{"[4099] inference", {x}, 2}};
  }
  if (op == "DropoutGrad") {
    return {Case{"[4099] ratio 0.3",
                 {in.Random(d, {4099}, -100, 100), in.Random(DataType::kBool, {4099}, 0, 2),
                  in.Scalar(DataType::kFloat32, 0.3)}}};
  }
  if (op == "InPlaceAccumulatorV2") {
    return {Case{"[4099] += fp32 [4099]",
                 {in.Random(d, {4099}, -100, 100), in.Random(DataType::kFloat32, {4099}, -1, 1),
                  in.Make(DataType::kBool, {1}, {0})},
                 2}};
  }
  if (op == "Identity") return {Case{"[2,3,5]", {in.Random(d, {2, 3, 5}, 0, 100)}}};
  if (op == "Reshape") {
    return {Case{"[2,3,5] to [-1,5]", {in.Random(d, {2, 3, 5}, 0, 100), in.Int64s({-1, 5})}}};
  }
  if (op == "Transpose") {
    return {Case{"[2,3,5,7] perm [2,0,3,1]",
                 {in.Random(d, {2, 3, 5, 7}, 0, 100)},
                 1,
                 {Attr("perm", std::vector<int64_t>{2, 0, 3, 1})}}};
  }
  // Data movement: views, strided gathers, 2-D copies and indexed kernels.
  if (op == "Shape" || op == "Size") return {Case{"[2,3,5]", {in.Random(d, {2, 3, 5}, 0, 100)}}};
  if (op == "Squeeze")
    return {Case{"[2,1,5] axes [1]", {in.Random(d, {2, 1, 5}, 0, 100), in.Int64s({1})}}};
  if (op == "Unsqueeze")
    return {Case{"[2,5] axes [0,2]", {in.Random(d, {2, 5}, 0, 100), in.Int64s({0, 2})}}};
  if (op == "Flatten")
    return {
        Case{"[2,3,5] axis 2", {in.Random(d, {2, 3, 5}, 0, 100)}, 1, {Attr("axis", int64_t{2})}}};
  if (op == "Expand") {
    return {Case{"[3,1] to [2,3,1001]", {in.Random(d, {3, 1}, 0, 100), in.Int64s({2, 1, 1001})}}};
  }
  if (op == "Tile")
    return {Case{"[3,33] x [2,3]", {in.Random(d, {3, 33}, 0, 100), in.Int64s({2, 3})}}};
  if (op == "Slice") {
    const DeviceTensor x = in.Random(d, {6, 7, 9}, 0, 100);
    return {
        Case{"[6,7,9] [1:5, ::-2]",
             {x, in.Int64s({1, -1}), in.Int64s({5, -100}), in.Int64s({0, 2}), in.Int64s({1, -2})}},
        Case{"[6,7,9] rows [2:4]", {x, in.Int64s({2}), in.Int64s({4})}}};
  }
  if (op == "Split") {
    return {Case{"[4,1001] axis 1 into [1,1000]",
                 {in.Random(d, {4, 1001}, 0, 100), in.Int64s({1, 1000})},
                 2,
                 {Attr("axis", int64_t{1})}}};
  }
  if (op == "Concat") {
    return {Case{"[3,5,7] ++ [3,2,7] axis 1",
                 {in.Random(d, {3, 5, 7}, 0, 100), in.Random(d, {3, 2, 7}, 0, 100)},
                 1,
                 {Attr("axis", int64_t{1})}}};
  }
  if (op == "Range") {
    return {Case{"0 to 1000 by 3", {in.Scalar(d, 0), in.Scalar(d, 1000), in.Scalar(d, 3)}}};
  }
  if (op == "ConstantOfShape") return {Case{"[33,65] of 0", {in.Int64s({33, 65})}}};
  if (op == "Gather") {
    return {Case{"[7,33,5] axis 1, [2,3] indices",
                 {in.Random(d, {7, 33, 5}, 0, 100),
                  in.Make(DataType::kInt64, {2, 3}, {0, -1, 32, 5, 5, 17})},
                 1,
                 {Attr("axis", int64_t{1})}}};
  }
  if (op == "GatherElements") {
    return {Case{"[5,7] axis 1",
                 {in.Random(d, {5, 7}, 0, 100), in.Random(DataType::kInt64, {5, 3}, -7, 7)},
                 1,
                 {Attr("axis", int64_t{1})}}};
  }
  if (op == "ScatterElements") {
    // Distinct indices per column: the order of stores does not matter.
    return {Case{"[4,6] axis 0",
                 {in.Random(d, {4, 6}, 0, 100),
                  in.Make(DataType::kInt64, {2, 6}, {0, 1, 2, 3, 0, 1, 3, 2, 1, 0, 3, 2}),
                  in.Random(d, {2, 6}, 0, 100)}}};
  }
  if (op == "Trilu")
    return {Case{"[3,17,33] upper k 2", {in.Random(d, {3, 17, 33}, 0, 100), in.Int64s({2})}}};
  if (op == "CastLike") {
    return {Case{"[1001] like float",
                 {in.Random(d, {1001}, 0, d == DataType::kBool ? 2 : 100),
                  in.Random(DataType::kFloat32, {1})}}};
  }
  if (op == "GatherGrad") {
    return {Case{"[9,17] axis 0, 6 rows, repeats",
                 {in.Int64s({9, 17}), in.Make(DataType::kInt64, {6}, {0, 3, 3, -1, 8, 0}),
                  in.Random(d, {6, 17})}}};
  }
  if (op == "Constant") {
    return {Case{"value_floats [5]",
                 {},
                 1,
                 {Attr("value_floats", std::vector<float>{1, -2, 3.5f, 0, 1e-3f})}}};
  }
  if (op == "CoalesceTensors") {
    return {Case{"[3,5] [7] in [32]",
                 {in.Random(d, {3, 5}, 0, 100), in.Random(d, {7}, 0, 100)},
                 1,
                 {Attr("offsets", std::vector<int64_t>{0, 16}),
                  Attr("numels", std::vector<int64_t>{15, 7}), Attr("total", int64_t{32})}}};
  }
  if (op == "TensorViews") {
    return {Case{"[32] to [3,5] [7]",
                 {in.Random(d, {32}, 0, 100)},
                 2,
                 {Attr("offsets", std::vector<int64_t>{0, 16}),
                  Attr("shapes", std::vector<int64_t>{3, 5, 7}),
                  Attr("ranks", std::vector<int64_t>{2, 1})}}};
  }
  if (op == "LocalShard") return {Case{"[32], 1 rank", {in.Random(d, {32}, 0, 100)}}};
  if (op == "Nop") return {Case{"[32], 1 dep", {in.Random(d, {32}), in.Random(d, {4})}}};
  if (op == "ReduceScatter") {
    return {Case{"[4096], 1 rank, avg",
                 {in.Random(d, {4096}, 0, 100)},
                 1,
                 {Attr("nranks", int64_t{1}), Attr("reduce_op", "avg")}}};
  }
  if (op == "AllReduce") {
    return {Case{
        "[4096], 1 rank, sum", {in.Random(d, {4096}, 0, 100)}, 1, {Attr("nranks", int64_t{1})}}};
  }
  if (op == "AllGather") {
    return {
        Case{"[4096], 1 rank", {in.Random(d, {4096}, 0, 100)}, 1, {Attr("nranks", int64_t{1})}}};
  }
  // Optimizers: three tensors (one not a multiple of any vector width), training-like scales.
  const std::vector<Shape> shapes = {{64, 64}, {333}, {5000}};
  auto groups = [&](std::vector<double> scales, std::vector<DeviceTensor> tensors) {
    for (size_t g = 0; g < scales.size(); ++g) {
      const bool non_negative = g >= 3;  // the second moments
      for (const Shape& s : shapes) {
        tensors.push_back(in.Random(d, s, non_negative ? 0 : -scales[g], scales[g]));
      }
    }
    return tensors;
  };
  // The optional control: gradients scaled by 0.25, or the update skipped.
  auto with_control = [&](std::vector<DeviceTensor> tensors, double skip) {
    tensors.push_back(in.Make(DataType::kFloat32, {3}, {0.25, skip, 7}));
    return tensors;
  };
  if (op == "AdamW") {
    auto inputs = [&] {
      return groups({5e-2, 1e-3, 1e-4, 1e-6},
                    {in.Scalar(DataType::kFloat32, 1e-3), in.Scalar(DataType::kInt64, 10)});
    };
    return {Case{"3 tensors, 9429 elements, step 10", inputs(), 9},
            Case{"the same, control scales G", with_control(inputs(), 0), 9},
            Case{"the same, control skips", with_control(inputs(), 1), 9}};
  }
  if (op == "SGD") {
    auto inputs = [&] { return groups({5e-2, 1e-3}, {in.Scalar(DataType::kFloat32, 1e-2)}); };
    return {Case{"3 tensors, 9429 elements", inputs(), 3},
            Case{"the same, control scales G", with_control(inputs(), 0), 3},
            Case{"the same, control skips", with_control(inputs(), 1), 3}};
  }
  if (op == "SumOfSquares") {
    // Every other input in another dtype: the kernel reads each input's own.
    const DataType other = d == DataType::kFloat32 ? DataType::kBFloat16 : DataType::kFloat32;
    return {Case{"[64,64] [333] [5000], mixed dtypes",
                 {in.Random(d, {64, 64}), in.Random(other, {333}, -4, 4), in.Random(d, {5000})}}};
  }
  if (op == "GradientControl") {
    auto scalar = [&](double v) { return in.Scalar(DataType::kFloat32, v); };
    const std::vector<Attr> attrs = {Attr("max_norm", 1.0), Attr("growth_interval", int64_t{3})};
    return {Case{"unscaled, clipped", {scalar(16)}, 1, attrs},
            Case{"scaled, grows", {scalar(1e6), scalar(1024), scalar(2)}, 3, attrs},
            Case{"scaled, overflow",
                 {scalar(std::numeric_limits<double>::infinity()), scalar(1024), scalar(1)},
                 3,
                 attrs}};
  }
  const std::vector<DeviceTensor> rt = {in.Scalar(DataType::kFloat32, 1e-2),
                                        in.Scalar(DataType::kInt64, 5)};
  if (op == "Adam") {
    return {Case{"3 tensors, step 5",
                 groups({5e-2, 1e-3, 1e-4, 1e-6}, rt),
                 9,
                 {Attr("norm_coefficient", 1e-2), Attr("norm_coefficient_post", 1e-3)}}};
  }
  if (op == "Momentum") {
    std::vector<Case> cases;
    for (const char* mode : {"standard", "nesterov"}) {
      cases.push_back(Case{StrCat("3 tensors, step 5, ", mode),
                           groups({5e-2, 1e-3, 1e-3}, rt),
                           6,
                           {Attr("alpha", 0.9), Attr("beta", 0.1), Attr("norm_coefficient", 1e-2),
                            Attr("mode", mode)}});
    }
    return cases;
  }
  if (op == "Adagrad") {
    // The accumulated squares are non-negative: the third group, scaled as a second moment.
    std::vector<DeviceTensor> tensors = groups({5e-2, 1e-3}, rt);
    for (const Shape& s : shapes) tensors.push_back(in.Random(d, s, 0, 1e-6));
    return {Case{"3 tensors, step 5",
                 std::move(tensors),
                 6,
                 {Attr("decay_factor", 0.1), Attr("norm_coefficient", 1e-2)}}};
  }
  return {};
}

// A device with a stream, a registry and (for collectives) a one-rank communicator.
struct Side {
  std::unique_ptr<Device> device;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Communicator> comm;
  Status comm_status;  // why there is no communicator
};

std::vector<double> ToDoubles(const DeviceTensor& host) {
  std::vector<double> out;
  VisitDtype(host.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* data = host.data_as<const T>();
    for (int64_t i = 0; i < host.numel(); ++i) {
      if constexpr (kNarrow<T>) {
        out.push_back(ToFloat(data[i]));
      } else {
        out.push_back(static_cast<double>(data[i]));
      }
    }
  });
  return out;
}

// Runs `node` on `side`'s device; the outputs come back as host tensors on `cpu`.
StatusOr<std::vector<DeviceTensor>> RunOn(const KernelRegistry& registry, Side& side, Device& cpu,
                                          const Node& node,
                                          const std::vector<DeviceTensor>& inputs) {
  std::vector<DataType> dtypes;
  std::vector<TensorSpec> specs;
  for (const DeviceTensor& t : inputs) {
    dtypes.push_back(t.dtype());
    specs.push_back(TensorSpec{t.dtype(), t.shape()});
  }
  Device& device = *side.device;
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                      registry.CreateKernel(node, device.type(), dtypes));
  std::vector<DeviceTensor> placed(inputs.size());
  std::vector<const TensorSpec*> spec_ptrs;
  std::vector<const DeviceTensor*> input_ptrs;
  std::vector<HostValue> host_values(inputs.size());
  std::vector<const HostValue*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int>& host = kernel->host_inputs();
    const bool on_host = std::find(host.begin(), host.end(), static_cast<int>(i)) != host.end();
    if (on_host || device.host_accessible()) {
      placed[i] = inputs[i];
    } else {
      ZG_ASSIGN_OR_RETURN(placed[i],
                          DeviceTensor::Allocate(device, inputs[i].dtype(), inputs[i].shape()));
      ZG_RETURN_IF_ERROR(device.CopyFromHost(
          {static_cast<const std::byte*>(inputs[i].data()), inputs[i].byte_size()}, placed[i]));
    }
    spec_ptrs.push_back(&specs[i]);
    input_ptrs.push_back(&placed[i]);
    if (on_host) host_values[i] = placed[i].host_value();
    values.push_back(on_host ? &host_values[i] : nullptr);
  }
  ZG_ASSIGN_OR_RETURN(std::vector<OutputInfo> infos,
                      kernel->InferOutputs(ShapeContext{&node, spec_ptrs, values}));
  std::vector<DeviceTensor> outputs;
  for (const OutputInfo& info : infos) {
    ZG_ASSIGN_OR_RETURN(DeviceTensor out,
                        DeviceTensor::Allocate(device, info.spec.dtype, info.spec.shape));
    outputs.push_back(std::move(out));
  }
  std::vector<DeviceTensor*> output_ptrs;
  for (DeviceTensor& t : outputs) output_ptrs.push_back(&t);
  KernelContext ctx{input_ptrs, output_ptrs, side.stream.get(), side.comm.get()};
  Status computed = side.stream->Enqueue([&] { return kernel->Compute(ctx); });
  if (computed.ok()) computed = side.stream->Synchronize();
  if (!computed.ok()) {
    // A stream's error is sticky: the next case gets a fresh stream.
    ZG_ASSIGN_OR_RETURN(side.stream, device.CreateStream("compute"));
    return computed;
  }
  std::vector<DeviceTensor> results;
  for (const DeviceTensor& out : outputs) {
    ZG_ASSIGN_OR_RETURN(DeviceTensor copy, DeviceTensor::Allocate(cpu, out.dtype(), out.shape()));
    ZG_RETURN_IF_ERROR(
        device.CopyToHost(out, {static_cast<std::byte*>(copy.data()), copy.byte_size()}));
    results.push_back(std::move(copy));
  }
  return results;
}

// The largest error a GPU kernel may show in `dtype` (relative, see the file comment): a few
// units of roundoff, for sums taken in another order; integers and moves are exact.
double Tolerance(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat64:
      return 1e-12;
    case DataType::kFloat32:
      return 1e-5;
    case DataType::kFloat16:
      return 2e-3;
    case DataType::kBFloat16:
      return 1.6e-2;
    default:
      return 0;
  }
}

struct Errors {
  double max_relative = 0;
  double max_abs = 0;
  bool shapes_match = true;
};

Errors Compare(const std::vector<DeviceTensor>& gpu, const std::vector<DeviceTensor>& cpu) {
  Errors errors;
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (gpu[i].shape() != cpu[i].shape() || gpu[i].dtype() != cpu[i].dtype()) {
      errors.shapes_match = false;
      continue;
    }
    const std::vector<double> a = ToDoubles(gpu[i]);
    const std::vector<double> e = ToDoubles(cpu[i]);
    double scale = 0;
    for (double v : e) scale = std::max(scale, std::abs(v));
    for (size_t j = 0; j < e.size(); ++j) {
      if (std::isnan(a[j]) && std::isnan(e[j])) continue;
      const double abs = std::abs(a[j] - e[j]);
      errors.max_abs = std::max(errors.max_abs, abs);
      const double floor = std::max(std::abs(e[j]), 1e-3 * scale);
      errors.max_relative = std::max(errors.max_relative, floor > 0 ? abs / floor : abs);
    }
  }
  return errors;
}

// Checks every CUDA key; returns the number of failures.
int CheckKernels(const KernelRegistry& registry, Side& cpu, Side& gpu) {
  Inputs in(*cpu.device);
  int failures = 0;
  std::printf("| op | dtype | shape | max rel error | max abs error | tolerance | result |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const KernelKey& key : registry.Keys()) {
    if (key.device != DeviceType::kCuda) continue;
    const std::string op = key.domain.empty() ? key.op_type : StrCat(key.domain, "::", key.op_type);
    const std::string dtype(DataTypeName(key.dtype));
    std::vector<Case> cases = CasesFor(key, in);
    if (cases.empty()) {
      std::printf("| %s | %s | - | - | - | - | FAIL: no case in the table |\n", op.c_str(),
                  dtype.c_str());
      ++failures;
      continue;
    }
    const bool collective =
        key.op_type == "ReduceScatter" || key.op_type == "AllGather" || key.op_type == "AllReduce";
    for (Case& c : cases) {
      std::vector<TensorSpec> specs;
      for (const DeviceTensor& t : c.inputs) specs.push_back(TensorSpec{t.dtype(), t.shape()});
      Node* node = in.MakeNode(key.domain, key.op_type, specs, c.outputs, c.attrs);
      const DataType out_dtype =
          key.op_type == "Cast" ? DataType(std::get<int64_t>(c.attrs[0].value)) : key.dtype;
      const double tolerance =
          Tolerance(out_dtype == DataType::kUndefined ? DataType::kFloat32 : out_dtype);
      std::string result;
      Errors errors;
      if (collective && gpu.comm == nullptr) {
        result = StrCat("FAIL: no NCCL communicator: ", gpu.comm_status.ToString());
      } else {
        StatusOr<std::vector<DeviceTensor>> expected =
            RunOn(registry, cpu, *cpu.device, *node, c.inputs);
        StatusOr<std::vector<DeviceTensor>> actual =
            RunOn(registry, gpu, *cpu.device, *node, c.inputs);
        if (!expected.ok()) {
          result = StrCat("FAIL: CPU: ", expected.status().ToString());
        } else if (!actual.ok()) {
          result = StrCat("FAIL: CUDA: ", actual.status().ToString());
        } else {
          errors = Compare(*actual, *expected);
          const bool pass = errors.shapes_match && errors.max_relative <= tolerance;
          result = !errors.shapes_match ? "FAIL: shapes differ" : pass ? "pass" : "FAIL";
        }
      }
      if (result != "pass") ++failures;
      std::printf("| %s | %s | %s | %.3g | %.3g | %.3g | %s |\n", op.c_str(), dtype.c_str(),
                  c.shape.c_str(), errors.max_relative, errors.max_abs, tolerance, result.c_str());
    }
  }
  return failures;
}

// The fused AdamW update over one bucket (X, G, M, V of bench_mib each, in place, as the executor
// runs it) against Device::CopyAsync copying 3.5 tensors' worth, which reads and writes as many
// bytes.
Status BenchAdamW(const KernelRegistry& registry, Side& gpu, Device& cpu, const Options& options) {
  std::printf(
      "\n| dtype | elements | bytes moved (MiB) | AdamW ms | AdamW GB/s | copy GB/s | AdamW / copy "
      "|\n|---|---|---|---|---|---|---|\n");
  Inputs in(cpu);
  Device& device = *gpu.device;
  Stream& stream = *gpu.stream;
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    const int64_t elements =
        options.bench_mib * (int64_t{1} << 20) / static_cast<int64_t>(ElementSize(dtype));
    std::vector<DeviceTensor> inputs = {in.Scalar(DataType::kFloat32, 1e-3),
                                        in.Scalar(DataType::kInt64, 10)};
    // Zeros: a valid state (V >= 0), and the bandwidth does not depend on the values.
    const std::vector<std::byte> zeros(static_cast<size_t>(elements) * ElementSize(dtype));
    for (int group = 0; group < 4; ++group) {
      ZG_ASSIGN_OR_RETURN(DeviceTensor t, DeviceTensor::Allocate(device, dtype, {elements}));
      ZG_RETURN_IF_ERROR(device.CopyFromHost(zeros, t));
      inputs.push_back(std::move(t));
    }
    const TensorSpec tensor{dtype, {elements}};
    Node* node = in.MakeNode(std::string(kZerographDomain), "AdamW",
                             {TensorSpec{DataType::kFloat32, {}}, TensorSpec{DataType::kInt64, {}},
                              tensor, tensor, tensor, tensor},
                             3, {});
    ZG_ASSIGN_OR_RETURN(
        std::unique_ptr<OpKernel> kernel,
        registry.CreateKernel(*node, DeviceType::kCuda,
                              std::vector<DataType>{DataType::kFloat32, DataType::kInt64, dtype,
                                                    dtype, dtype, dtype}));
    std::vector<const DeviceTensor*> input_ptrs;
    for (const DeviceTensor& t : inputs) input_ptrs.push_back(&t);
    std::vector<DeviceTensor*> output_ptrs = {&inputs[2], &inputs[4], &inputs[5]};  // in place
    const KernelContext ctx{input_ptrs, output_ptrs, &stream, nullptr};
    const size_t moved = 7 * inputs[2].byte_size();
    ZG_ASSIGN_OR_RETURN(
        DeviceTensor source,
        DeviceTensor::Allocate(device, DataType::kUint8, {static_cast<int64_t>(moved / 2)}));
    ZG_ASSIGN_OR_RETURN(
        DeviceTensor destination,
        DeviceTensor::Allocate(device, DataType::kUint8, {static_cast<int64_t>(moved / 2)}));
    auto time = [&](const std::function<Status()>& work) -> StatusOr<double> {
      ZG_RETURN_IF_ERROR(stream.Enqueue(work));  // warm-up
      ZG_RETURN_IF_ERROR(stream.Synchronize());
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < options.reps; ++i) ZG_RETURN_IF_ERROR(stream.Enqueue(work));
      ZG_RETURN_IF_ERROR(stream.Synchronize());
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
             options.reps;
    };
    ZG_ASSIGN_OR_RETURN(const double adamw, time([&] { return kernel->Compute(ctx); }));
    ZG_ASSIGN_OR_RETURN(const double copy, time([&] {
                          return source.device().CopyAsync(source, destination, stream);
                        }));
    const double bytes = static_cast<double>(moved);
    std::printf("| %s | %lld | %.0f | %.3f | %.0f | %.0f | %.2f |\n",
                std::string(DataTypeName(dtype)).c_str(), static_cast<long long>(elements),
                bytes / (1 << 20), adamw * 1e3, bytes / adamw / 1e9, bytes / copy / 1e9,
                copy / adamw);
  }
  return Status::Ok();
}

int Run(const Options& options) {
  if (CudaDeviceCount() == 0) {
    std::fprintf(stderr, "gpu-kernel-check: no CUDA GPU found\n");
    return kExitRuntime;
  }
  KernelRegistry registry;
  Status status = RegisterCpuKernels(registry);
  if (status.ok()) status = RegisterCudaKernels(registry);
  Side cpu, gpu;
  cpu.device = CreateCpuDevice();
  if (status.ok()) {
    StatusOr<std::unique_ptr<Device>> device = CreateCudaDevice(0);
    if (device.ok()) {
      gpu.device = std::move(*device);
    } else {
      status = device.status();
    }
  }
  if (status.ok()) {
    StatusOr<std::unique_ptr<Stream>> cpu_stream = cpu.device->CreateStream("compute");
    StatusOr<std::unique_ptr<Stream>> gpu_stream = gpu.device->CreateStream("compute");
    status = !cpu_stream.ok() ? cpu_stream.status() : gpu_stream.status();
    if (cpu_stream.ok() && gpu_stream.ok()) {
      cpu.stream = std::move(*cpu_stream);
      gpu.stream = std::move(*gpu_stream);
    }
  }
  if (!status.ok()) {
    std::fprintf(stderr, "gpu-kernel-check: %s\n", status.ToString().c_str());
    return kExitRuntime;
  }
  cpu.comm = CreateLocalCommunicator();
  StatusOr<std::unique_ptr<JobRanks>> ranks = JobRanks::Discover();
  StatusOr<std::unique_ptr<Communicator>> nccl =
      ranks.ok() ? CreateNcclCommunicator(*gpu.device, **ranks)
                 : StatusOr<std::unique_ptr<Communicator>>(ranks.status());
  if (nccl.ok()) {
    gpu.comm = std::move(*nccl);
  } else {
    gpu.comm_status = nccl.status();
  }
  const int failures = CheckKernels(registry, cpu, gpu);
  std::printf("\n%d failing kernel case(s)\n", failures);
  if (!options.no_bench) {
    status = BenchAdamW(registry, gpu, *cpu.device, options);
    if (!status.ok()) {
      std::fprintf(stderr, "gpu-kernel-check: AdamW benchmark: %s\n", status.ToString().c_str());
      return kExitRuntime;
    }
  }
  return failures == 0 ? kExitOk : 1;
}

}  // namespace
}  // namespace zerograph::runtime

int main(int argc, char** argv) {
  zerograph::runtime::Options options;
  CLI::App app("Every CUDA kernel against its CPU twin, and the fused AdamW's bandwidth.");
  app.add_option("--bench-mib", options.bench_mib, "MiB of each of AdamW's X, G, M, V")
      ->check(CLI::PositiveNumber);
  app.add_option("--reps", options.reps, "timed repetitions")->check(CLI::PositiveNumber);
  app.add_flag("--no-bench", options.no_bench, "check the kernels only");
  CLI11_PARSE(app, argc, argv);
  return zerograph::runtime::Run(options);
}
