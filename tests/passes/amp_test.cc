#include "zerograph/passes/amp_pass.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/graph_builder.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/shape_inference.h"
#include "zerograph/ir/tensor.h"
#include "zerograph/ir/value.h"
#include "zerograph/ir/verify.h"
#include "zerograph/passes/autodiff_pass.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/executor.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph {
namespace {

constexpr DataType kF32 = DataType::kFloat32;
constexpr DataType kBF16 = DataType::kBFloat16;

std::vector<float> Ramp(size_t n, float scale) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) {
    values[i] = scale * static_cast<float>((static_cast<int>(i * 7) % 11) - 5) / 5.0f;
  }
  return values;
}

// A forward model: x [2, 4] -> MatMul(w) -> Relu -> MatMul(v) -> y [2, 3] -> Softmax -> p, with
// outputs y and p. The tests build and rewrite it, then read dtypes from shape inference.
class AmpPassTest : public ::testing::Test {
 protected:
  AmpPassTest() { graph_ = Build(); }

  static std::unique_ptr<Graph> Build() {
    auto graph = std::make_unique<Graph>();
    graph->SetName("forward");
    graph->SetOpsetVersion("", 17);
    GraphBuilder b(*graph);
    b.SetRole(std::nullopt);
    Value* x = b.Input("x", kF32, {2, 4});
    Value* h = b.Op("MatMul", {x, b.Initializer("w", {4, 5}, Ramp(20, 0.5f))}, "h");
    Value* a = b.Op("Relu", {h}, "a");
    Value* y = b.Op("MatMul", {a, b.Initializer("v", {5, 3}, Ramp(15, 0.7f))}, "y");
    b.SetType(y, kF32, {2, 3});
    Value* p = b.Op("Softmax", {y}, "p");
    b.SetType(p, kF32, {2, 3});
    b.Output(y);
    b.Output(p);
    return graph;
  }

  StatusOr<bool> Run(AmpPass::Options options) {
    AmpPass pass(std::move(options));
    StatusOr<bool> changed = pass.Run(*graph_);
    stats_ = pass.StatsString();
    return changed;
  }
  static AmpPass::Options Level(AmpPass::Level level) {
    AmpPass::Options options;
    options.level = level;
    return options;
  }
  int Count(std::string_view op_type) const {
    int n = 0;
    for (const Node* node : graph_->nodes()) n += node->op_type() == op_type ? 1 : 0;
    return n;
  }
  const Node* Find(std::string_view op_type, int nth = 0) const {
    for (const Node* node : graph_->nodes()) {
      if (node->op_type() == op_type && nth-- == 0) return node;
    }
    return nullptr;
  }
  // The dtype shape inference gives the value, after checking that it agrees with every recorded
  // type.
  DataType DtypeOf(const Value* value) const {
    StatusOr<InferredShapes> shapes = InferShapes(*graph_);
    EXPECT_TRUE(shapes.ok()) << shapes.status().message();
    const TensorSpec* spec = shapes.ok() ? shapes->Find(*value) : nullptr;
    return spec != nullptr ? spec->dtype : DataType::kUndefined;
  }

  std::unique_ptr<Graph> graph_;
  std::string stats_;
};

