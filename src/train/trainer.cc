#include "zerograph/train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "zerograph/core/atomic_file.h"
#include "zerograph/core/json.h"
#include "zerograph/core/mapped_file.h"
#include "zerograph/core/num_elements.h"
#include "zerograph/ir/graph.h"
#include "zerograph/ir/node.h"
#include "zerograph/ir/value.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/stream.h"

namespace zerograph {
namespace {

template <typename T>
std::span<const std::byte> BytesOf(const T& value) {
  return std::as_bytes(std::span<const T>(&value, 1));
}

// "[#########           ] 45/100 loss 0.5", drawn over the terminal's last line.
void DrawProgress(int64_t done, int64_t total, float loss) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / std::max<int64_t>(total, 1));
  std::fprintf(stderr, "\r[%s%s] %lld/%lld loss %.6g", std::string(filled, '#').c_str(),
               std::string(kWidth - filled, ' ').c_str(), static_cast<long long>(done),
               static_cast<long long>(total), static_cast<double>(loss));
  std::fflush(stderr);
}

// Erases the bar, so that a step line written next starts at the line's beginning.
void ClearProgress() {
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
}

// "512 B", "7.5 KiB", "128.7 MiB".
std::string HumanBytes(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

// Rank 0's report of one step: its line, the progress bar, and the loss log with the loss's bits.
void ReportStep(const StepResult& result, const TrainOptions& options, bool progress,
                std::ofstream& loss_log) {
  const double loss = static_cast<double>(result.loss);
  if (progress) ClearProgress();
  if (options.out != nullptr) {
    char line[160];
    std::snprintf(line, sizeof(line), "step %lld  loss %.9g  lr %.6g  time %.3f ms",
                  static_cast<long long>(result.step), loss, static_cast<double>(result.lr),
                  result.seconds * 1e3);
    std::string text = line;
    if (result.controlled) {
      std::snprintf(line, sizeof(line), "  grad-norm %.6g", static_cast<double>(result.grad_norm));
      text += line;
    }
    if (result.loss_scale > 0) {
      std::snprintf(line, sizeof(line), "  loss-scale %g", static_cast<double>(result.loss_scale));
      text += line;
    }
    if (result.skipped) text += "  skipped: the gradients overflowed";
    *options.out << text << "\n" << std::flush;
  }
  const int64_t done = result.step - options.first_step + 1;
  if (progress && done < options.steps) DrawProgress(done, options.steps, result.loss);
  if (loss_log.is_open()) {
    char line[160];
    std::snprintf(line, sizeof(line), "%lld %.9g %.9g 0x%08x\n",
                  static_cast<long long>(result.step), loss, static_cast<double>(result.lr),
                  std::bit_cast<uint32_t>(result.loss));
    loss_log << line << std::flush;
  }
}

}  // namespace

StatusOr<std::unique_ptr<Trainer>> Trainer::Create(const Graph& graph, const std::string& data_path,
                                                   runtime::Device& device,
                                                   runtime::Communicator& comm,
                                                   const runtime::KernelRegistry& registry,
                                                   bool trace, int64_t global_batch) {
  std::unique_ptr<Trainer> trainer(new Trainer());
  trainer->graph_ = &graph;
  trainer->device_ = &device;
  trainer->comm_ = &comm;
  ZG_ASSIGN_OR_RETURN(std::optional<TrainingSpec> spec, ReadTrainingSpec(graph));
  ZG_RETURN_IF_NOT(spec.has_value(),
                   "the graph has no zerograph.loss metadata, so it is not a training graph");
  trainer->spec_ = std::move(*spec);
  // Said first: a graph for another rank count would otherwise fail on the data's shapes.
  const int64_t graph_ranks = trainer->spec_.nranks.value_or(1);
  ZG_RETURN_IF_NOT(graph_ranks == comm.size(), "the graph is rewritten for ", graph_ranks,
                   " ranks, but ", comm.size(),
                   " ranks run it: rewrite the training graph with "
                   "rewrite-graph --nranks ",
                   comm.size());
  ZG_ASSIGN_OR_RETURN(trainer->dataset_,
                      Dataset::Open(data_path, graph, trainer->spec_, comm.size(), global_batch));
  runtime::ExecutorOptions options;
  options.trace = trace;
  for (const auto& [name, spec_of_input] : trainer->dataset_->inputs()) {
    options.input_specs.emplace(name, spec_of_input);
  }
  ZG_ASSIGN_OR_RETURN(trainer->executor_,
                      runtime::Executor::Create(graph, device, comm, registry, std::move(options)));
  ZG_ASSIGN_OR_RETURN(trainer->step_summary_,
                      runtime::DeviceTensor::Allocate(device, DataType::kFloat32, {3}));
  for (const Node* node : graph.nodes()) {
    if (!node->Is(kZerographDomain, "GradientControl")) continue;
    trainer->control_output_ = std::string(node->output(0)->name());
    if (node->num_outputs() > 1) trainer->loss_scale_output_ = node->output(1)->name();
    ZG_ASSIGN_OR_RETURN(trainer->step_control_,
                        runtime::DeviceTensor::Allocate(device, DataType::kFloat32, {4}));
    break;
  }
  return trainer;
}

