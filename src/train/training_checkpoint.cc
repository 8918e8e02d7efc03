#include "zerograph/train/training_checkpoint.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <vector>

#include "zerograph/core/atomic_file.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/executor.h"
#include "zerograph/runtime/stream.h"

namespace zerograph {
namespace {

namespace fs = std::filesystem;

std::string StepDirName(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%06lld", static_cast<long long>(step));
  return name;
}

// A buffer as this rank holds it: elements [begin, begin + numel) of the whole buffer.
struct HeldBuffer {
  const StateTensor* buffer = nullptr;
  runtime::DeviceTensor tensor;
  int64_t begin = 0;
};

StatusOr<HeldBuffer> Held(const TrainingState& state, const StateTensor& buffer) {
  const runtime::DeviceTensor* tensor = state.executor->Find(buffer.name);
  ZG_RET_CHECK(tensor != nullptr, "the executor has no state '", buffer.name, "'");
  HeldBuffer held{&buffer, *tensor, 0};
  if (tensor->numel() == buffer.numel()) return held;
  std::optional<StateModel::BucketRef> ref = state.model->FindBucketBuffer(buffer.name);
  ZG_RET_CHECK(ref && tensor->numel() == ref->bucket->shard_size, "state '", buffer.name,
               "' holds ", tensor->numel(), " elements, neither whole nor a shard");
  held.begin = state.comm->rank() * ref->bucket->shard_size;
  return held;
}

// Sums `values` over ranks (int64), on the executor's communication stream.
Status SumOverRanks(const TrainingState& state, std::span<int64_t> values) {
  if (state.comm->size() == 1) return Status::Ok();
  ZG_ASSIGN_OR_RETURN(runtime::DeviceTensor tensor,
                      runtime::DeviceTensor::Allocate(*state.device, DataType::kInt64,
                                                      {static_cast<int64_t>(values.size())}));
  ZG_RETURN_IF_ERROR(state.device->CopyFromHost(std::as_bytes(values), tensor));
  runtime::Stream& stream = state.executor->comm_stream();
  ZG_RETURN_IF_ERROR(state.comm->AllReduce(tensor, tensor, runtime::ReduceOp::kSum, stream));
  ZG_RETURN_IF_ERROR(stream.Synchronize());
  return state.device->CopyToHost(tensor, std::as_writable_bytes(values));
}

// Rank 0's part of the commit: the manifest, the rename, `latest`. Each step is on disk before
// the next: a crash leaves the old checkpoint or the new one.
Status Commit(const SaveCheckpointOptions& options, const CheckpointManifest& manifest,
              const std::string& temp, const std::string& final_dir) {
  ZG_RETURN_IF_ERROR(WriteFileAtomically(StrCat(temp, "/manifest.json"), manifest.ToJson()));
  std::error_code error;
  std::string old;
  if (fs::exists(final_dir)) {
    old = StrCat(options.root, "/.old-", StepDirName(options.step));
    fs::remove_all(old, error);
    ZG_RETURN_IF_ERROR(RenameFolder(final_dir, old).WithContext("moving the old checkpoint aside"));
  }
  ZG_RETURN_IF_ERROR(RenameFolder(temp, final_dir));
  ZG_RETURN_IF_ERROR(WriteFileAtomically(StrCat(options.root, "/latest"),
                                         StrCat(StepDirName(options.step), "\n")));
  if (!old.empty()) fs::remove_all(old, error);
  return Status::Ok();
}

// What differs between two layouts, in a few words.
std::string LayoutDifference(const LayoutManifest& saved, const LayoutManifest& graph) {
  if (saved.nranks != graph.nranks) {
    return StrCat("it was saved on ", saved.nranks, " ranks, the graph is rewritten for ",
                  graph.nranks);
  }
  if (saved.buckets.size() != graph.buckets.size()) {
    return StrCat("it has ", saved.buckets.size(), " buckets, the graph ", graph.buckets.size());
  }
  for (size_t b = 0; b < saved.buckets.size(); ++b) {
    const auto& s = saved.buckets[b];
    const auto& g = graph.buckets[b];
    if (s.total != g.total || s.params.size() != g.params.size()) {
      return StrCat("bucket ", b, " holds ", s.params.size(), " parameters in ", s.total,
                    " elements, the graph's ", g.params.size(), " in ", g.total);
    }
    for (size_t i = 0; i < s.params.size(); ++i) {
      if (!(s.params[i] == g.params[i])) {
        return StrCat("bucket ", b, " parameter ", i, " is '", s.params[i].name, "' at offset ",
                      s.params[i].offset, ", the graph's '", g.params[i].name, "' at ",
                      g.params[i].offset);
      }
    }
  }
  return StrCat("layout hash ", saved.Hash(), " differs from the graph's ", graph.Hash());
}

// The first canonical tensor that differs, for a message.
std::string ModelDifference(const StateModel& saved, const StateModel& graph) {
  for (const StateTensor& t : graph.canonical) {
    const StateTensor* s = saved.FindCanonical(t.name);
    if (s == nullptr) return StrCat("the graph trains '", t.name, "', which the checkpoint lacks");
    if (!(s->shape == t.shape) || s->dtype != t.dtype) {
      return StrCat("'", t.name, "' has shape [", StrJoin(s->shape, ","), "] there, [",
                    StrJoin(t.shape, ","), "] in the graph");
    }
  }
  for (const StateTensor& s : saved.canonical) {
    if (graph.FindCanonical(s.name) == nullptr) {
      return StrCat("the checkpoint holds '", s.name, "', which the graph does not train");
    }
  }
  return "parameters and states differ";
}

}  // namespace

StatusOr<std::string> SaveCheckpoint(const TrainingState& state,
                                     const SaveCheckpointOptions& options) {
  runtime::Communicator& comm = *state.comm;
  const int rank = comm.rank();
  const int nranks = comm.size();
  ZG_RETURN_IF_ERROR(state.executor->Synchronize());

  // This rank's state on the host (balanced: every bucket state gathered whole).
  struct HostBuffer {
    int64_t begin = 0;
    std::vector<std::byte> bytes;
  };
  std::map<std::string, HostBuffer, std::less<>> host;
  for (const StateTensor& buffer : state.model->buffers) {
    ZG_ASSIGN_OR_RETURN(HeldBuffer held, Held(state, buffer));
    runtime::DeviceTensor source = held.tensor;
    HostBuffer& out = host[buffer.name];
    out.begin = held.begin;
    if (options.kind == CheckpointKind::kBalanced && held.tensor.numel() != buffer.numel()) {
      ZG_ASSIGN_OR_RETURN(
          source, runtime::DeviceTensor::Allocate(*state.device, buffer.dtype, {buffer.numel()}));
      runtime::Stream& stream = state.executor->comm_stream();
      ZG_RETURN_IF_ERROR(comm.AllGather(held.tensor, source, stream));
      ZG_RETURN_IF_ERROR(stream.Synchronize());
      out.begin = 0;
    }
    out.bytes.resize(source.byte_size());
    ZG_RETURN_IF_ERROR(state.device->CopyToHost(source, out.bytes));
  }

  const std::string final_dir = StrCat(options.root, "/", StepDirName(options.step));
  const std::string temp = StrCat(options.root, "/.tmp-", StepDirName(options.step));
  std::vector<int64_t> prepared(1, 0);
  if (rank == 0) {
    std::error_code error;
    fs::create_directories(options.root, error);
    fs::remove_all(temp, error);
    if (!fs::create_directory(temp, error) || error) prepared[0] = 1;
  }
  ZG_RETURN_IF_ERROR(SumOverRanks(state, prepared));
  ZG_RETURN_IF_NOT(prepared[0] == 0, "cannot create the checkpoint folder '", temp, "'");

  const CheckpointPlan plan = PlanCheckpoint(options.kind, *state.model, nranks);
  PieceSource source = [&](const CheckpointTensor& tensor, int64_t begin, int64_t end,
                           std::span<std::byte> out) -> Status {
    // A buffer (unbalanced) or a canonical tensor (balanced) inside a buffer.
    std::string_view buffer = tensor.name;
    int64_t offset = 0;
    if (options.kind == CheckpointKind::kBalanced && state.model->layout) {
      for (const LayoutManifest::Bucket& bucket : state.model->layout->buckets) {
        for (const LayoutManifest::Param& p : bucket.params) {
          if (p.name == tensor.name) buffer = bucket.param_buffer, offset = p.offset;
          for (size_t j = 0; j < p.states.size(); ++j) {
            if (p.states[j] == tensor.name) buffer = bucket.state_buffers[j], offset = p.offset;
          }
        }
      }
    }
    auto it = host.find(buffer);
    ZG_RET_CHECK(it != host.end(), "no state '", buffer, "' for '", tensor.name, "'");
    const size_t element = ElementSize(tensor.dtype);
    const int64_t at = offset + begin - it->second.begin;
    ZG_RET_CHECK(
        at >= 0 && static_cast<size_t>((at + end - begin)) * element <= it->second.bytes.size(),
        "'", tensor.name, "' [", begin, ", ", end, ") is not held by rank ", rank);
    std::memcpy(out.data(), it->second.bytes.data() + at * element, out.size());
    return Status::Ok();
  };
  StatusOr<CheckpointManifest::File> written =
      WriteCheckpointFile(temp, plan, static_cast<size_t>(rank), source);

  // Agreement: every rank's outcome, size and checksum reach rank 0.
  std::vector<int64_t> results(3 * static_cast<size_t>(nranks), 0);
  results[3 * rank] = written.ok() ? 0 : 1;
  if (written.ok()) {
    results[3 * rank + 1] = written->bytes;
    results[3 * rank + 2] = written->crc32;
  }
  ZG_RETURN_IF_ERROR(SumOverRanks(state, results));
  int failed = 0;
  for (int r = 0; r < nranks; ++r) failed += results[3 * r] != 0;
  Status committed;
  if (failed > 0) {
    committed = written.ok() ? UnavailableError(StrCat(failed,
                                                       " rank(s) failed to write their "
                                                       "checkpoint file (see their message)"))
                             : written.status();
    if (rank == 0) {
      std::error_code error;
      fs::remove_all(temp, error);
    }
  } else if (rank == 0) {
    CheckpointManifest manifest;
    manifest.kind = options.kind;
    manifest.step = options.step;
    manifest.next_step = options.step + 1;
    manifest.nranks = nranks;
    manifest.global_batch = options.global_batch;
    manifest.lr_schedule = options.lr_schedule;
    manifest.layout = state.model->layout;
    manifest.model = *state.model;
    manifest.model_hash = state.model->ModelHash();
    manifest.tensors = plan.tensors;
    for (int r = 0; r < nranks; ++r) {
      manifest.files.push_back(
          {plan.files[r], results[3 * r + 1], static_cast<uint32_t>(results[3 * r + 2])});
    }
    committed = Commit(options, manifest, temp, final_dir);
    if (!committed.ok()) {
      std::error_code error;
      fs::remove_all(temp, error);  // gone already when only `latest` failed: the rename was done
    }
  }
  std::vector<int64_t> commit_failed(1, committed.ok() ? 0 : 1);
  ZG_RETURN_IF_ERROR(SumOverRanks(state, commit_failed));
  if (!committed.ok()) return std::move(committed).WithContext(StrCat("saving '", final_dir, "'"));
  if (commit_failed[0] != 0) {
    return UnavailableError(StrCat("saving '", final_dir, "': rank 0 could not commit it"));
  }
  return final_dir;
}

StatusOr<CheckpointManifest> LoadCheckpoint(const TrainingState& state, const std::string& dir,
                                            const std::string& graph_path, int64_t rows_per_rank) {
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<CheckpointReader> reader, CheckpointReader::Open(dir));
  const CheckpointManifest& manifest = reader->manifest();
  const StateModel& model = *state.model;
  if (manifest.model_hash != model.ModelHash()) {
    return InvalidArgumentError(StrCat("checkpoint '", dir, "' is of another model than '",
                                       graph_path, "': ", ModelDifference(manifest.model, model)));
  }
  const int64_t nranks = state.comm->size();
  const int64_t saved_batch = manifest.global_batch;
  if (saved_batch != 0 && saved_batch != rows_per_rank * nranks) {
    const std::string fix =
        saved_batch % nranks == 0
            ? StrCat("to continue it on ", nranks, " rank(s), each rank must take ",
                     saved_batch / nranks, " rows (", saved_batch, " / ", nranks,
                     "): run with --batch ", saved_batch,
                     " if the graph's batch dimension is symbolic, else give the model that batch "
                     "dimension (generate-models --batch ",
                     saved_batch / nranks,
                     ", or your exporter's batch size), rewrite it with "
                     "--nranks ",
                     nranks, ", and load the checkpoint into that graph")
            : StrCat(saved_batch, " rows do not split evenly over ", nranks,
                     " ranks: run on a rank count that divides ", saved_batch);
    return InvalidArgumentError(StrCat("checkpoint '", dir, "' was trained with a global batch of ",
                                       saved_batch, ", this run takes ", rows_per_rank * nranks,
                                       " (", nranks, " rank(s) x ", rows_per_rank,
                                       " rows): the data position would not continue; ", fix));
  }
  if (manifest.kind == CheckpointKind::kUnbalanced) {
    std::string difference;
    if (manifest.layout.has_value() != model.layout.has_value()) {
      difference =
          StrCat("it was saved ", manifest.layout ? "from a rewritten graph" : "unrewritten",
                 ", the graph is ", model.layout ? "rewritten" : "not rewritten");
    } else if (manifest.layout && manifest.layout->Hash() != model.layout->Hash()) {
      difference = LayoutDifference(*manifest.layout, *model.layout);
    }
    if (!difference.empty()) {
      return InvalidArgumentError(StrCat(
          "unbalanced checkpoint '", dir, "' loads only on the layout it was saved with, and ",
          difference, ". Convert it: checkpoint-convert ", dir, " OUT --to unbalanced --nranks ",
          nranks, " --graph ", graph_path, " (or --to balanced, which loads on any rank count)"));
    }
  }
  if (manifest.kind == CheckpointKind::kConsolidated) {
    for (const StateTensor& c : model.canonical) {
      ZG_RETURN_IF_NOT(manifest.FindTensor(c.name) != nullptr, "consolidated checkpoint '", dir,
                       "' has no '", c.name,
                       "': it holds weights without optimizer states, so training cannot resume "
                       "from it");
    }
  }
  ZG_RETURN_IF_ERROR(state.executor->Synchronize());
  for (const StateTensor& buffer : model.buffers) {
    ZG_ASSIGN_OR_RETURN(HeldBuffer held, Held(state, buffer));
    std::vector<std::byte> bytes(held.tensor.byte_size());
    Status read =
        reader->ReadBuffer(model, buffer.name, held.begin, held.begin + held.tensor.numel(), bytes);
    if (!read.ok()) return std::move(read).WithContext(StrCat("loading '", buffer.name, "'"));
    ZG_RETURN_IF_ERROR(state.device->CopyFromHost(bytes, held.tensor));
  }
  return manifest;
}

}  // namespace zerograph
