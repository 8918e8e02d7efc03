// rewrite-graph: reads a training graph (or ONNX Runtime's training artifacts, --from-ort; or, with
// --train, a forward model it turns into one), applies the ZeRO stage-1 rewrite for N ranks (and
// the overlap pass), checks the result for hazards and writes it. `--check FILE` checks a rewritten
// graph without writing anything.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_main.h"
#include "zerograph/core/atomic_file.h"
#include "zerograph/core/output_path.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/layout_manifest.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/training_spec.h"
#include "zerograph/ir/verify.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/onnx/save_model.h"
#include "zerograph/ort_import/import_ort_artifacts.h"
#include "zerograph/passes/amp_pass.h"
#include "zerograph/passes/autodiff_pass.h"
#include "zerograph/passes/gradient_chain.h"
#include "zerograph/passes/gradient_control.h"
#include "zerograph/passes/hazard_check.h"
#include "zerograph/passes/overlap.h"
#include "zerograph/passes/pass_pipeline.h"
#include "zerograph/passes/sharding_stage1.h"
#include "zerograph/runtime/kernel_registry.h"

namespace zerograph {
namespace {

struct RewriteGraphOptions {
  std::string input;
  std::string from_ort;
  std::string output;
  std::optional<int64_t> nranks;
  bool overlap = false;
  double comm_buffer_mb = 256;  // the seed's default bucket limit
  std::string bucket_order = "ready";
  std::string align = "seed";
  bool master_weights = false;
  bool master_grads = false;
  std::string layout_out;
  bool report = false;
  bool verify_each_pass = false;
  std::string check;

  // --train and what it reads; `train_options_given` lists the latter as given, which need it.
  // The pass's own fields (and defaults) take the options they hold as they are; the rest are
  // parsed into it by AutodiffOptions.
  bool train = false;
  AutodiffPass::Options autodiff;
  std::string loss = "cross-entropy";
  std::string label_dtype;
  std::string label_shape;
  std::string optimizer = "adamw";
  bool no_bias_correction = false;
  // "auto": dynamic with --amp fp16, none otherwise.
  std::string loss_scale = "auto";
  // --amp and what it reads: no --amp, no AMP pass.
  std::string amp;
  std::string amp_level = "O1";
  std::optional<std::vector<std::string>> amp_low_ops;
  std::optional<std::vector<std::string>> amp_fp32_ops;
  std::vector<std::string> train_options_given;

