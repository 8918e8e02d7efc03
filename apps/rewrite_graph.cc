// rewrite-graph: reads a training graph, applies the ZeRO stage-1 rewrite for N ranks, writes the
// rewritten graph. Today it loads, verifies and saves; the passes come with the issue
// 'rewrite-graph passes'.

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_main.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/ir/verify.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/onnx/save_model.h"

namespace zerograph {
namespace {

struct RewriteGraphOptions {
  std::string input;
  std::string output;
  int64_t nranks = 1;
  bool overlap = false;
  double comm_buffer_mb = 256;  // the seed's default bucket limit
  std::string bucket_order = "ready";
  std::string layout_out;
  bool report = false;
  std::string check;
};

void SetUpRewriteGraph(CLI::App& app, RewriteGraphOptions& options) {
  cli::SetUpCommon(app);
  // IN is not checked with CLI::ExistingFile: the loader's error names the file and says what is
  // wrong with it (missing, unreadable, not ONNX) in one place.
  app.add_option("IN", options.input, "Training graph to rewrite (.onnx)")->required();
  app.add_option("-o,--output", options.output,
                 "Where to write the rewritten graph; written whole or not at all")
      ->required()
      ->type_name("OUT");
  app.add_option("--nranks", options.nranks, "Number of data-parallel ranks to shard across")
      ->check(cli::AtLeast(1))
      ->capture_default_str();
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
  app.add_option("--layout-out", options.layout_out,
                 "Also write the layout manifest (JSON) to this file")
      ->type_name("FILE");
  app.add_flag("--report", options.report, "Print what the rewrite did");
  app.add_option("--check", options.check,
                 "Check the rewrite against this file (not implemented yet)")
      ->check(CLI::ExistingFile);
}

// Counts of what a graph holds, printed by --report.
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
            << "initializers: " << initializers.size() << " (" << initializer_bytes << " bytes)\n"
            << "passes: none yet (sharding-stage1 and overlap come with issue 'rewrite-graph "
               "passes')\n";
}

Status RunRewriteGraph(const RewriteGraphOptions& options) {
  // Refuse before reading anything: an output without the requested rewrite would look like one.
  if (options.nranks > 1 || options.overlap || !options.layout_out.empty()) {
    return UnimplementedError(
        "rewrite-graph: the sharding-stage1 and overlap passes are not implemented yet (issue "
        "'rewrite-graph passes'); today only --nranks 1 without --overlap or --layout-out works "
        "(load, verify, save)");
  }
  if (!options.check.empty()) {
    return UnimplementedError(
        "rewrite-graph: --check is not implemented yet (issue 'rewrite-graph passes')");
  }
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, LoadModel(options.input));
  ZG_RETURN_IF_ERROR(Verify(*graph).WithContext(StrCat("verifying '", options.input, "'")));
  ZG_RETURN_IF_ERROR(SaveModel(*graph, options.output));
  if (options.report) PrintReport(*graph);
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
