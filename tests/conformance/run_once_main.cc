// zg-run-once: the C++ side of the ONNX backend conformance suite (run_onnx_node_tests.py).
//
//   zg-run-once MODEL INPUT_DIR OUTPUT_DIR   runs MODEL once on INPUT_DIR/input_N.pb and writes
//                                            OUTPUT_DIR/output_N.pb (runtime::RunOnce)
//   zg-run-once --list-ops                   prints one line per CPU kernel registration
//
// A plain argv parser on purpose: this is a test tool; graph-exec --run-once is the real CLI.

#include <iostream>
#include <string>
#include <string_view>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/kernel_registry.h"
#include "zerograph/tools/run_once.h"

namespace zerograph::runtime {
namespace {

constexpr std::string_view kUsage =
    "usage: zg-run-once MODEL INPUT_DIR OUTPUT_DIR\n"
    "       zg-run-once --list-ops\n";

// Prints "domain op dtype type_input" per CPU registration, ONNX's default domain spelled
// "ai.onnx" so every line has four fields. type_input says which input's dtype selects the
// kernel (-1: none, as for Constant), so the script can match a node's dtypes exactly.
Status ListOps() {
  KernelRegistry registry;
  ZG_RETURN_IF_ERROR(RegisterCpuKernels(registry));
  for (const KernelKey& key : registry.Keys()) {
    if (key.device != DeviceType::kCpu) continue;
    const KernelDef* def = registry.Find(key.domain, key.op_type, key.device, key.dtype);
    ZG_RET_CHECK(def != nullptr, "Keys() lists an unregistered key ", key.op_type);
    std::cout << (key.domain.empty() ? "ai.onnx" : key.domain) << " " << key.op_type << " "
              << DataTypeName(key.dtype) << " " << def->type_input << "\n";
  }
  return Status::Ok();
}

int Main(int argc, char** argv) {
  Status status;
  if (argc == 2 && std::string_view(argv[1]) == "--list-ops") {
    status = ListOps();
  } else if (argc == 4) {
    status = RunOnce(argv[1], argv[2], argv[3]);
  } else {
    std::cerr << kUsage;
    return kExitUsage;
  }
  if (!status.ok()) std::cerr << "error: " << status.ToString() << "\n";
  return status.ExitCode();
}

}  // namespace
}  // namespace zerograph::runtime

int main(int argc, char** argv) { return zerograph::runtime::Main(argc, argv); }
