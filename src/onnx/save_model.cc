#include "zerograph/onnx/save_model.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "core/parallelism.h"
#include "core/write_funnel.h"
#include "onnx/model_writer.h"
#include "zerograph/core/atomic_file.h"
#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/ir/tensor.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

// ONNX 1.12's checker rejects anything newer.
constexpr int64_t kWrittenIrVersion = 8;
// External tensors start on page boundaries so that readers can map them directly.
constexpr uint64_t kDataAlignment = 4096;

// Writes external initializers into one data file beside the model, each at an aligned offset,
// and points each tensor's message at its bytes there.
class DataFileWriter {
 public:
  explicit DataFileWriter(fs::path destination) : destination_(std::move(destination)) {}

  Status Write(const Tensor& tensor, onnx::TensorProto& copy) {
    ZG_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, tensor.Bytes());
    if (file_ == nullptr) {
      ZG_ASSIGN_OR_RETURN(file_, AtomicFile::Create(destination_.string()));
    }
    const uint64_t offset = (end_ + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
    ZG_RETURN_IF_ERROR(
        file_->WriteAt(bytes, offset).WithContext(StrCat("initializer '", tensor.name(), "'")));
    end_ = offset + bytes.size();

    // Keep entries we do not rewrite (a checksum stays valid: the bytes are the same).
    auto* entries = copy.mutable_external_data();
    for (int i = 0; i < entries->size();) {
      const std::string& key = entries->Get(i).key();
      if (key == "location" || key == "offset" || key == "length" || key == "basepath") {
        entries->DeleteSubrange(i, 1);
      } else {
        ++i;
      }
    }
    auto add = [&](std::string_view key, std::string value) {
      onnx::StringStringEntryProto* entry = entries->Add();
      entry->set_key(std::string(key));
      entry->set_value(std::move(value));
    };
    add("location", destination_.filename().string());
    add("offset", StrCat(offset));
    add("length", StrCat(bytes.size()));
    copy.set_data_location(onnx::TensorProto::EXTERNAL);
    return Status::Ok();
  }

  // Sizes the file to cover every range (a last empty tensor may sit past the last byte written)
  // and syncs it. Returns the file to rename into place, or null when nothing was external.
  StatusOr<AtomicFile*> Finish() {
    if (file_ == nullptr) return static_cast<AtomicFile*>(nullptr);
    ZG_RETURN_IF_ERROR(file_->Truncate(end_));
    ZG_RETURN_IF_ERROR(file_->Sync());
    return file_.get();
  }

 private:
  fs::path destination_;
  std::unique_ptr<AtomicFile> file_;
  uint64_t end_ = 0;
};

// IR 9 and 10 added element types (float8, 4-bit integers) that an IR 8 file cannot declare.
Status CheckFitsIrVersion8(const onnx::GraphProto& graph) {
  constexpr int32_t kLastIr8Type = onnx::TensorProto::BFLOAT16;
  auto check = [&](const auto& infos) -> Status {
    for (const onnx::ValueInfoProto& info : infos) {
      const int32_t type = info.type().tensor_type().elem_type();
      ZG_RETURN_IF_NOT(type <= kLastIr8Type, "value '", info.name(), "' has element type ", type,
                       ", which IR version ", kWrittenIrVersion, " lacks");
    }
    return Status::Ok();
  };
  ZG_RETURN_IF_ERROR(check(graph.input()));
  ZG_RETURN_IF_ERROR(check(graph.output()));
  return check(graph.value_info());
}

// Graph messages (nodes, initializers, value lists) from which a serializing thread pays for its
// start.
constexpr size_t kSerializeMessagesPerThread = 32768;

Status WriteModel(onnx::ModelProto& model, const Graph::HeldFields& held_fields,
                  const AtomicFile& file) {
  const onnx::GraphProto& graph = model.graph();
  const size_t messages =
      static_cast<size_t>(graph.node_size() + graph.initializer_size() + graph.input_size() +
                          graph.output_size() + graph.value_info_size());
  WriteFunnel funnel(file);
  ZG_RETURN_IF_ERROR(SerializeModel(
      model, ThreadsFor(messages, kSerializeMessagesPerThread),
      [&](uint64_t offset, std::span<const std::byte> bytes) {
        return funnel.WriteAt(bytes, offset);
      },
      &held_fields));
  return funnel.Finish();
}