StatusOr<std::vector<StepResult>> Trainer::Train(const TrainOptions& options) {
  runtime::Executor& executor = *executor_;
  const bool rank0 = comm_->rank() == 0;
  const bool progress =
      rank0 && options.progress && options.out != nullptr && isatty(STDERR_FILENO) != 0;
  std::ofstream loss_log;
  if (rank0 && !options.loss_log.empty()) {
    loss_log.open(options.loss_log);
    ZG_RETURN_IF_NOT(loss_log.good(), "cannot write the loss log '", options.loss_log, "'");
    loss_log << "# step loss lr loss_bits\n";
  }
  stopped_by_signal_ = 0;
  std::vector<StepResult> results;
  std::map<std::string, std::vector<std::byte>> rows;
  for (const auto& [name, spec] : dataset_->inputs()) {
    rows[name].resize(static_cast<size_t>(NumElements(spec.shape)) * ElementSize(spec.dtype));
  }
  const auto run_start = std::chrono::steady_clock::now();
  for (int64_t step = options.first_step; step < options.first_step + options.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    comm_->SetStep(step);  // names the step in a collective's timeout
    for (auto& [name, bytes] : rows) {
      ZG_RETURN_IF_ERROR(dataset_->Rows(name, step, comm_->rank(), bytes));
      ZG_RETURN_IF_ERROR(executor.SetInput(name, bytes));
    }
    const float lr = options.schedule.At(step);
    if (!spec_.lr_input.empty()) ZG_RETURN_IF_ERROR(executor.SetInput(spec_.lr_input, BytesOf(lr)));
    const int64_t update = step + 1;  // the optimizers' 1-based update count
    if (!spec_.step_input.empty()) {
      ZG_RETURN_IF_ERROR(executor.SetInput(spec_.step_input, BytesOf(update)));
    }
    Status ran = executor.Run(step);
    if (!ran.ok()) return std::move(ran).WithContext(StrCat("step ", step));

    // The loss shown is the mean over ranks (each rank's is the mean over its rows). Stop
    // requests ride in the same reduction, so the ranks agree on them without another collective.
    const runtime::DeviceTensor* loss = executor.Find(spec_.loss);
    ZG_RET_CHECK(loss != nullptr && loss->numel() == 1, "no scalar loss '", spec_.loss, "'");
    runtime::Stream& comm_stream = executor.comm_stream();
    const int signal = options.stop_signal ? options.stop_signal() : 0;
    const float requests[2] = {signal == SIGINT ? 1.0f : 0.0f, signal == SIGTERM ? 1.0f : 0.0f};
    ZG_ASSIGN_OR_RETURN(runtime::DeviceTensor summary_loss, step_summary_.View(0, {}));
    ZG_ASSIGN_OR_RETURN(runtime::DeviceTensor summary_requests, step_summary_.View(1, {2}));
    // Both copies are complete before the reduction starts: an MPI collective runs on the calling
    // thread, not as a task of the stream.
    ZG_RETURN_IF_ERROR(device_->CopyAsync(*loss, summary_loss, comm_stream));
    if (!control_output_.empty()) ZG_RETURN_IF_ERROR(CopyStepControl(comm_stream));
    ZG_RETURN_IF_ERROR(comm_stream.Synchronize());
    ZG_RETURN_IF_ERROR(device_->CopyFromHost(std::as_bytes(std::span(requests)), summary_requests));
    ZG_RETURN_IF_ERROR(
        comm_->AllReduce(step_summary_, step_summary_, runtime::ReduceOp::kAvg, comm_stream));
    ZG_RETURN_IF_ERROR(comm_stream.Synchronize());
    float summary[3] = {};
    ZG_RETURN_IF_ERROR(
        device_->CopyToHost(step_summary_, std::as_writable_bytes(std::span(summary))));
    const float mean_loss = summary[0];
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    results.push_back({step, mean_loss, lr, seconds});
    StepResult& result = results.back();
    if (!control_output_.empty()) {
      float control[4] = {};
      ZG_RETURN_IF_ERROR(
          device_->CopyToHost(step_control_, std::as_writable_bytes(std::span(control))));
      result.controlled = true;
      result.skipped = control[1] != 0;
      result.grad_norm = control[2];
      result.loss_scale = loss_scale_output_.empty() ? 0.0f : control[3];
    }
    if (rank0) ReportStep(result, options, progress, loss_log);
    // A step skipped for overflowing gradients (loss scaling) may have a non-finite loss.
    if (!std::isfinite(mean_loss) && !result.skipped) {
      // Every rank sees the same mean, so every rank stops here; rank 0 says why.
      return Status(StatusCode::kAborted,
                    rank0 ? StrCat("step ", step, ": the loss is ", mean_loss,
                                   " (mean over ranks): training diverged; lower the learning "
                                   "rate, or resume from an earlier checkpoint with --load")
                          : "");
    }
    stopped_by_signal_ = summary[1] > 0 ? SIGINT : summary[2] > 0 ? SIGTERM : 0;
    const bool stopping = stopped_by_signal_ != 0;
    if (options.after_step) ZG_RETURN_IF_ERROR(options.after_step(step, stopping));
    if (stopping) break;
  }
  if (rank0 && options.out != nullptr && !results.empty()) {
    std::vector<double> times;
    for (const StepResult& r : results) times.push_back(r.seconds);
    std::sort(times.begin(), times.end());
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    const runtime::MemoryReport& memory = executor.memory();
    char line[200];
    std::snprintf(
        line, sizeof(line),
        "trained %lld steps on %d rank(s) in %.3f s: median step %.3f ms, final loss "
        "%.9g, %.1f samples/s\n",
        static_cast<long long>(results.size()), comm_->size(), total, times[times.size() / 2] * 1e3,
        static_cast<double>(results.back().loss),
        static_cast<double>(dataset_->global_batch() * static_cast<int64_t>(results.size())) /
            total);
    *options.out << line
                 << StrCat("memory per rank: ", HumanBytes(memory.total()),
                           " (parameters and states ", HumanBytes(memory.parameters_and_states),
                           ", inputs ", HumanBytes(memory.inputs), ", activations ",
                           HumanBytes(memory.activations), "; ",
                           HumanBytes(memory.activations_without_reuse),
                           " without buffer reuse)\n");
  }
  if (!options.trace.empty()) ZG_RETURN_IF_ERROR(WriteTrace(options.trace));
  return results;
}

