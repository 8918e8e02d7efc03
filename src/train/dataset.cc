#include "zerograph/train/dataset.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "zerograph/ir/graph.h"
#include "zerograph/ir/training_spec.h"

namespace zerograph {

namespace {

// The per-rank shape of data input `name`: the graph's dims, with a symbolic (or unknown) batch
// dimension bound to the global batch divided by the ranks, and any other symbolic dimension to
// the data file's.
StatusOr<std::vector<int64_t>> BindDims(std::string_view name, const TensorType& type,
                                        std::span<const int64_t> file_shape, int64_t global_batch,
                                        int64_t nranks) {
  ZG_RETURN_IF_NOT(type.dims && !type.dims->empty(), "data input '", name,
                   "' needs a shape with a batch dimension (it has ",
                   type.dims ? "rank 0" : "no recorded shape", ")");
  std::vector<int64_t> dims = *type.dims;
  if (dims.front() == TensorType::kUnknownDim) {
    ZG_RETURN_IF_NOT(global_batch > 0, "data input '", name,
                     "' has a symbolic batch dimension: give the global batch with --batch");
    ZG_RETURN_IF_NOT(global_batch % nranks == 0, "--batch ", global_batch,
                     " does not split evenly over ", nranks, " ranks (data input '", name,
                     "' has a symbolic batch dimension)");
    dims.front() = global_batch / nranks;
  }
  if (file_shape.size() != dims.size()) return dims;  // the caller reports the mismatch
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] == TensorType::kUnknownDim) dims[i] = file_shape[i];
  }
  return dims;
}

}  // namespace

StatusOr<std::unique_ptr<Dataset>> Dataset::Open(const std::string& path, const Graph& graph,
                                                 const TrainingSpec& spec, int64_t nranks,
                                                 int64_t global_batch) {
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file, SafetensorsFile::Open(path));
  std::unique_ptr<Dataset> dataset(new Dataset());
  dataset->nranks_ = nranks;
  ZG_RETURN_IF_NOT(!spec.data_inputs.empty(), "the graph has no data inputs (zerograph.inputs)");
  for (const std::string& name : spec.data_inputs) {
    const Value* input = graph.FindValue(name);
    const std::optional<TensorType> type = input->type();
    ZG_RETURN_IF_NOT(type.has_value(), "data input '", name, "' has no recorded type");
    const SafetensorsFile::TensorInfo* tensor = file->Find(name);
    if (tensor == nullptr) {
      std::vector<std::string_view> names;
      for (const SafetensorsFile::TensorInfo& held : file->tensors()) names.push_back(held.name);
      return InvalidArgumentError(StrCat(
          "'", path, "' has no tensor '", name,
          "' for the graph's data input of that name (it holds: ", StrJoin(names, ", "), ")"));
    }
    ZG_RETURN_IF_NOT(tensor->dtype == type->dtype, "'", path, "': tensor '", name, "' is ",
                     DataTypeName(tensor->dtype), ", the graph's input is ",
                     DataTypeName(type->dtype));
    ZG_ASSIGN_OR_RETURN(const std::vector<int64_t> dims,
                        BindDims(name, *type, tensor->shape, global_batch, nranks));
    const bool rows_match = tensor->shape.size() == dims.size() &&
                            std::equal(dims.begin() + 1, dims.end(), tensor->shape.begin() + 1);
    ZG_RETURN_IF_NOT(rows_match, "'", path, "': tensor '", name, "' has shape ",
                     runtime::ShapeToString(tensor->shape), ", but each row of input '", name,
                     "' is ", type->ToString(), " without its first dimension");
    const int64_t samples = tensor->shape.front();
    ZG_RETURN_IF_NOT(dataset->inputs_.empty() || samples == dataset->samples_, "'", path,
                     "': tensor '", name, "' has ", samples, " samples, '",
                     dataset->inputs_.front().first, "' has ", dataset->samples_);
    ZG_RETURN_IF_NOT(dataset->inputs_.empty() || dims.front() == dataset->rows_per_rank_,
                     "data inputs disagree on the batch dimension");
    dataset->samples_ = samples;
    dataset->rows_per_rank_ = dims.front();
    dataset->inputs_.emplace_back(name, runtime::TensorSpec{type->dtype, dims});
  }
  ZG_RETURN_IF_NOT(dataset->samples_ >= dataset->global_batch(), "'", path, "' holds ",
                   dataset->samples_, " samples, fewer than one global batch of ",
                   dataset->global_batch(), " (", dataset->rows_per_rank_, " rows on each of ",
                   nranks, " ranks)");
  dataset->file_ = std::move(file);
  return dataset;
}

Status Dataset::Rows(std::string_view input, int64_t step, int64_t rank,
                     std::span<std::byte> out) const {
  const SafetensorsFile::TensorInfo* tensor = file_->Find(input);
  ZG_RETURN_IF_NOT(tensor != nullptr, "no data for input '", input, "'");
  const size_t row_bytes = tensor->bytes.size() / static_cast<size_t>(samples_);
  ZG_RETURN_IF_NOT(out.size() == row_bytes * static_cast<size_t>(rows_per_rank_), "input '", input,
                   "' takes ", out.size(), " bytes, not ", rows_per_rank_, " rows of ", row_bytes);
  const int64_t first = step * global_batch() + rank * rows_per_rank_;
  for (int64_t row = 0; row < rows_per_rank_; ++row) {
    const int64_t sample = (first + row) % samples_;
    std::memcpy(out.data() + static_cast<size_t>(row) * row_bytes,
                tensor->bytes.data() + static_cast<size_t>(sample) * row_bytes, row_bytes);
  }
  return Status::Ok();
}

}  // namespace zerograph