// O1: both MatMuls read bf16 casts of x, w, a and v and are cast back; Relu and Softmax are
// float32 as before, and so are the parameters and the outputs, under their names.
TEST_F(AmpPassTest, O1CastsAroundLowPrecisionOps) {
  StatusOr<bool> changed = Run(Level(AmpPass::Level::kO1));
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  ASSERT_TRUE(Verify(*graph_).ok());
  EXPECT_EQ(Count("Cast"), 6);  // x, w, a, v to bf16; h, y back
  for (int i = 0; i < 2; ++i) {
    const Node* matmul = Find("MatMul", i);
    EXPECT_EQ(DtypeOf(matmul->input(0)), kBF16);
    EXPECT_EQ(DtypeOf(matmul->input(1)), kBF16);
    EXPECT_EQ(DtypeOf(matmul->output(0)), kBF16);
  }
  EXPECT_EQ(DtypeOf(Find("Relu")->input(0)), kF32);
  EXPECT_EQ(Find("Relu")->input(0)->name(), "h");
  EXPECT_EQ(DtypeOf(Find("Softmax")->input(0)), kF32);
  EXPECT_EQ(graph_->FindValue("w")->initializer()->dtype(), kF32);
  ASSERT_EQ(graph_->outputs().size(), 2u);
  EXPECT_EQ(graph_->outputs()[0]->name(), "y");
  EXPECT_EQ(graph_->outputs()[0]->type()->dtype, kF32);
  EXPECT_EQ(DtypeOf(graph_->outputs()[0]), kF32);
  EXPECT_NE(stats_.find("nodes computing in low precision: 2\ncasts inserted: 6\n"),
            std::string::npos)
      << stats_;
}

// One Cast per value, shared by its readers: x read by two MatMuls is cast once; a MatMul reading
// another's output reads the low value directly, not a Cast of its Cast back.
TEST_F(AmpPassTest, O1SharesOneCastPerValue) {
  graph_ = std::make_unique<Graph>();
  graph_->SetName("shared");
  GraphBuilder b(*graph_);
  b.SetRole(std::nullopt);
  Value* x = b.Input("x", kF32, {2, 2});
  Value* w = b.Initializer("w", {2, 2}, Ramp(4, 1.0f));
  Value* y = b.Op("MatMul", {b.Op("MatMul", {x, w}, "h"), x}, "y");
  b.SetType(y, kF32, {2, 2});
  b.Output(y);
  ASSERT_TRUE(Run(Level(AmpPass::Level::kO1)).ok());
  ASSERT_TRUE(Verify(*graph_).ok());
  EXPECT_EQ(Count("Cast"), 3);  // x, w to bf16; y back (h's Cast back, read by nothing, erased)
  EXPECT_EQ(Find("MatMul", 1)->input(0), Find("MatMul", 0)->output(0));
  EXPECT_EQ(Find("MatMul", 1)->input(1), Find("MatMul", 0)->input(0));
}

// O2: the parameters are stored in bf16 under their names; Relu computes in bf16; Softmax, on the
// float32 list, reads the float32 Cast of y that the graph output y shares.
TEST_F(AmpPassTest, O2StoresParametersLowAndKeepsFp32Ops) {
  ASSERT_TRUE(Run(Level(AmpPass::Level::kO2)).ok());
  ASSERT_TRUE(Verify(*graph_).ok());
  EXPECT_EQ(graph_->FindValue("w")->initializer()->dtype(), kBF16);
  EXPECT_EQ(graph_->FindValue("v")->initializer()->dtype(), kBF16);
  EXPECT_EQ(Count("Cast"), 2);  // x to bf16, y to float32
  EXPECT_EQ(DtypeOf(Find("Relu")->output(0)), kBF16);
  EXPECT_EQ(DtypeOf(Find("Softmax")->input(0)), kF32);
  EXPECT_EQ(Find("Softmax")->input(0), graph_->outputs()[0]);
  EXPECT_EQ(graph_->outputs()[0]->name(), "y");
  EXPECT_EQ(DtypeOf(graph_->outputs()[0]), kF32);
  EXPECT_EQ(DtypeOf(graph_->outputs()[1]), kF32);
  EXPECT_NE(stats_.find("initializers converted: 2 (140 bytes -> 70)"), std::string::npos)
      << stats_;
  EXPECT_NE(stats_.find("left float32: 1 Softmax (on the float32 list)"), std::string::npos)
      << stats_;
}

