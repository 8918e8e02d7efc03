#ifndef ZEROGRAPH_ONNX_SAVE_MODEL_H_
#define ZEROGRAPH_ONNX_SAVE_MODEL_H_

#include <functional>
#include <string>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"

namespace zerograph {

// Writes `graph` as an ONNX model with IR version 8 (so that ONNX 1.12's checker accepts it).
// Initializers that were external stay external, in "<file name>.data" beside the model. The files
// appear complete or not at all: they are written under temporary names and renamed into place.
Status SaveModel(Graph& graph, const std::string& path);

// A check that decides whether a save may put its files in place (SaveModel below).
struct SaveCheck {
  std::function<Status()> run;
  // Started with the save, beside its gathering of the graph's messages, which leaves a core
  // idle; otherwise once the files are written, beside their flush. Beside the threads that write
  // the files a check slows them: only one that ends before they start belongs here. Meanwhile the
  // save fills the graph's model message (its node and initializer lists, its IR version): such a
  // check may read the nodes and values, as the hazard check does, not the model's own fields.
  bool with_the_save = false;
};

// The same, with `checks` run while the model is saved, each on a thread of its own: the files are
// put in place only once every check succeeds, else the first error in the order given is
// returned as the check gave it, and nothing is left. Checks must only read the graph
// (rewrite-graph checks its output for hazards beside the gathering, and verifies its rewrite
// behind the flush).
Status SaveModel(Graph& graph, const std::string& path, const std::vector<SaveCheck>& checks);

}  // namespace zerograph

#endif  // ZEROGRAPH_ONNX_SAVE_MODEL_H_
