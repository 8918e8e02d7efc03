#include "zerograph/tools/run_once.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "zerograph/core/atomic_file.h"
#include "zerograph/core/io_error.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/tensor_type.h"
#include "zerograph/ir/value.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/executor.h"
#include "zerograph/runtime/kernel_registry.h"
#include "zerograph/runtime/tensor_proto.h"

namespace zerograph::runtime {
namespace {

namespace fs = std::filesystem;

// The tensor stored in `path`, on the host.
StatusOr<HostTensorData> ReadTensorFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open", path.string(), errno);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return IoError("cannot read", path.string(), errno);
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    return DataLossError(StrCat("'", path.string(), "' is no TensorProto (truncated or corrupt)"));
  }
  StatusOr<HostTensorData> data = ReadTensorProto(proto);
  if (!data.ok()) return std::move(data).status().WithContext(StrCat("'", path.string(), "'"));
  return data;
}

// The file's dtype must be the declared one. Its shape is taken as it is: ONNX's test data fixes
// dynamic dimensions this way, and some of it disagrees with dimensions the model fixes (the
// unread `like` input of the bfloat16 CastLike tests); shape inference checks what matters.
Status CheckDtype(const Value& input, const HostTensorData& data, const fs::path& path) {
  const std::optional<TensorType> declared = input.type();
  if (!declared || declared->dtype == DataType::kUndefined || declared->dtype == data.dtype) {
    return Status::Ok();
  }
  return InvalidArgumentError(StrCat("'", path.string(), "' holds ", DataTypeName(data.dtype),
                                     ", but graph input '", input.name(), "' is ",
                                     declared->ToString()));
}

// The graph inputs some kernel reads on the host while planning (Reshape's shape, ReduceSum's
// axes). The executor plans shapes before any input is set, so such inputs must be constants.
std::vector<Value*> HostReadInputs(const Graph& graph, const KernelRegistry& registry) {
  // host_inputs is the same for every dtype of an op (KernelRegistry::Register checks).
  std::map<std::pair<std::string, std::string>, std::vector<int>> host_inputs;
  for (const KernelKey& key : registry.Keys()) {
    if (key.device != DeviceType::kCpu) continue;
    const KernelDef* def = registry.Find(key.domain, key.op_type, key.device, key.dtype);
    if (def != nullptr) host_inputs[{key.domain, key.op_type}] = def->host_inputs;
  }
  std::vector<Value*> read;
  for (const Node* node : graph.nodes()) {
    const std::string domain = node->domain() == "ai.onnx" ? "" : std::string(node->domain());
    auto it = host_inputs.find({domain, std::string(node->op_type())});
    if (it == host_inputs.end()) continue;
    for (int index : it->second) {
      if (static_cast<size_t>(index) >= node->num_inputs()) continue;
      Value* value = node->input(static_cast<size_t>(index));
      if (value != nullptr && value->is_graph_input() && value->initializer() == nullptr &&
          std::find(read.begin(), read.end(), value) == read.end()) {
        read.push_back(value);
      }
    }
  }
  return read;
}

}  // namespace

struct PreparedRun::State {
  std::string model_path;
  std::unique_ptr<Graph> graph;
  KernelRegistry registry;
  std::unique_ptr<Device> device;
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<Executor> executor;
  // Graph outputs by their names in the file, which the rewrite below may change.
  std::vector<std::string> output_names;
};

PreparedRun::PreparedRun(std::unique_ptr<State> state) : state_(std::move(state)) {}
PreparedRun::~PreparedRun() = default;