// Initializers are rounded to nearest, ties to even, as bf16 and as fp16; fp16 overflows to
// infinity from 65520 on and keeps subnormals.
TEST_F(AmpPassTest, O2RoundsInitializersToNearestEven) {
  const float one = 1.0f;
  const std::vector<float> values = {
      one + 0x1p-8f, one + 3 * 0x1p-8f, one + 0x1p-11f, one + 3 * 0x1p-11f,
      65520.0f,      65504.0f,          0x1p-24f,       -2.0f};
  auto converted = [&](DataType low) {
    graph_ = std::make_unique<Graph>();
    graph_->SetName("round");
    GraphBuilder b(*graph_);
    b.SetRole(std::nullopt);
    Value* x = b.Input("x", kF32, {8});
    Value* y = b.Op("Mul", {x, b.Initializer("c", {8}, values)}, "y");
    b.SetType(y, kF32, {8});
    b.Output(y);
    AmpPass::Options options = Level(AmpPass::Level::kO2);
    options.low = low;
    EXPECT_TRUE(Run(options).ok());
    const Tensor* tensor = graph_->FindValue("c")->initializer();
    EXPECT_EQ(tensor->dtype(), low);
    std::vector<uint16_t> bits(8);
    std::span<const std::byte> bytes = *tensor->Bytes();
    std::memcpy(bits.data(), bytes.data(), std::min(bytes.size(), bits.size() * 2));
    return bits;
  };
  // bf16 keeps 7 mantissa bits: 1 + 2^-8 is a tie (to 1.0), 1 + 3·2^-8 one (up to 1 + 2^-6);
  // 1 + 2^-11 rounds down.
  EXPECT_EQ(converted(kBF16), (std::vector<uint16_t>{0x3f80, 0x3f82, 0x3f80, 0x3f80, 0x4780, 0x4780,
                                                     0x3380, 0xc000}));
  // fp16 keeps 10, so 1 + 2^-8 and 1 + 3·2^-8 are exact; the ties are 1 + 2^-11 (to 1.0) and
  // 1 + 3·2^-11 (up to 1 + 2^-9).
  EXPECT_EQ(converted(DataType::kFloat16), (std::vector<uint16_t>{0x3c04, 0x3c0c, 0x3c00, 0x3c02,
                                                                  0x7c00, 0x7bff, 0x0001, 0xc000}));
}

// Integer values are never touched: Gather's indices stay int64 while its data turns bf16.
TEST_F(AmpPassTest, O2LeavesIntegerValuesAlone) {
  graph_ = std::make_unique<Graph>();
  graph_->SetName("gather");
  GraphBuilder b(*graph_);
  b.SetRole(std::nullopt);
  Value* ids = b.Input("ids", DataType::kInt64, {3});
  Value* y = b.Op("Gather", {b.Initializer("table", {4, 2}, Ramp(8, 1.0f)), ids}, "y");
  b.SetType(y, kF32, {3, 2});
  b.Output(y);
  ASSERT_TRUE(Run(Level(AmpPass::Level::kO2)).ok());
  ASSERT_TRUE(Verify(*graph_).ok());
  EXPECT_EQ(Find("Gather")->input(1), graph_->FindValue("ids"));
  EXPECT_EQ(DtypeOf(Find("Gather")->output(0)), kBF16);
  EXPECT_EQ(Count("Cast"), 1);  // y back to float32
}

// A low node's inputs of another type variable are read as before: Dropout computes in bf16 on
// its data (T) while its ratio (T1), an initializer stored in bf16 like every other, is cast back
// to float32 for it.
TEST_F(AmpPassTest, O2KeepsOtherTypeVariablesAsBefore) {
  graph_ = std::make_unique<Graph>();
  graph_->SetName("dropout");
  GraphBuilder b(*graph_);
  b.SetRole(std::nullopt);
  Value* x = b.Input("x", kF32, {4});
  Value* y = b.Op("Dropout", {x, b.Initializer("ratio", {}, std::vector<float>{0.25f})}, "y");
  b.SetType(y, kF32, {4});
  b.Output(y);
  ASSERT_TRUE(Run(Level(AmpPass::Level::kO2)).ok());
  ASSERT_TRUE(Verify(*graph_).ok());
  EXPECT_EQ(graph_->FindValue("ratio")->initializer()->dtype(), kBF16);
  EXPECT_EQ(DtypeOf(Find("Dropout")->input(0)), kBF16);
  EXPECT_EQ(DtypeOf(Find("Dropout")->input(1)), kF32);
  EXPECT_EQ(DtypeOf(Find("Dropout")->output(0)), kBF16);
  EXPECT_EQ(Count("Cast"), 3);  // x to bf16, ratio to float32, y back
}