// Copies the step's control and new loss scale into step_control_ on `stream`.
Status Trainer::CopyStepControl(runtime::Stream& stream) {
  const runtime::DeviceTensor* control = executor_->Find(control_output_);
  ZG_RET_CHECK(control != nullptr && control->numel() == 3, "no gradient control '",
               control_output_, "'");
  ZG_ASSIGN_OR_RETURN(runtime::DeviceTensor head, step_control_.View(0, {3}));
  ZG_RETURN_IF_ERROR(device_->CopyAsync(*control, head, stream));
  if (loss_scale_output_.empty()) return Status::Ok();
  const runtime::DeviceTensor* scale = executor_->Find(loss_scale_output_);
  ZG_RET_CHECK(scale != nullptr && scale->numel() == 1, "no loss scale '", loss_scale_output_, "'");
  ZG_ASSIGN_OR_RETURN(runtime::DeviceTensor tail, step_control_.View(3, {}));
  return device_->CopyAsync(*scale, tail, stream);
}

// Each rank writes its part; rank 0 merges them into one Chrome trace with a process per rank
// and a thread per stream, which Perfetto and chrome://tracing open.
Status Trainer::WriteTrace(const std::string& path) {
  using Json = nlohmann::json;
  std::vector<runtime::TraceEvent> events = executor_->TakeTrace();
  const std::string part = comm_->size() == 1 ? path : StrCat(path, ".rank-", comm_->rank());
  Json trace_events = Json::array();
  const int pid = comm_->rank();
  trace_events.push_back({{"name", "process_name"},
                          {"ph", "M"},
                          {"pid", pid},
                          {"args", {{"name", StrCat("rank ", pid)}}}});
  std::map<std::string, int> tids;
  for (const runtime::TraceEvent& event : events) {
    auto [it, inserted] = tids.emplace(event.stream, static_cast<int>(tids.size()));
    if (inserted) {
      trace_events.push_back({{"name", "thread_name"},
                              {"ph", "M"},
                              {"pid", pid},
                              {"tid", it->second},
                              {"args", {{"name", event.stream}}}});
    }
    trace_events.push_back({{"name", event.name},
                            {"cat", event.op_type},
                            {"ph", "X"},
                            {"ts", event.start_us},
                            {"dur", event.end_us - event.start_us},
                            {"pid", pid},
                            {"tid", it->second},
                            {"args", {{"step", event.step}}}});
  }
  if (comm_->size() == 1) {
    return WriteFileAtomically(
        path, Json{{"traceEvents", trace_events}, {"displayTimeUnit", "ms"}}.dump());
  }
  ZG_RETURN_IF_ERROR(WriteFileAtomically(part, trace_events.dump()));
  ZG_RETURN_IF_ERROR(comm_->Barrier());
  if (comm_->rank() != 0) return Status::Ok();
  Json merged = Json::array();
  for (int r = 0; r < comm_->size(); ++r) {
    const std::string rank_part = StrCat(path, ".rank-", r);
    ZG_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file, MappedFile::Open(rank_part));
    const std::span<const std::byte> bytes = file->bytes();
    ZG_ASSIGN_OR_RETURN(
        nlohmann::ordered_json part_events,
        ParseJson(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                  StrCat("the trace part '", rank_part, "'")));
    ZG_RETURN_IF_NOT(part_events.is_array(), "the trace part '", rank_part, "' is not an array");
    for (const nlohmann::ordered_json& event : part_events) merged.push_back(Json(event));
    std::filesystem::remove(rank_part);
  }
  ZG_RETURN_IF_ERROR(
      WriteFileAtomically(path, Json{{"traceEvents", merged}, {"displayTimeUnit", "ms"}}.dump()));
  return Status::Ok();
}

}  // namespace zerograph