StatusOr<std::unique_ptr<PreparedRun>> PreparedRun::Prepare(const std::string& model_path,
                                                            const std::string& input_dir) {
  auto state = std::make_unique<State>();
  state->model_path = model_path;
  ZG_ASSIGN_OR_RETURN(state->graph, LoadModel(model_path));
  Graph& graph = *state->graph;

  // ONNX's test runners feed input_N.pb to the N-th input that is not an initializer.
  std::vector<Value*> inputs;
  for (Value* value : graph.inputs()) {
    if (value->initializer() == nullptr) inputs.push_back(value);
  }
  std::vector<HostTensorData> data;
  ExecutorOptions options;
  options.bind_state = false;  // one step: nothing to carry over
  for (size_t i = 0; i < inputs.size(); ++i) {
    const fs::path path = fs::path(input_dir) / StrCat("input_", i, ".pb");
    ZG_ASSIGN_OR_RETURN(HostTensorData tensor, ReadTensorFile(path));
    ZG_RETURN_IF_ERROR(CheckDtype(*inputs[i], tensor, path));
    options.input_specs[std::string(inputs[i]->name())] = TensorSpec{tensor.dtype, tensor.shape};
    data.push_back(std::move(tensor));
  }
  // A file the graph has no input for means the model and the data disagree.
  const fs::path extra = fs::path(input_dir) / StrCat("input_", inputs.size(), ".pb");
  std::error_code error;
  ZG_RETURN_IF_NOT(!fs::exists(extra, error), "'", extra.string(),
                   "' has no graph input to feed: '", model_path, "' has ", inputs.size(),
                   " inputs besides its initializers");

  for (const Value* output : graph.outputs()) state->output_names.emplace_back(output->name());

  ZG_RETURN_IF_ERROR(RegisterCpuKernels(state->registry));
  // A one-shot run knows every input before planning: those read on the host become constants.
  for (Value* input : HostReadInputs(graph, state->registry)) {
    const size_t i =
        static_cast<size_t>(std::find(inputs.begin(), inputs.end(), input) - inputs.begin());
    Value* constant = graph.AddInitializer(graph.UniqueValueName(StrCat(input->name(), "_value")),
                                           data[i].dtype, data[i].shape, data[i].bytes);
    graph.ReplaceAllUsesWith(input, constant);
  }

  state->device = CreateCpuDevice();
  state->comm = CreateLocalCommunicator();
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::Create(graph, *state->device, *state->comm, state->registry, std::move(options));
  if (!executor.ok()) {
    return std::move(executor).status().WithContext(StrCat("planning '", model_path, "'"));
  }
  state->executor = std::move(executor).value();
  for (size_t i = 0; i < inputs.size(); ++i) {
    ZG_RETURN_IF_ERROR(state->executor->SetInput(inputs[i]->name(), data[i].bytes));
  }
  return std::unique_ptr<PreparedRun>(new PreparedRun(std::move(state)));
}

Status PreparedRun::Run() {
  Status ran = state_->executor->Run();
  if (!ran.ok()) return std::move(ran).WithContext(StrCat("running '", state_->model_path, "'"));
  return Status::Ok();
}

Status PreparedRun::WriteOutputs(const std::string& output_dir) const {
  std::error_code error;
  fs::create_directories(output_dir, error);
  if (error) return IoError("cannot create folder", output_dir, error.value());
  for (size_t i = 0; i < state_->output_names.size(); ++i) {
    const std::string& name = state_->output_names[i];
    const DeviceTensor* tensor = state_->executor->Find(name);
    ZG_RET_CHECK(tensor != nullptr, "graph output '", name, "' has no tensor after the run");
    onnx::TensorProto proto;
    proto.set_name(name);
    Status converted = TensorToProto(*tensor, proto);
    if (!converted.ok()) return std::move(converted).WithContext(StrCat("output '", name, "'"));
    std::string bytes;
    ZG_RET_CHECK(proto.SerializeToString(&bytes), "cannot serialize output '", name, "'");
    ZG_RETURN_IF_ERROR(
        WriteFileAtomically((fs::path(output_dir) / StrCat("output_", i, ".pb")).string(), bytes));
  }
  return Status::Ok();
}

Status RunOnce(const std::string& model_path, const std::string& input_dir,
               const std::string& output_dir) {
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<PreparedRun> run,
                      PreparedRun::Prepare(model_path, input_dir));
  ZG_RETURN_IF_ERROR(run->Run());
  return run->WriteOutputs(output_dir);
}

}  // namespace zerograph::runtime