  // Gradient control (clipping applies to any training graph; loss scaling needs --train).
  std::optional<float> clip_grad_norm;
  GradientControlPass::Options control;
};

// The training options for a forward model (docs/cli.md, "--train").
std::vector<CLI::Option*> SetUpTrainOptions(CLI::App& app, RewriteGraphOptions& options) {
  return {
      app.add_option("--loss", options.loss,
                     "With --train: the loss, 'mse' (mean squared error against the label), "
                     "'cross-entropy' (softmax cross-entropy, mean) or 'output' (--loss-on already "
                     "is the loss, a float scalar)")
          ->check(CLI::IsMember({"mse", "cross-entropy", "output"}))
          ->capture_default_str(),
      app.add_option("--loss-on", options.autodiff.loss_on,
                     "With --train: the forward output the loss is computed on (default: the "
                     "graph's only output)")
          ->type_name("NAME"),
      app.add_option("--label", options.autodiff.label,
                     "With --train: the new graph input of the labels")
          ->type_name("NAME")
          ->capture_default_str(),
      app.add_option("--label-dtype", options.label_dtype,
                     "With --train: the label's dtype (default: int64 for cross-entropy, the "
                     "output's for mse)")
          ->type_name("DTYPE"),
      app.add_option("--label-shape", options.label_shape,
                     "With --train: the label's dims, a symbolic one by name (batch,8); default: "
                     "the output's (mse), less axis 1 (cross-entropy)")
          ->type_name("D0,D1,..."),
      app.add_option("--ignore-index", options.autodiff.ignore_index,
                     "With --train --loss cross-entropy: labels equal to N do not count")
          ->type_name("N"),
      app.add_option("--frozen", options.autodiff.frozen,
                     "With --train: an initializer that stays fixed (repeatable); default: every "
                     "floating initializer that reaches the loss trains")
          ->type_name("NAME"),
      app.add_option("--optimizer", options.optimizer, "With --train: 'adamw', 'adam' or 'sgd'")
          ->check(CLI::IsMember({"adamw", "adam", "sgd"}))
          ->capture_default_str(),
      app.add_option("--adam-mode", options.autodiff.adam_mode,
                     "With --train: AdamW's form, 0 PyTorch's, 1 Hugging Face's / ONNX Runtime's")
          ->check(CLI::IsMember({0, 1}))
          ->capture_default_str(),
      app.add_option("--beta1", options.autodiff.beta1, "With --train: Adam's beta1")
          ->capture_default_str(),
      app.add_option("--beta2", options.autodiff.beta2, "With --train: Adam's beta2")
          ->capture_default_str(),
      app.add_option("--epsilon", options.autodiff.epsilon, "With --train: Adam's epsilon")
          ->capture_default_str(),
      app.add_option("--weight-decay", options.autodiff.weight_decay,
                     "With --train: weight decay (default 0.01 for adamw, 0 for adam and sgd, "
                     "which add it to the gradient as L2)"),
      app.add_flag("--no-bias-correction", options.no_bias_correction,
                   "With --train: Adam without bias correction"),
      app.add_option("--loss-scale", options.loss_scale,
                     "With --train: dynamic loss scaling, 'auto' (dynamic with --amp fp16), "
                     "'none', 'dynamic' (starting at 65536) or the starting scale")
          ->capture_default_str()
          ->type_name("auto|none|dynamic|SCALE"),
      app.add_option("--loss-scale-growth-interval", options.control.growth_interval,
                     "With --train --loss-scale: steps without overflow before the scale grows")
          ->capture_default_str(),
      app.add_option("--loss-scale-growth", options.control.growth_factor,
                     "With --train --loss-scale: what the scale is multiplied by when it grows")
          ->capture_default_str(),
      app.add_option("--loss-scale-backoff", options.control.backoff_factor,
                     "With --train --loss-scale: what the scale is multiplied by on an overflow")
          ->capture_default_str(),
      app.add_option("--amp", options.amp,
                     "With --train: mixed precision in 'bf16' or 'fp16' (the amp pass, before "
                     "the autodiff)")
          ->check(CLI::IsMember({"bf16", "fp16"}))
          ->type_name("DTYPE"),
      app.add_option("--amp-level", options.amp_level,
                     "With --train --amp: 'O1' (the --amp-low-ops compute in low precision) or "
                     "'O2' (low-precision parameters, all but the --amp-fp32-ops in low precision)")
          ->check(CLI::IsMember({"O1", "O2"}))
          ->capture_default_str(),
      app.add_option("--amp-low-ops", options.amp_low_ops,
                     "With --train --amp: O1's low-precision ops, replacing the default list")
          ->delimiter(',')
          ->type_name("OP,..."),
      app.add_option("--amp-fp32-ops", options.amp_fp32_ops,
                     "With --train --amp: O2's float32 ops, replacing the default list")
          ->delimiter(',')
          ->type_name("OP,..."),
  };
}

void SetUpRewriteGraph(CLI::App& app, RewriteGraphOptions& options) {
  cli::SetUpCommon(app);
  // IN is not checked with CLI::ExistingFile: the loader's error names the file and says what is
  // wrong with it (missing, unreadable, not ONNX) in one place.
  CLI::Option* input = app.add_option("IN", options.input, "Training graph to rewrite (.onnx)");
  // Not CLI::ExistingDirectory either: the importer names the file that is missing.
  CLI::Option* from_ort =
      app.add_option("--from-ort", options.from_ort,
                     "Read ONNX Runtime's training artifacts from DIR (training_model.onnx, "
                     "optimizer_model.onnx, checkpoint) instead of IN")
          ->type_name("DIR")
          ->excludes(input);
  CLI::Option* output =
      app.add_option("-o,--output", options.output,
                     "Where to write the rewritten graph; written whole or not at all")
          ->type_name("OUT");
  // Not CLI::AtLeast(1): `--nranks 0` is bad input (exit 2) reported by the pass, with the others.
  app.add_option("--nranks", options.nranks,
                 "Number of data-parallel ranks to shard across; without it the graph is only "
                 "verified and copied");
  app.add_flag("--overlap", options.overlap,
               "Overlap gradient communication with backward compute (overlap pass)");
  app.add_option("--comm-buffer-mb", options.comm_buffer_mb,
                 "Size limit of one fused gradient bucket, in MiB")
      ->check(cli::Positive())
      ->capture_default_str()
      ->type_name("MB");
  app.add_option("--bucket-order", options.bucket_order,
                 "Bucket order: 'ready' (when gradients become ready in backward) or 'param' "
                 "(parameter order)")
      ->check(CLI::IsMember({"ready", "param"}))
      ->capture_default_str();
  app.add_option("--align", options.align,
                 "Padding: 'seed' (every parameter to 16*N fp32 / 64*N fp16 elements, the seed's "
                 "rule) or 'compact' (only each bucket's end)")
      ->check(CLI::IsMember({"seed", "compact"}))
      ->capture_default_str();
  app.add_flag("--master-weights", options.master_weights,
               "Keep an fp32 master copy of fp16/bf16 parameters as an optimizer state: the "
               "update runs in fp32 and the all-gather moves the low-precision parameters");
  app.add_flag("--master-grads", options.master_grads,
               "With --master-weights: cast gradients to fp32 before the reduce-scatter");
  app.add_option("--layout-out", options.layout_out,
                 "Also write the layout manifest (JSON) to this file")
      ->type_name("FILE");
  app.add_flag("--train", options.train,
               "Make IN, a forward model, a training graph first: loss, backward (autodiff) and "
               "optimizer");
  std::vector<CLI::Option*> train_options = SetUpTrainOptions(app, options);
  app.add_option("--clip-grad-norm", options.clip_grad_norm,
                 "Clip the gradients to this global L2 norm, over every rank's shards")
      ->type_name("NORM");
  app.add_flag("--report", options.report, "Print what the rewrite did");
  app.add_flag("--verify-each-pass", options.verify_each_pass,
               "Verify the graph after every pass, not only before it is written (to find which "
               "pass breaks a graph)");
  app.add_option("--check", options.check,
                 "Check a rewritten graph for hazards (collective order, gathers before updates, "
                 "cross-step waits) and write nothing")
      ->type_name("FILE")
      ->excludes(input, output, from_ort);
  app.callback([&options, train_options] {
    for (const CLI::Option* option : train_options) {
      if (option->count() > 0) options.train_options_given.push_back(option->get_name());
    }
    if (!options.check.empty()) return;
    if (options.input.empty() && options.from_ort.empty()) throw CLI::RequiredError("IN");
    if (options.output.empty()) throw CLI::RequiredError("--output");
  });
}

// Counts of what a graph holds, printed by --report for the graph written (after the passes).
void PrintReport(const Graph& graph) {
  int64_t values = static_cast<int64_t>(graph.inputs().size());
  int64_t by_role[3] = {0, 0, 0};
  int64_t unannotated = 0;
  for (const Node* node : graph.nodes()) {
    for (const Value* output : node->outputs()) values += output != nullptr ? 1 : 0;
    if (!node->has_role()) {
      ++unannotated;
    } else {
      int64_t role = static_cast<int64_t>(node->role());
      if (role >= 0 && role < 3) ++by_role[role];
    }
  }
  int64_t initializer_bytes = 0;
  const std::vector<Value*> initializers = graph.initializers();
  for (const Value* value : initializers) {
    if (!value->is_graph_input()) ++values;  // an initializer may also be a graph input
    initializer_bytes += value->initializer()->byte_size();
  }
  std::cout << "nodes: " << graph.num_nodes() << " (forward " << by_role[0] << ", backward "
            << by_role[1] << ", optimizer " << by_role[2] << ", no role " << unannotated << ")\n"
            << "values: " << values << "\n"
            << "initializers: " << initializers.size() << " (" << initializer_bytes << " bytes)\n";
}

// The dtype ONNX spells `name` ("int64", "float"; "float32" and "double" too).
StatusOr<DataType> DataTypeFromName(const std::string& name) {
  if (name == "float32") return DataType::kFloat32;
  if (name == "double") return DataType::kFloat64;
  for (int32_t onnx_type = 1; onnx_type <= 16; ++onnx_type) {
    std::optional<DataType> dtype = DataTypeFromOnnx(onnx_type);
    if (dtype && DataTypeName(*dtype) == name) return *dtype;
  }
  return InvalidArgumentError(
      StrCat("--label-dtype '", name, "': no such dtype (int64, int32, float, float16, ...)"));
}

StatusOr<AutodiffPass::Options> AutodiffOptions(const RewriteGraphOptions& options) {
  AutodiffPass::Options autodiff = options.autodiff;
  autodiff.loss = *LossFromName(options.loss);
  if (!options.label_dtype.empty()) {
    ZG_ASSIGN_OR_RETURN(autodiff.label_dtype, DataTypeFromName(options.label_dtype));
  }
  if (!options.label_shape.empty()) {
    std::vector<std::string> dims;
    std::string_view rest = options.label_shape;
    while (true) {
      const size_t comma = rest.find(',');
      dims.emplace_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    autodiff.label_shape = std::move(dims);
  }
  autodiff.optimizer = *OptimizerFromName(options.optimizer);
  autodiff.bias_correction = !options.no_bias_correction;
  const std::string loss_scale = options.loss_scale == "auto"
                                     ? (options.amp == "fp16" ? "dynamic" : "none")
                                     : options.loss_scale;
  if (loss_scale == "dynamic") {
    autodiff.loss_scale = 65536.0f;  // PyTorch GradScaler's initial scale, 2^16
  } else if (loss_scale != "none") {
    float scale = 0;
    const char* end = loss_scale.data() + loss_scale.size();
    auto [ptr, error] = std::from_chars(loss_scale.data(), end, scale);
    ZG_RETURN_IF_NOT(error == std::errc() && ptr == end && std::isfinite(scale) && scale > 0,
                     "--loss-scale '", loss_scale,
                     "': expected none, dynamic or a positive starting scale");
    autodiff.loss_scale = scale;
  }
  return autodiff;
}

// The AMP pass's options; each op's kernel is looked up among the CPU's, the backend every
// build has.
StatusOr<AmpPass::Options> AmpOptions(const RewriteGraphOptions& options) {
  AmpPass::Options amp;
  amp.low = *AmpDtypeFromName(options.amp);
  amp.level = *AmpLevelFromName(options.amp_level);
  if (options.amp_low_ops) amp.low_ops = *options.amp_low_ops;
  if (options.amp_fp32_ops) amp.fp32_ops = *options.amp_fp32_ops;
  auto registry = std::make_shared<runtime::KernelRegistry>();
  ZG_RETURN_IF_ERROR(runtime::RegisterCpuKernels(*registry));
  amp.has_kernel = [registry](const Node& node, DataType dtype) {
    return registry->Find(node.domain(), node.op_type(), runtime::DeviceType::kCpu, dtype) !=
           nullptr;
  };
  return amp;
}

Status CheckRewrittenGraph(const std::string& path) {
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, LoadModel(path, {.verify = true}));
  const std::string where = StrCat("'", path, "'");
  ZG_RETURN_IF_ERROR(CheckHazards(*graph).WithContext(where));
  ZG_ASSIGN_OR_RETURN(std::optional<TrainingSpec> spec, ReadTrainingSpec(*graph));
  if (!spec || !spec->nranks) {
    return InvalidArgumentError(
        StrCat(where, " is not a rewritten training graph (no zerograph.", spec ? "nranks" : "loss",
               " metadata): --check takes the output of rewrite-graph --nranks N"));
  }
  if (spec->layout) {
    StatusOr<LayoutManifest> layout = LayoutManifest::FromJson(*spec->layout);
    if (!layout.ok()) return std::move(layout).status().WithContext(where);
  }
  std::cout << path << ": ok (" << graph->num_nodes() << " nodes, rewritten for " << *spec->nranks
            << " rank(s))\n";
  return Status::Ok();
}

// The training graph to rewrite: IN, or ONNX Runtime's artifacts converted. `spec` gets the
// training spec loading IN resolved (LoadOptions::resolved_spec).
StatusOr<std::unique_ptr<Graph>> ReadTrainingGraph(const RewriteGraphOptions& options,
                                                   std::optional<ResolvedTrainingSpec>& spec) {
  if (!options.from_ort.empty()) return ImportOrtArtifacts(options.from_ort);
  return LoadModel(options.input, {.verify = true, .resolved_spec = &spec});
}

Status RunRewriteGraph(const RewriteGraphOptions& options) {
  if (!options.check.empty()) return CheckRewrittenGraph(options.check);
  const std::string source = options.from_ort.empty() ? options.input : options.from_ort;
  const std::string inputs[] = {source};
  ZG_RETURN_IF_ERROR(CheckOutputPath("-o", options.output, OutputKind::kFile, inputs));
  if (!options.layout_out.empty()) {
    const std::string layout_inputs[] = {source, options.output};
    ZG_RETURN_IF_ERROR(
        CheckOutputPath("--layout-out", options.layout_out, OutputKind::kFile, layout_inputs));
  }
  if (!options.train && !options.train_options_given.empty()) {
    return InvalidArgumentError(StrCat(StrJoin(options.train_options_given, ", "),
                                       " only apply with --train (a forward model to train)"));
  }
  if (!options.nranks &&
      (options.overlap || !options.layout_out.empty() || options.align != "seed" ||
       options.master_weights || options.master_grads)) {
    return InvalidArgumentError(
        "--overlap, --align, --master-weights, --master-grads and --layout-out need --nranks");
  }
  ZG_RETURN_IF_NOT(!options.clip_grad_norm ||
                       (std::isfinite(*options.clip_grad_norm) && *options.clip_grad_norm > 0),
                   "--clip-grad-norm must be a positive norm, got ", *options.clip_grad_norm);
  std::optional<ResolvedTrainingSpec> loaded_spec;
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ReadTrainingGraph(options, loaded_spec));
  auto pipeline = std::make_unique<PassPipeline>(options.verify_each_pass);
  for (const std::string& name : options.train_options_given) {
    ZG_RETURN_IF_NOT(!options.amp.empty() || !name.starts_with("--amp-"), name,
                     " only applies with --amp");
  }
  bool loss_scaling = false;
  if (options.train) {
    if (!options.amp.empty()) {
      ZG_ASSIGN_OR_RETURN(AmpPass::Options amp, AmpOptions(options));
      pipeline->AddPass<AmpPass>(std::move(amp));
    }
    ZG_ASSIGN_OR_RETURN(AutodiffPass::Options autodiff, AutodiffOptions(options));
    loss_scaling = autodiff.loss_scale.has_value();
    pipeline->AddPass<AutodiffPass>(std::move(autodiff));
  }
  ShardingStage1Pass* sharding = nullptr;
  GradientChainHandoff chain_handoff;
  if (options.nranks) {
    sharding = &pipeline->AddPass<ShardingStage1Pass>(ShardingStage1Pass::Options{
        .nranks = *options.nranks,
        .comm_buffer_mb = options.comm_buffer_mb,
        .bucket_order =
            options.bucket_order == "param" ? BucketOrder::kParameter : BucketOrder::kGradientReady,
        .align = *AlignmentFromName(options.align),
        .master_weights = options.master_weights,
        .master_grads = options.master_grads});
    // Without --train it is the first pass: the graph is as loaded, and so is its spec.
    if (!options.train && loaded_spec) sharding->UseLoadedSpec(std::move(*loaded_spec));
    if (options.overlap) {
      // Overlap moves the gradient chains that the sharding pass walked to find where each
      // gradient is ready: handed over, not walked again.
      sharding->HandOffChains(&chain_handoff);
      pipeline->AddPass<OverlapPass>().TakeChainsFrom(&chain_handoff);
    }
  }
  // A control made before sharding is rebuilt for the sharded layout.
  auto controlled = [&graph] {
    if (!graph->HasMetOp(kZerographDomain, "GradientControl")) return false;
    const StoredNodeRange nodes = graph->stored_nodes();
    return std::any_of(nodes.begin(), nodes.end(),
                       [](const Node* n) { return n->Is(kZerographDomain, "GradientControl"); });
  };
  if (options.clip_grad_norm || loss_scaling || (options.nranks && controlled())) {
    GradientControlPass::Options control = options.control;
    control.max_norm = options.clip_grad_norm.value_or(0.0f);
    pipeline->AddPass<GradientControlPass>(control);
  }
  const std::string rewriting = StrCat("rewriting '", source, "'");
  StatusOr<bool> changed = pipeline->Run(*graph);
  if (!changed.ok()) return std::move(changed).status().WithContext(rewriting);
  // The input was verified when read, and --verify-each-pass verified each pass's output.
  const bool verify_when_written = *changed && !options.verify_each_pass;
  if (options.master_weights &&
      std::none_of(sharding->layout().buckets.begin(), sharding->layout().buckets.end(),
                   [](const LayoutManifest::Bucket& b) { return b.master_state >= 0; })) {
    std::cerr << "note: --master-weights changes nothing: '" << source
              << "' has no fp16 or bf16 parameters\n";
  }
  if (!options.layout_out.empty()) {
    ZG_RETURN_IF_ERROR(WriteFileAtomically(options.layout_out, sharding->layout().ToJson()));
  }
  // The graph is checked for hazards while the save gathers its messages, and verified where it
  // must be while it is flushed to disk, and put in place only if it passes (SaveModel); the
  // checks' end is the program's last wall time, so they run at once.
  std::vector<SaveCheck> checks;
  if (verify_when_written) {
    checks.push_back({.run = [&]() -> Status {
      if (Status verified = Verify(*graph); !verified.ok()) {
        return InternalError(
                   StrCat("the passes left an invalid graph (--verify-each-pass names the pass): ",
                          verified.message()))
            .WithContext(rewriting);
      }
      return Status::Ok();
    }});
  }
  checks.push_back(
      {.run = [&] { return CheckHazards(*graph).WithContext(rewriting); }, .with_the_save = true});
  Status saved = SaveModel(*graph, options.output, checks);
  if (!saved.ok()) {
    if (!options.layout_out.empty()) std::filesystem::remove(options.layout_out);
    return saved;
  }
  if (options.report) {
    std::cout << "written graph '" << options.output << "':\n";
    PrintReport(*graph);
    std::cout << (options.nranks || options.train || options.clip_grad_norm
                      ? pipeline->Report()
                      : std::string("passes: none (no --nranks: verified and copied)\n"));
    if (sharding != nullptr) std::cout << "layout hash: " << sharding->layout().Hash() << "\n";
  }
  // The process ends next: freeing a million-node graph object by object takes longer than the
  // kernel takes to drop its pages (a third of a second at 1M nodes; clang's -disable-free does
  // the same), and so does freeing what the passes kept of it (the sharding pass's layout, a few
  // blocks per parameter). Kept reachable, so leak checkers do not count them.
  [[maybe_unused]] static Graph* left_to_exit = nullptr;
  [[maybe_unused]] static PassPipeline* passes_left_to_exit = nullptr;
  left_to_exit = graph.release();
  passes_left_to_exit = pipeline.release();
  return Status::Ok();
}

}  // namespace
}  // namespace zerograph

int main(int argc, char** argv) {
  CLI::App app(
      "Rewrites a training graph for ZeRO stage-1 data parallelism: optimizer states sharded "
      "across ranks, gradients reduce-scattered and parameters all-gathered in fused buckets.",
      "rewrite-graph");
  zerograph::RewriteGraphOptions options;
  zerograph::SetUpRewriteGraph(app, options);
  if (auto exit_code = zerograph::cli::ParseCommandLine(app, argc, argv)) return *exit_code;
  return zerograph::cli::RunAndExit([&] { return zerograph::RunRewriteGraph(options); });
}