// The lists replace the defaults: O1 with Relu alone leaves the MatMuls float32; O2 with Relu
// alone on the float32 list runs Softmax in bf16 and casts Relu's input to float32.
TEST_F(AmpPassTest, ListsOverrideTheDefaults) {
  AmpPass::Options o1 = Level(AmpPass::Level::kO1);
  o1.low_ops = {"Relu"};
  ASSERT_TRUE(Run(o1).ok());
  ASSERT_TRUE(Verify(*graph_).ok());
  EXPECT_EQ(DtypeOf(Find("MatMul")->output(0)), kF32);
  EXPECT_EQ(DtypeOf(Find("Relu")->output(0)), kBF16);
  EXPECT_EQ(Count("Cast"), 2);

  graph_ = Build();
  AmpPass::Options o2 = Level(AmpPass::Level::kO2);
  o2.fp32_ops = {"Relu"};
  ASSERT_TRUE(Run(o2).ok());
  ASSERT_TRUE(Verify(*graph_).ok());
  EXPECT_EQ(DtypeOf(Find("Relu")->input(0)), kF32);
  EXPECT_EQ(DtypeOf(Find("Softmax")->output(0)), kBF16);
}

// An op without a kernel for the low dtype stays float32, and the stats say why.
TEST_F(AmpPassTest, OpWithoutLowKernelStaysFp32) {
  AmpPass::Options options = Level(AmpPass::Level::kO1);
  options.has_kernel = [](const Node& node, DataType) { return node.op_type() != "MatMul"; };
  StatusOr<bool> changed = Run(options);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
  EXPECT_EQ(Count("Cast"), 0);
  EXPECT_NE(stats_.find("left float32: 2 MatMul (no CPU kernel for the low dtype)"),
            std::string::npos)
      << stats_;
}

// A training graph is refused: AMP rewrites the forward graph the autodiff then differentiates.
TEST_F(AmpPassTest, RefusesTrainingGraph) {
  graph_->SetMetadata("zerograph.loss", "loss");
  StatusOr<bool> changed = Run(Level(AmpPass::Level::kO1));
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("it applies to forward graphs"), std::string::npos)
      << changed.status().message();
}

// An op name no contract knows is refused, naming the option.
TEST_F(AmpPassTest, RefusesUnknownOpInList) {
  AmpPass::Options options = Level(AmpPass::Level::kO2);
  options.fp32_ops = {"Softmax", "Sofmax"};
  StatusOr<bool> changed = Run(options);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("--amp-fp32-ops 'Sofmax': no op of that name"),
            std::string::npos)
      << changed.status().message();
  EXPECT_EQ(Count("Cast"), 0);
}

