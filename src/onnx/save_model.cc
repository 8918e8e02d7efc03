#include "zerograph/onnx/save_model.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <onnx/onnx_pb.h>

#include "core/parallelism.h"
#include "onnx/model_writer.h"
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
Status IoError(std::string_view what, int error) {
  std::string message = StrCat(what, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return NotFoundError(std::move(message));
    case EACCES:
    case EPERM:
    case EROFS:
    case EISDIR:
      return InvalidArgumentError(std::move(message));
    default:
      return UnavailableError(std::move(message));
  }
}

// A file written under a temporary name in its destination's folder (so that the final rename is
// atomic) and renamed into place by Commit(). Until then, destruction removes it: a failed save
// leaves nothing behind.
class TempFile {
 public:
  static StatusOr<std::unique_ptr<TempFile>> Create(const fs::path& destination) {
    // The counter keeps two saves of one process apart; the pid, two processes.
    static std::atomic<uint64_t> counter{0};
    std::unique_ptr<TempFile> file(new TempFile());
    file->destination_ = destination;
    file->temp_path_ =
        destination.parent_path() / StrCat(".", destination.filename().string(), ".tmp-",
                                           ::getpid(), "-", counter.fetch_add(1));
    file->fd_ = ::open(file->temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (file->fd_ < 0) {
      const int error = errno;
      const fs::path folder = destination.parent_path().empty() ? "." : destination.parent_path();
      return IoError(StrCat("cannot create a file in folder '", folder.string(), "'"), error);
    }
    return file;
  }

  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  const fs::path& destination() const { return destination_; }

  // Flushes the bytes to disk before the rename can make them visible.
  Status SyncAndClose() {
    if (::fsync(fd_) != 0) return IoError(StrCat("cannot sync '", temp_path_.string(), "'"), errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return IoError(StrCat("cannot close '", temp_path_.string(), "'"), errno);
    return Status::Ok();
  }

  Status Commit() {
    if (::rename(temp_path_.c_str(), destination_.c_str()) != 0) {
      return IoError(
          StrCat("cannot rename '", temp_path_.string(), "' to '", destination_.string(), "'"),
          errno);
    }
    committed_ = true;
    return Status::Ok();
  }

 private:
  TempFile() = default;
  fs::path destination_;
  fs::path temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

Status WriteAt(int fd, std::span<const std::byte> bytes, uint64_t offset, std::string_view what) {
  while (!bytes.empty()) {
    const ssize_t written = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (written < 0) {
      if (errno == EINTR) continue;
      return IoError(StrCat("cannot write ", what), errno);
    }
    bytes = bytes.subspan(static_cast<size_t>(written));
    offset += static_cast<uint64_t>(written);
  }
  return Status::Ok();
}

// Writes external initializers into one data file beside the model, each at an aligned offset,
// and points each tensor's message at its bytes there.
class DataFileWriter {
 public:
  explicit DataFileWriter(fs::path destination) : destination_(std::move(destination)) {}

  Status Write(const Tensor& tensor, onnx::TensorProto& copy) {
    ZG_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, tensor.Bytes());
    if (file_ == nullptr) {
      ZG_ASSIGN_OR_RETURN(file_, TempFile::Create(destination_));
    }
    const uint64_t offset = (end_ + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
    ZG_RETURN_IF_ERROR(WriteAt(
        file_->fd(), bytes, offset,
        StrCat("initializer '", tensor.name(), "' to '", destination_.filename().string(), "'")));
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
  StatusOr<TempFile*> Finish() {
    if (file_ == nullptr) return static_cast<TempFile*>(nullptr);
    if (::ftruncate(file_->fd(), static_cast<off_t>(end_)) != 0) {
      return IoError(StrCat("cannot size '", destination_.filename().string(), "'"), errno);
    }
    ZG_RETURN_IF_ERROR(file_->SyncAndClose());
    return file_.get();
  }

 private:
  fs::path destination_;
  std::unique_ptr<TempFile> file_;
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

Status WriteModel(onnx::ModelProto& model, const TempFile& file) {
  const onnx::GraphProto& graph = model.graph();
  const size_t messages =
      static_cast<size_t>(graph.node_size() + graph.initializer_size() + graph.input_size() +
                          graph.output_size() + graph.value_info_size());
  const std::string what = StrCat("'", file.destination().filename().string(), "'");
  return SerializeModel(model, ThreadsFor(messages, kSerializeMessagesPerThread),
                        [&](uint64_t offset, std::span<const std::byte> bytes) {
                          return WriteAt(file.fd(), bytes, offset, what);
                        });
}

// Makes the renames durable; a failure here loses nothing already visible, so it is not reported.
void SyncFolder(const fs::path& folder) {
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

Status SaveModelImpl(Graph& graph, const std::string& path) {
  const fs::path destination(path);
  const std::string name = destination.filename().string();
  ZG_RETURN_IF_NOT(!name.empty() && name != "." && name != "..", "the path names no file");
  std::error_code error;
  ZG_RETURN_IF_NOT(!fs::is_directory(destination, error), "the path is a folder");

  ZG_ASSIGN_OR_RETURN(std::unique_ptr<TempFile> model_file, TempFile::Create(destination));
  DataFileWriter data_writer(destination.parent_path() / StrCat(name, ".data"));

  // The file says IR 8 whatever the graph was loaded as; the graph itself keeps its version.
  const int64_t loaded_ir_version = graph.ir_version();
  graph.SetIrVersion(kWrittenIrVersion);
  auto write_external = [&](const Tensor& tensor, onnx::TensorProto& copy) {
    return data_writer.Write(tensor, copy);
  };
  auto write_model = [&](onnx::ModelProto& model) -> Status {
    if (loaded_ir_version > kWrittenIrVersion) {
      ZG_RETURN_IF_ERROR(CheckFitsIrVersion8(model.graph()));
    }
    return WriteModel(model, *model_file);
  };
  Status written = graph.WithModelProto(write_external, write_model);
  graph.SetIrVersion(loaded_ir_version);
  ZG_RETURN_IF_ERROR(written);

  ZG_ASSIGN_OR_RETURN(TempFile * data_file, data_writer.Finish());
  ZG_RETURN_IF_ERROR(model_file->SyncAndClose());
  // Data first: the new model must never point into an old data file.
  if (data_file != nullptr) ZG_RETURN_IF_ERROR(data_file->Commit());
  ZG_RETURN_IF_ERROR(model_file->Commit());
  SyncFolder(destination.parent_path());
  return Status::Ok();
}

}  // namespace

Status SaveModel(Graph& graph, const std::string& path) {
  return SaveModelImpl(graph, path).WithContext(StrCat("saving '", path, "'"));
}

}  // namespace zerograph
