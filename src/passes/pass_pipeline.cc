#include "zerograph/passes/pass_pipeline.h"

#include <chrono>
#include <cstdio>

#include "zerograph/ir/verify.h"

namespace zerograph {

StatusOr<bool> PassPipeline::Run(Graph& graph) {
  bool any_changed = false;
  records_.clear();
  for (const std::unique_ptr<GraphPass>& pass : passes_) {
    auto start = std::chrono::steady_clock::now();
    ZG_ASSIGN_OR_RETURN(bool changed, pass->Run(graph));
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (verify_each_) {
      Status verified = Verify(graph);
      if (!verified.ok()) {
        return InternalError(
            StrCat("pass ", pass->name(), " left an invalid graph: ", verified.message()));
      }
    }
    records_.push_back({std::string(pass->name()), changed, elapsed.count(), pass->StatsString()});
    any_changed |= changed;
  }
  return any_changed;
}

std::string PassPipeline::Report() const {
  std::string out;
  for (const PassRecord& record : records_) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.3f", record.seconds);
    out += StrCat("pass ", record.name, ": ", record.changed ? "changed" : "unchanged", " in ",
                  seconds, " s\n");
    out += record.stats;
    if (!record.stats.empty() && record.stats.back() != '\n') out += '\n';
  }
  return out;
}

}  // namespace zerograph