// One SGD step (lr 1) on `graph` made a training graph with an MSE loss on y: the loss, then w
// and v after the step as float32.
struct StepResult {
  float loss = NAN;
  std::vector<float> w, v;
};
StepResult TrainOneStep(Graph& graph) {
  AutodiffPass::Options options;
  options.loss = AutodiffPass::Loss::kMeanSquaredError;
  options.loss_on = "y";
  options.optimizer = AutodiffPass::Optimizer::kSgd;
  StatusOr<bool> trained = AutodiffPass(options).Run(graph);
  EXPECT_TRUE(trained.ok()) << trained.status().message();
  runtime::KernelRegistry registry;
  EXPECT_TRUE(runtime::RegisterCpuKernels(registry).ok());
  std::unique_ptr<runtime::Device> device = runtime::CreateCpuDevice();
  std::unique_ptr<runtime::Communicator> comm = runtime::CreateLocalCommunicator();
  runtime::ExecutorOptions executor_options;
  executor_options.bind_state = false;
  StatusOr<std::unique_ptr<runtime::Executor>> created =
      runtime::Executor::Create(graph, *device, *comm, registry, std::move(executor_options));
  StepResult result;
  if (!created.ok()) {
    ADD_FAILURE() << created.status().message();
    return result;
  }
  runtime::Executor& executor = **created;
  const std::vector<float> x = Ramp(8, 1.0f), labels = Ramp(6, 0.3f);
  const float lr = 1.0f;
  EXPECT_TRUE(executor.SetInput("x", std::as_bytes(std::span(x))).ok());
  EXPECT_TRUE(executor.SetInput("labels", std::as_bytes(std::span(labels))).ok());
  EXPECT_TRUE(executor.SetInput("lr", std::as_bytes(std::span(&lr, 1))).ok());
  Status ran = executor.Run(/*step=*/0);
  EXPECT_TRUE(ran.ok()) << ran.message();
  auto fetch = [&](std::string_view name, DataType dtype) {
    StatusOr<std::vector<std::byte>> bytes = executor.Fetch(name);
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    std::vector<float> values;
    if (!bytes.ok()) return values;
    if (dtype == kF32) {
      values.resize(bytes->size() / 4);
      std::memcpy(values.data(), bytes->data(), bytes->size());
      return values;
    }
    for (size_t i = 0; i + 1 < bytes->size(); i += 2) {  // bf16: the high half of a float32
      uint32_t bits = 0;
      std::memcpy(reinterpret_cast<char*>(&bits) + 2, bytes->data() + i, 2);
      float value;
      std::memcpy(&value, &bits, 4);
      values.push_back(value);
    }
    return values;
  };
  result.loss = fetch("loss", kF32)[0];
  const DataType param = graph.FindValue("w")->initializer()->dtype();
  result.w = fetch("w.new", param);
  result.v = fetch("v.new", param);
  return result;
}

// The autodiff differentiates through the Casts: one step of the O1 graph (float32 parameters)
// and of the O2 graph (bf16 parameters) moves the parameters as the float32 graph's step does,
// within 0.01 (bf16 rounding of the products and of an O2 parameter) where the step itself moves
// them by over 0.1; the losses agree within 2%.
TEST_F(AmpPassTest, AutodiffThroughAmpMatchesFp32Step) {
  std::unique_ptr<Graph> reference = Build();
  const StepResult fp32 = TrainOneStep(*reference);
  ASSERT_TRUE(Run(Level(AmpPass::Level::kO1)).ok());
  const StepResult o1 = TrainOneStep(*graph_);
  graph_ = Build();
  ASSERT_TRUE(Run(Level(AmpPass::Level::kO2)).ok());
  const StepResult o2 = TrainOneStep(*graph_);

  ASSERT_TRUE(std::isfinite(fp32.loss));
  // The step moves w well beyond the tolerances below, so a missing gradient would show.
  const std::vector<float> w = Ramp(20, 0.5f);
  float moved = 0;
  for (size_t i = 0; i < w.size() && i < fp32.w.size(); ++i) {
    moved = std::max(moved, std::abs(fp32.w[i] - w[i]));
  }
  EXPECT_GT(moved, 0.1f);
  EXPECT_NEAR(o1.loss, fp32.loss, 0.02 * fp32.loss);
  EXPECT_NEAR(o2.loss, fp32.loss, 0.02 * fp32.loss);
  ASSERT_EQ(o1.w.size(), fp32.w.size());
  ASSERT_EQ(o2.v.size(), fp32.v.size());
  for (size_t i = 0; i < fp32.w.size(); ++i) {
    EXPECT_NEAR(o1.w[i], fp32.w[i], 0.01) << "w[" << i << "]";
    EXPECT_NEAR(o2.w[i], fp32.w[i], 0.01) << "w[" << i << "]";
  }
  for (size_t i = 0; i < fp32.v.size(); ++i) {
    EXPECT_NEAR(o1.v[i], fp32.v[i], 0.01) << "v[" << i << "]";
    EXPECT_NEAR(o2.v[i], fp32.v[i], 0.01) << "v[" << i << "]";
  }
}

}  // namespace
}  // namespace zerograph
