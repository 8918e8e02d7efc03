#include "zerograph/ckpt/checkpoint_convert.h"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "zerograph/ckpt/checkpoint.h"
#include "zerograph/ckpt/safetensors.h"
#include "zerograph/core/atomic_file.h"
#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

int64_t PieceBytes(const CheckpointTensor& tensor, const CheckpointPiece& piece) {
  return (piece.end - piece.begin) * static_cast<int64_t>(ElementSize(tensor.dtype));
}

// Where the bytes of elements [begin, end) of a planned tensor come from in the input.
using Locate = std::function<StatusOr<std::vector<CheckpointReader::SourceRange>>(
    const CheckpointTensor& tensor, int64_t begin, int64_t end, int64_t bytes)>;

// --dry-run: every output file, each piece it will hold, and under each piece the input ranges
// (file, stored tensor, bytes of its piece there) it is copied from; then the bytes read from each
// input file.
Status PrintCopyPlan(const CheckpointPlan& plan, const std::map<std::string, int64_t>& file_bytes,
                     const Locate& locate, std::ostream& out) {
  std::map<std::string, int64_t> read_bytes;
  for (const std::string& file : plan.files) {
    auto written = file_bytes.find(file);
    out << "  " << file << ": " << (written == file_bytes.end() ? 0 : written->second)
        << " bytes\n";
    for (const CheckpointTensor& t : plan.tensors) {
      for (const CheckpointPiece& p : t.pieces) {
        if (p.file != file) continue;
        const int64_t bytes = PieceBytes(t, p);
        out << "    " << t.name << " [" << p.begin << ", " << p.end << ") of " << t.name << " ["
            << StrJoin(t.shape, ",") << "] " << SafetensorsDtypeName(t.dtype).value_or("?") << ", "
            << bytes << " bytes\n";
        ZG_ASSIGN_OR_RETURN(std::vector<CheckpointReader::SourceRange> ranges,
                            locate(t, p.begin, p.end, bytes));
        int64_t at = 0;
        auto zeros = [&](int64_t until) {
          if (until > at) out << "      <- zeros (padding), " << until - at << " bytes\n";
        };
        for (const CheckpointReader::SourceRange& r : ranges) {
          zeros(r.out_offset);
          out << "      <- " << r.piece->file << ": " << r.tensor->name << " bytes [" << r.begin
              << ", " << r.end << "), " << r.end - r.begin << " bytes\n";
          read_bytes[r.piece->file] += r.end - r.begin;
          at = r.out_offset + r.end - r.begin;
        }
        zeros(bytes);
      }
    }
  }
  for (const auto& [file, bytes] : read_bytes) {
    out << "  reads " << bytes << " bytes from " << file << "\n";
  }
  return Status::Ok();
}

}  // namespace

