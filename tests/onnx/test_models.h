#ifndef ZEROGRAPH_TESTS_ONNX_TEST_MODELS_H_
#define ZEROGRAPH_TESTS_ONNX_TEST_MODELS_H_

#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "zerograph/core/status.h"

namespace zerograph::onnx_test {

// Models and files for the onnx module's tests.

// A model the loader must refuse, written as `<folder>/<name>.onnx` (plus any data file it needs).
// The loader's tests and the `make_bad_models` program (which feeds the CLI tests) share them.
struct BadModel {
  std::string_view name;
  // What the error message must name besides the file: the node, value, tensor or key at fault.
  std::string_view culprit;
  Status (*write)(const std::string& model_path);
};

// Every case, in a fixed order.
const std::vector<BadModel>& BadModels();

// Writes case `name` into `folder`; returns the model's path.
StatusOr<std::string> WriteBadModel(std::string_view name, const std::string& folder);

// Helpers for tests that build their own models.
StatusOr<onnx::ModelProto> ParseModelText(const char* text);
Status WriteModelFile(const onnx::ModelProto& model, const std::string& path);
Status WriteBytesFile(std::string_view bytes, const std::string& path);

// Runs `command` through the shell; returns its exit status and puts its stdout and stderr in
// `output`.
int RunCommand(const std::string& command, std::string& output);

// A fresh folder under the system's temporary folder (or `parent`), removed with everything in it.
class TempFolder {
 public:
  TempFolder();
  // Under `parent` instead.
  explicit TempFolder(const std::string& parent);
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::string& path() const { return path_; }
  // `<folder>/<name>`.
  std::string Path(std::string_view name) const;

 private:
  std::string path_;
};

}  // namespace zerograph::onnx_test

#endif  // ZEROGRAPH_TESTS_ONNX_TEST_MODELS_H_
