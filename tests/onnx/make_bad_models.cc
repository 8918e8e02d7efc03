// make_bad_models OUTDIR: writes every model the loader must refuse as OUTDIR/<case>.onnx (plus
// the data files some cases need), so that the CLI tests feed the programs the same bad files as
// the loader's tests.

#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>

#include "test_models.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_bad_models OUTDIR\n";
    return 1;
  }
  const std::string folder = argv[1];
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) {
    std::cerr << "error: cannot create '" << folder << "': " << error.message() << "\n";
    return 3;
  }
  for (const zerograph::onnx_test::BadModel& model : zerograph::onnx_test::BadModels()) {
    zerograph::StatusOr<std::string> path = zerograph::onnx_test::WriteBadModel(model.name, folder);
    if (!path.ok()) {
      std::cerr << "error: " << path.status().ToString() << "\n";
      return path.status().ExitCode();
    }
  }
  return 0;
}