Status ConvertCheckpoint(const std::string& in, const std::string& out,
                         const ConvertOptions& options) {
  std::error_code error;
  if (fs::exists(out, error) || fs::is_symlink(out, error)) {
    return InvalidArgumentError(
        StrCat("OUT '", out, "' already exists; give a new folder name (nothing was written)"));
  }
  ZG_ASSIGN_OR_RETURN(std::string dir, ResolveCheckpointDir(in));
  // Input checksums are verified from the copy's own reads (each byte read once), and all of them
  // before the result is renamed into place.
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<CheckpointReader> reader,
                      CheckpointReader::Open(dir, ChecksumTiming::kWhileReading));
  const CheckpointManifest& source = reader->manifest();

  // The state model of the result: the input's, or the target graph's for an unbalanced result.
  StateModel model = source.model;
  int64_t nranks = options.nranks > 0 ? options.nranks : source.nranks;
  if (options.to == CheckpointKind::kUnbalanced) {
    if (options.target != nullptr) {
      ZG_RETURN_IF_NOT(options.target->ModelHash() == source.model_hash,
                       "--graph trains another model than checkpoint '", dir,
                       "' holds (model hash ", options.target->ModelHash(), " vs ",
                       source.model_hash, ")");
      model = *options.target;
      ZG_RETURN_IF_NOT(options.nranks == 0 || options.nranks == model.nranks(), "--nranks ",
                       options.nranks, " contradicts --graph, which is rewritten for ",
                       model.nranks(), " ranks");
      nranks = model.nranks();
    } else {
      ZG_RETURN_IF_NOT(nranks == model.nranks(), "an unbalanced checkpoint for ", nranks,
                       " ranks needs their layout: pass --graph with the graph rewritten for ",
                       nranks, " ranks");
    }
  }
  const CheckpointPlan plan = options.to == CheckpointKind::kConsolidated
                                  ? PlanConsolidated(model, options.with_states,
                                                     options.max_file_bytes, options.master_weights)
                                  : PlanCheckpoint(options.to, model, nranks);

  // Every planned tensor must be readable from the input before anything is written.
  for (const CheckpointTensor& t : plan.tensors) {
    const bool is_buffer = options.to == CheckpointKind::kUnbalanced;
    if (!is_buffer || !model.FindBucketBuffer(t.name)) {
      const std::string& name = t.source_name();
      const bool found = source.FindTensor(name) != nullptr || source.model.FindCanonical(name);
      ZG_RETURN_IF_NOT(found, "checkpoint '", dir, "' has no tensor '", name,
                       "' (nothing was written)");
    }
  }

  // Where the bytes of a planned piece come from in the input, as the copy reads them.
  Locate locate = [&](const CheckpointTensor& tensor, int64_t begin, int64_t end,
                      int64_t bytes) -> StatusOr<std::vector<CheckpointReader::SourceRange>> {
    if (options.to == CheckpointKind::kUnbalanced) {
      return reader->LocateBuffer(model, tensor.name, begin, end, bytes);
    }
    return reader->LocateCanonical(tensor.source_name(), begin, end, bytes);
  };

  int64_t total_bytes = 0;
  std::map<std::string, int64_t> file_bytes;
  for (const CheckpointTensor& t : plan.tensors) {
    for (const CheckpointPiece& p : t.pieces) {
      const int64_t bytes = PieceBytes(t, p);
      file_bytes[p.file] += bytes;
      total_bytes += bytes;
    }
  }
  if (options.out != nullptr) {
    *options.out << "checkpoint-convert: " << dir << " (" << CheckpointKindName(source.kind) << ", "
                 << source.nranks << " rank(s), step " << source.step << ") -> " << out << " ("
                 << CheckpointKindName(options.to) << ", " << plan.files.size() << " file(s))\n";
    if (options.dry_run) {
      ZG_RETURN_IF_ERROR(PrintCopyPlan(plan, file_bytes, locate, *options.out));
      *options.out << "would copy " << total_bytes << " bytes of tensor data; nothing written "
                   << "(--dry-run)\n";
      return Status::Ok();
    }
  }
  if (options.dry_run) return Status::Ok();

  const std::string temp = StrCat(out, ".tmp-", ::getpid());
  fs::remove_all(temp, error);
  if (!fs::create_directories(temp, error) || error) {
    return UnavailableError(StrCat("cannot create '", temp, "': ", error.message()));
  }
  int64_t done_bytes = 0;
  PieceSource read = [&](const CheckpointTensor& tensor, int64_t begin, int64_t end,
                         std::span<std::byte> bytes) -> Status {
    // The writer calls this once per chunk, just before writing it: progress counts chunks read.
    if (options.progress && done_bytes > 0) options.progress(done_bytes, total_bytes);
    done_bytes += static_cast<int64_t>(bytes.size());
    if (options.to == CheckpointKind::kUnbalanced) {
      return reader->ReadBuffer(model, tensor.name, begin, end, bytes);
    }
    return reader->ReadCanonical(tensor.source_name(), begin, end, bytes);
  };
  Status status = [&]() -> Status {
    CheckpointManifest manifest;
    manifest.kind = options.to;
    manifest.step = source.step;
    manifest.next_step = source.next_step;
    manifest.nranks = options.to == CheckpointKind::kConsolidated ? 1 : nranks;
    manifest.global_batch = source.global_batch;
    manifest.lr_schedule = source.lr_schedule;
    manifest.layout = options.to == CheckpointKind::kUnbalanced ? model.layout : std::nullopt;
    manifest.model = model;
    manifest.model.layout = manifest.layout;
    manifest.model_hash = model.ModelHash();
    manifest.tensors = plan.tensors;
    for (size_t i = 0; i < plan.files.size(); ++i) {
      ZG_ASSIGN_OR_RETURN(CheckpointManifest::File file,
                          WriteCheckpointFile(temp, plan, i, read, options.chunk_bytes));
      manifest.files.push_back(std::move(file));
    }
    if (options.to == CheckpointKind::kConsolidated && plan.files.size() > 1) {
      // Hugging Face's sharded-weights index.
      nlohmann::ordered_json index;
      index["metadata"] = {{"total_size", total_bytes}};
      index["weight_map"] = nlohmann::ordered_json::object();
      for (const CheckpointTensor& t : plan.tensors) index["weight_map"][t.name] = t.pieces[0].file;
      ZG_RETURN_IF_ERROR(
          WriteFileAtomically(StrCat(temp, "/model.safetensors.index.json"), index.dump(2)));
    }
    ZG_RETURN_IF_ERROR(reader->VerifyAll());
    ZG_RETURN_IF_ERROR(WriteFileAtomically(StrCat(temp, "/manifest.json"), manifest.ToJson()));
    return RenameFolder(temp, out);
  }();
  if (!status.ok()) {
    fs::remove_all(temp, error);
    return std::move(status).WithContext("nothing was written");
  }
  if (options.progress) options.progress(total_bytes, total_bytes);
  if (options.out != nullptr) {
    *options.out << "wrote " << total_bytes << " bytes of tensor data in " << plan.files.size()
                 << " file(s) to " << out << "\n";
  }
  return Status::Ok();
}

}  // namespace zerograph
