#ifndef ZEROGRAPH_PASSES_PASS_PIPELINE_H_
#define ZEROGRAPH_PASSES_PASS_PIPELINE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/passes/pass.h"

namespace zerograph {

class Graph;

// Runs passes in order. With `verify_each`, the IR verifier runs after every pass, so a pass that
// breaks an invariant is named at once rather than by a later pass or the executor.
class PassPipeline {
 public:
  explicit PassPipeline(bool verify_each) : verify_each_(verify_each) {}

  template <typename PassT, typename... Args>
  PassT& AddPass(Args&&... args) {
    auto pass = std::make_unique<PassT>(std::forward<Args>(args)...);
    PassT& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }

  // Returns whether any pass changed the graph.
  StatusOr<bool> Run(Graph& graph);

  // One block per pass: its name, whether it changed the graph, its time and its statistics.
  std::string Report() const;

 private:
  struct PassRecord {
    std::string name;
    bool changed = false;
    double seconds = 0;
    std::string stats;
  };

  bool verify_each_;
  std::vector<std::unique_ptr<GraphPass>> passes_;
  std::vector<PassRecord> records_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_PASSES_PASS_PIPELINE_H_