// Runs the checks of a save, each started on a thread of its own when the save reaches its
// start, and joined in their order on every path out (before the graph can change again).
class SaveCheckRuns {
 public:
  explicit SaveCheckRuns(const std::vector<SaveCheck>& checks)
      : checks_(checks), runs_(checks.size()) {}

  void StartThoseWithTheSave() { Start(true); }
  void StartTheRest() { Start(false); }

  // The first error in the checks' order, once all have ended.
  Status Join() {
    Status first = Status::Ok();
    for (std::future<Status>& run : runs_) {
      Status status = run.get();
      if (first.ok()) first = std::move(status);
    }
    return first;
  }

 private:
  void Start(bool with_the_save) {
    for (size_t i = 0; i < checks_.size(); ++i) {
      if (checks_[i].with_the_save == with_the_save) runs_[i] = RunOnTheSide(checks_[i].run);
    }
  }

  const std::vector<SaveCheck>& checks_;
  std::vector<std::future<Status>> runs_;  // joined by their destructors on early returns
};

// A check's error is its own, not the save's: it comes back in `check_error`.
Status SaveModelImpl(Graph& graph, const std::string& path, const std::vector<SaveCheck>& checks,
                     Status& check_error) {
  const fs::path destination(path);
  const std::string name = destination.filename().string();
  ZG_RETURN_IF_NOT(!name.empty() && name != "." && name != "..", "the path names no file");
  std::error_code error;
  ZG_RETURN_IF_NOT(!fs::is_directory(destination, error), "the path is a folder");

  ZG_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> model_file, AtomicFile::Create(path));
  SaveCheckRuns check_runs(checks);
  check_runs.StartThoseWithTheSave();
  DataFileWriter data_writer(destination.parent_path() / StrCat(name, ".data"));

  // The file says IR 8 whatever the graph was loaded as; the graph itself keeps its version.
  const int64_t loaded_ir_version = graph.ir_version();
  graph.SetIrVersion(kWrittenIrVersion);
  auto write_external = [&](const Tensor& tensor, onnx::TensorProto& copy) {
    return data_writer.Write(tensor, copy);
  };
  auto write_model = [&](onnx::ModelProto& model, const Graph::HeldFields& held_fields) -> Status {
    if (loaded_ir_version > kWrittenIrVersion) {
      ZG_RETURN_IF_ERROR(CheckFitsIrVersion8(model.graph()));
    }
    return WriteModel(model, held_fields, *model_file);
  };
  Status written = graph.WithModelProto(write_external, write_model);
  graph.SetIrVersion(loaded_ir_version);
  ZG_RETURN_IF_ERROR(written);

  // The other checks run while the files are flushed, not while they are written: beside the
  // writing threads, their sweeps over the graph slowed them by more than they took (a third of
  // serializing a 1M-node rewrite, 0.2 s), and flushing leaves the cores to them.
  check_runs.StartTheRest();

  ZG_ASSIGN_OR_RETURN(AtomicFile * data_file, data_writer.Finish());
  ZG_RETURN_IF_ERROR(model_file->Sync());
  check_error = check_runs.Join();
  if (!check_error.ok()) return check_error;
  // Data first: the new model must never point into an old data file.
  if (data_file != nullptr) ZG_RETURN_IF_ERROR(data_file->Commit());
  return model_file->Commit();
}

}  // namespace

Status SaveModel(Graph& graph, const std::string& path) { return SaveModel(graph, path, {}); }

Status SaveModel(Graph& graph, const std::string& path, const std::vector<SaveCheck>& checks) {
  Status check_error = Status::Ok();
  Status saved = SaveModelImpl(graph, path, checks, check_error);
  if (!check_error.ok()) return check_error;
  return saved.WithContext(StrCat("saving '", path, "'"));
}

}  // namespace zerograph
