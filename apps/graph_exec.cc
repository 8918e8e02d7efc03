// graph-exec: trains a (rewritten) graph on every rank (mpirun -np N graph-exec ...), saving and
// resuming checkpoints, or runs a model once (--run-once).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_main.h"
#include "zerograph/ckpt/checkpoint.h"
#include "zerograph/core/output_path.h"
#include "zerograph/core/status.h"
#include "zerograph/ir/graph.h"
#include "zerograph/onnx/load_model.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/cuda.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/kernel_registry.h"
#include "zerograph/runtime/stream.h"
#include "zerograph/tools/op_listing.h"
#include "zerograph/tools/run_once.h"
#include "zerograph/train/lr_schedule.h"
#include "zerograph/train/trainer.h"
#include "zerograph/train/training_checkpoint.h"
#include "zerograph/train/training_graph_check.h"

namespace zerograph {
namespace {

struct GraphExecOptions {
  std::string graph;
  std::string data;
  int64_t steps = 0;
  int64_t batch = 0;  // 0: not given
  double lr = 1e-3;
  std::string lr_schedule = "constant";
  bool lr_schedule_given = false;  // --lr-schedule on the command line, not the default
  int64_t warmup_steps = 0;
  double warmup_start_lr = 0;
  std::optional<double> warmup_end_lr;  // default: --lr
  double min_lr = 0;
  std::string save_dir;
  int64_t save_every = 0;  // 0: save once, after the last step
  std::string save_format = "unbalanced";
  std::string load_dir;
  std::string trace;
  std::string loss_log;
  // Set in SetUpGraphExec: "cuda" when a GPU is visible, else "cpu".
  std::string device;
  // --run-once: run an inference model once on inputs from a folder (kernel checks).
  std::string run_once_model;
  std::string input_dir;
  std::string output_dir;
  bool list_ops = false;
  bool overwrite = false;
  bool no_progress = false;
  // Seconds a rank waits for the others in a collective before the job ends; 0: no limit.
  double timeout = 0;
};

void SetUpGraphExec(CLI::App& app, GraphExecOptions& options) {
  cli::SetUpCommon(app);
  app.add_option("GRAPH", options.graph, "Training graph to run (.onnx, usually rewritten)")
      ->check(CLI::ExistingFile);
  CLI::Option* data =
      app.add_option("--data", options.data, "Training data (safetensors, one tensor per input)")
          ->check(CLI::ExistingFile);
  CLI::Option* steps = app.add_option("--steps", options.steps, "Number of optimizer steps")
                           ->check(cli::AtLeast(1))
                           ->type_name("K");
  app.add_option(
         "--batch", options.batch,
         "Global batch size, split evenly across ranks; binds a graph's symbolic batch dimension")
      ->check(cli::AtLeast(1))
      ->type_name("B");
  app.add_option("--lr", options.lr, "Peak learning rate")
      ->check(cli::NonNegative())
      ->capture_default_str()
      ->type_name("F");
  CLI::Option* lr_schedule =
      app.add_option("--lr-schedule", options.lr_schedule,
                     "Learning-rate schedule; on resume, giving it allows another schedule than "
                     "the checkpoint's")
          ->check(CLI::IsMember({"constant", "linear-warmup", "cosine"}))
          ->capture_default_str();
  app.add_option("--warmup-steps", options.warmup_steps,
                 "Steps of linear warmup from 0 to --lr (linear-warmup, cosine)")
      ->check(cli::AtLeast(0))
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--warmup-start-lr", options.warmup_start_lr,
                 "Learning rate at step 0 of the warmup (LinearWarmup's start_lr)")
      ->check(cli::NonNegative())
      ->capture_default_str()
      ->type_name("F");
  app.add_option("--warmup-end-lr", options.warmup_end_lr,
                 "Learning rate the warmup reaches (LinearWarmup's end_lr; default --lr)")
      ->check(cli::NonNegative())
      ->type_name("F");
  app.add_option("--min-lr", options.min_lr, "Learning rate the cosine schedule decays to")
      ->check(cli::NonNegative())
      ->capture_default_str()
      ->type_name("F");
  CLI::Option* save =
      app.add_option(
             "--save", options.save_dir,
             "Write checkpoints into this folder (DIR/step-NNNNNN, DIR/latest names the newest)")
          ->type_name("DIR");
  app.add_option("--save-every", options.save_every,
                 "Save a checkpoint every S steps (and after the last one)")
      ->check(cli::AtLeast(1))
      ->needs(save)
      ->type_name("S");
  app.add_option("--save-format", options.save_format, "Checkpoint kind to write")
      ->check(CLI::IsMember({"unbalanced", "balanced"}))
      ->needs(save)
      ->capture_default_str();
  CLI::Option* load =
      app.add_option("--load", options.load_dir,
                     "Resume from this checkpoint (a checkpoint folder or a --save folder), "
                     "continuing at the step after it; --steps still counts from step 0")
          ->check(CLI::ExistingDirectory);
  CLI::Option* trace =
      app.add_option("--trace", options.trace, "Write a Chrome trace (one lane per stream)")
          ->type_name("FILE");
  app.add_option("--timeout", options.timeout,
                 "Seconds a rank waits for the others in a collective (a step's communication, "
                 "its loss, a save) before it names the ranks that did not arrive and ends the "
                 "job with exit 3; 0: wait forever. Longer than the slowest save or load")
      ->envname("ZG_TIMEOUT")
      ->check(cli::NonNegative())
      ->capture_default_str()
      ->type_name("SECONDS");
  app.add_flag("--no-progress", options.no_progress,
               "No progress bar (drawn on rank 0's stderr when it is a terminal)");
  app.add_flag("--overwrite", options.overwrite,
               "Let --save replace the checkpoints of another run already in its folder");
  CLI::Option* loss_log =
      app.add_option("--loss-log", options.loss_log, "Write each step's loss, with its exact bits")
          ->type_name("FILE");
  options.device = runtime::CudaDeviceCount() > 0 ? "cuda" : "cpu";
  app.add_option("--device", options.device,
                 StrCat("Where to run: cuda (one GPU per rank, NCCL) or cpu (MPI); the default is "
                        "cuda when a GPU is visible (here: ",
                        options.device, ")"))
      ->check(CLI::IsMember({"cpu", "cuda"}));
  CLI::Option* run_once =
      app.add_option("--run-once", options.run_once_model,
                     "Instead of training, run this model once on --input-dir, writing outputs to "
                     "--output-dir")
          ->check(CLI::ExistingFile)
          ->excludes(data, steps, save, load, trace, loss_log);
  CLI::Option* input_dir =
      app.add_option("--input-dir", options.input_dir, "Inputs for --run-once (one file each)")
          ->check(CLI::ExistingDirectory)
          ->needs(run_once);
  CLI::Option* output_dir =
      app.add_option("--output-dir", options.output_dir, "Where --run-once writes its outputs")
          ->needs(run_once)
          ->type_name("DIR");
  run_once->needs(input_dir, output_dir);
  app.add_flag("--list-ops", options.list_ops,
               "Print the ops this build runs, with their opset versions and dtypes, and exit");

  // Which options are required depends on the mode, which CLI11 cannot say by itself.
  app.callback([&options, run_once, lr_schedule] {
    options.lr_schedule_given = lr_schedule->count() > 0;
    if (options.list_ops) return;
    if (run_once->count() > 0) {
      if (!options.graph.empty()) throw CLI::ExcludesError("GRAPH", "--run-once");
      return;
    }
    if (options.graph.empty()) throw CLI::RequiredError("GRAPH");
    if (options.data.empty()) throw CLI::RequiredError("--data");
    if (options.steps == 0) throw CLI::RequiredError("--steps");
  });
}

// Every rank reports whether its setup worked before anything collective runs, so a rank that
// failed (a missing file, a graph made for another rank count) makes all ranks stop with the same
// exit code instead of leaving the others waiting in a collective. Only the lowest failing rank
// prints its error (usually every rank has the same one), naming the others that failed; the rest
// exit silently with the exit code of the failure.
Status AgreeOnSetup(const Status& setup, runtime::Communicator& comm, runtime::Device& device) {
  if (comm.size() == 1) return setup;
  const size_t nranks = static_cast<size_t>(comm.size());
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Stream> stream, device.CreateStream("setup"));
  ZG_ASSIGN_OR_RETURN(
      runtime::DeviceTensor codes,
      runtime::DeviceTensor::Allocate(device, DataType::kInt64, {static_cast<int64_t>(nranks)}));
  // Each rank's exit code at its own index, summed: every rank learns every rank's code.
  std::vector<int64_t> all(nranks, 0);
  all[static_cast<size_t>(comm.rank())] = setup.ExitCode();
  ZG_RETURN_IF_ERROR(device.CopyFromHost(std::as_bytes(std::span<const int64_t>(all)), codes));
  ZG_RETURN_IF_ERROR(comm.AllReduce(codes, codes, runtime::ReduceOp::kSum, *stream));
  ZG_RETURN_IF_ERROR(stream->Synchronize());
  ZG_RETURN_IF_ERROR(device.CopyToHost(codes, std::as_writable_bytes(std::span<int64_t>(all))));
  std::vector<size_t> failed;
  for (size_t r = 0; r < nranks; ++r) {
    if (all[r] != kExitOk) failed.push_back(r);
  }
  if (failed.empty()) return Status::Ok();
  const size_t lowest = failed.front();
  const bool bad_input = all[lowest] == kExitBadInput;
  if (static_cast<size_t>(comm.rank()) != lowest) {
    return bad_input ? InvalidArgumentError("") : UnavailableError("");  // printed by `lowest`
  }
  if (failed.size() == nranks) return setup;  // every rank failed: one message stands for all
  return Status(setup.code(),
                StrCat("rank ", lowest, ": ", setup.message(), " (failed on rank",
                       failed.size() > 1 ? "s " : " ", StrJoin(failed, ", "), " of ", nranks, ")"));
}

StatusOr<LrSchedule> MakeSchedule(const GraphExecOptions& options) {
  LrSchedule schedule;
  ZG_ASSIGN_OR_RETURN(schedule.kind, ParseLrScheduleKind(options.lr_schedule));
  schedule.lr = options.lr;
  schedule.warmup_steps = options.warmup_steps;
  schedule.start_lr = options.warmup_start_lr;
  schedule.end_lr = options.warmup_end_lr.value_or(options.lr);
  schedule.total_steps = options.steps;
  schedule.min_lr = options.min_lr;
  ZG_RETURN_IF_NOT(schedule.kind == LrSchedule::Kind::kConstant || schedule.warmup_steps > 0 ||
                       schedule.kind == LrSchedule::Kind::kCosine,
                   "--lr-schedule linear-warmup needs --warmup-steps of at least 1");
  return schedule;
}

// Where the ranks run and how they talk. Members are destroyed in reverse order: the communicator
// before the device it works on.
struct Backend {
  std::unique_ptr<runtime::JobRanks> ranks;  // CUDA only
  std::unique_ptr<runtime::Device> device;
  std::unique_ptr<runtime::Communicator> comm;
  runtime::KernelRegistry registry;
};

// CPU: MPI (or one rank) and the CPU kernels. CUDA: the GPU of this rank's place on its machine,
// NCCL, and the CUDA kernels beside the CPU ones.
// `timeout` (seconds, 0: the default) bounds NCCL's waits; MPI's is set before training.
StatusOr<Backend> MakeBackend(std::string_view device_name, double timeout) {
  Backend backend;
  ZG_RETURN_IF_ERROR(runtime::RegisterCpuKernels(backend.registry));
  if (device_name == "cpu") {
    ZG_ASSIGN_OR_RETURN(backend.comm, runtime::CreateWorldCommunicator());
    backend.device = runtime::CreateCpuDevice();
    return backend;
  }
  if (!runtime::CudaBackendBuilt()) {
    return UnavailableError(
        "--device cuda: this graph-exec was built without the CUDA backend (rebuild with a CUDA "
        "toolkit and NCCL, see cmake/cuda.cmake), or run with --device cpu");
  }
  const int gpus = runtime::CudaDeviceCount();
  if (gpus == 0) {
    return UnavailableError(
        "--device cuda: no CUDA GPU is visible to this process (no GPU, no CUDA driver, or "
        "CUDA_VISIBLE_DEVICES hides them); run with --device cpu");
  }
  ZG_ASSIGN_OR_RETURN(backend.ranks, runtime::JobRanks::Discover());
  const runtime::JobRanks& ranks = *backend.ranks;
  Status opened = [&]() -> Status {
    if (ranks.local_rank() >= gpus) {
      return UnavailableError(StrCat("--device cuda: rank ", ranks.rank(), " is rank ",
                                     ranks.local_rank(), " of ", ranks.local_size(),
                                     " on its machine, which has ", gpus,
                                     " GPU(s): launch at most one rank per GPU"));
    }
    ZG_ASSIGN_OR_RETURN(backend.device, runtime::CreateCudaDevice(ranks.local_rank()));
    runtime::NcclCommunicatorOptions nccl;
    // NCCL's watchdog counts whole seconds.
    if (timeout > 0) nccl.timeout = std::chrono::seconds(static_cast<int64_t>(std::ceil(timeout)));
    ZG_ASSIGN_OR_RETURN(backend.comm,
                        runtime::CreateNcclCommunicator(*backend.device, ranks, nccl));
#if ZG_WITH_CUDA
    ZG_RETURN_IF_ERROR(runtime::RegisterCudaKernels(backend.registry));
#endif
    return Status::Ok();
  }();
  if (!opened.ok() && ranks.size() > 1) {
    // The other ranks may be waiting for this one to join NCCL.
    const std::string line = StrCat("error: rank ", ranks.rank(), ": ", opened.message(), "\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
    ranks.Abort(opened.ExitCode());
  }
  ZG_RETURN_IF_ERROR(opened);
  return backend;
}

// Whether `folder` holds checkpoints of a --save: a `latest` file, or step folders.
bool HoldsCheckpoints(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::exists(fs::path(folder) / "latest", error)) return true;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    if (entry.path().filename().string().starts_with("step-")) return true;
  }
  return false;
}

// Every output path, before anything runs (so a long run never ends unable to write its
// result), and a --save folder that already holds checkpoints: those are kept unless this run
// continues them (--load names that folder or a checkpoint in it) or --overwrite says to replace
// them.
Status CheckOutputs(const GraphExecOptions& options) {
  namespace fs = std::filesystem;
  const std::string inputs[] = {options.graph, options.data};
  if (!options.trace.empty()) {
    ZG_RETURN_IF_ERROR(CheckOutputPath("--trace", options.trace, OutputKind::kFile, inputs));
  }
  if (!options.loss_log.empty()) {
    ZG_RETURN_IF_ERROR(CheckOutputPath("--loss-log", options.loss_log, OutputKind::kFile, inputs));
  }
  if (options.save_dir.empty()) return Status::Ok();
  ZG_RETURN_IF_ERROR(CheckOutputPath("--save", options.save_dir, OutputKind::kFolder, inputs));
  if (options.overwrite || !fs::exists(options.save_dir) || !HoldsCheckpoints(options.save_dir)) {
    return Status::Ok();
  }
  std::error_code error;
  if (!options.load_dir.empty()) {
    const fs::path load = fs::weakly_canonical(options.load_dir, error);
    const fs::path save = fs::weakly_canonical(options.save_dir, error);
    if (load == save || load.parent_path() == save) return Status::Ok();
  }
  return InvalidArgumentError(
      StrCat("--save '", options.save_dir,
             "' already holds checkpoints of a run: continue it with --load ", options.save_dir,
             ", save elsewhere, or pass --overwrite to replace them"));
}

// SIGINT and SIGTERM ask training to stop at the next step boundary (saving when --save is set);
// a second one ends the process at once, as if there were no handler.
volatile std::sig_atomic_t g_stop_signal = 0;

void RequestStop(int signal) {
  if (g_stop_signal != 0) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_stop_signal = signal;
}

// Installs RequestStop for SIGINT and SIGTERM while training runs.
class StopSignalHandlers {
 public:
  StopSignalHandlers() {
    struct sigaction action = {};
    action.sa_handler = RequestStop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~StopSignalHandlers() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }
  StopSignalHandlers(const StopSignalHandlers&) = delete;
  StopSignalHandlers& operator=(const StopSignalHandlers&) = delete;

 private:
  struct sigaction previous_int_ = {};
  struct sigaction previous_term_ = {};
};

StatusOr<int> Train(const GraphExecOptions& options) {
  ZG_ASSIGN_OR_RETURN(Backend backend, MakeBackend(options.device, options.timeout));
  std::unique_ptr<runtime::Communicator>& comm = backend.comm;
  std::unique_ptr<runtime::Device>& device = backend.device;
  const runtime::KernelRegistry& registry = backend.registry;

  std::unique_ptr<Graph> graph;
  std::unique_ptr<Trainer> trainer;
  LrSchedule schedule;
  StateModel state_model;
  TrainingState state;
  int64_t first_step = 0;
  std::string resumed_from;
  std::string previous_schedule;  // the checkpoint's, when this run changes it
  Status setup = [&]() -> Status {
    ZG_RETURN_IF_ERROR(CheckOutputs(options));
    ZG_ASSIGN_OR_RETURN(schedule, MakeSchedule(options));
    ZG_ASSIGN_OR_RETURN(graph, LoadModel(options.graph));
    ZG_RETURN_IF_ERROR(CheckTrainingGraph(*graph, registry, device->type()));
    ZG_ASSIGN_OR_RETURN(trainer, Trainer::Create(*graph, options.data, *device, *comm, registry,
                                                 /*trace=*/!options.trace.empty(), options.batch));
    const Dataset& data = trainer->dataset();
    ZG_RETURN_IF_NOT(options.batch == 0 || options.batch == data.global_batch(), "--batch ",
                     options.batch, " does not fit the graph: it takes ", data.rows_per_rank(),
                     " rows per rank, so ", comm->size(), " rank(s) take a global batch of ",
                     data.global_batch(),
                     "; for another global batch, generate the graph with --batch set to the "
                     "rows per rank");
    if (options.save_dir.empty() && options.load_dir.empty()) return Status::Ok();
    ZG_ASSIGN_OR_RETURN(state_model, StateModel::FromGraph(*graph));
    state = {&state_model, &trainer->executor(), comm.get(), device.get()};
    if (options.load_dir.empty()) return Status::Ok();
    // Training continues at the step after the saved one: the data position and the learning
    // rate are pure functions of the step.
    ZG_ASSIGN_OR_RETURN(resumed_from, ResolveCheckpointDir(options.load_dir));
    ZG_ASSIGN_OR_RETURN(CheckpointManifest manifest,
                        LoadCheckpoint(state, resumed_from, options.graph, data.rows_per_rank()));
    first_step = manifest.next_step;
    if (!manifest.lr_schedule.empty() && manifest.lr_schedule != schedule.ToString()) {
      ZG_RETURN_IF_NOT(options.lr_schedule_given, "checkpoint '", resumed_from,
                       "' was trained with learning rate ", manifest.lr_schedule,
                       ", this run's is ", schedule.ToString(),
                       ": give the options of the checkpoint's schedule, or --lr-schedule "
                       "explicitly to change it");
      previous_schedule = manifest.lr_schedule;
    }
    return Status::Ok();
  }();
  ZG_RETURN_IF_ERROR(AgreeOnSetup(setup, *comm, *device));

  const bool rank0 = comm->rank() == 0;
  if (rank0) {
    const runtime::MemoryReport& memory = trainer->executor().memory();
    std::cout << "graph-exec: " << options.graph << " on " << comm->size() << " rank(s) ("
              << comm->backend_name() << "), global batch " << trainer->dataset().global_batch()
              << ", " << options.steps << " steps, lr " << schedule.ToString()
              << ", planned memory " << memory.total() << " bytes per rank\n";
  }
  if (rank0 && !resumed_from.empty()) {
    std::cout << "resumed from " << resumed_from << " at step " << first_step << "\n";
    if (!previous_schedule.empty()) {
      std::cout << "learning rate changed from the checkpoint's " << previous_schedule << " to "
                << schedule.ToString() << "\n";
    }
  }
  if (first_step >= options.steps) {
    if (rank0) {
      std::cout << "nothing to do: checkpoint " << resumed_from << " already ran " << first_step
                << " steps, and --steps asks for " << options.steps << "\n";
    }
    return kExitOk;
  }
  TrainOptions train;
  // --steps counts from step 0, so a resumed run ends where the uninterrupted one would.
  train.first_step = first_step;
  train.steps = options.steps - train.first_step;
  train.schedule = schedule;
  train.loss_log = options.loss_log;
  train.trace = options.trace;
  train.out = rank0 ? &std::cout : nullptr;
  train.progress = !options.no_progress;
  if (!options.save_dir.empty()) {
    SaveCheckpointOptions save;
    save.root = options.save_dir;
    ZG_ASSIGN_OR_RETURN(save.kind, ParseCheckpointKind(options.save_format));
    save.global_batch = trainer->dataset().global_batch();
    save.lr_schedule = schedule.ToString();
    // After steps S-1, 2S-1, ... (S steps done each time) and after the last step.
    train.after_step = [&, save](int64_t step, bool stopping) mutable -> Status {
      const bool last = step + 1 == options.steps || stopping;
      if (!last && (options.save_every == 0 || (step + 1) % options.save_every != 0)) {
        return Status::Ok();
      }
      save.step = step;
      ZG_ASSIGN_OR_RETURN(std::string saved, SaveCheckpoint(state, save));
      if (rank0) std::cout << "saved checkpoint " << saved << "\n" << std::flush;
      return Status::Ok();
    };
  }
  train.stop_signal = [] { return static_cast<int>(g_stop_signal); };
  const StopSignalHandlers stop_handlers;
  // Set for training only: setup waits on loads whose time the user does not choose.
  comm->SetTimeout(std::chrono::milliseconds(static_cast<int64_t>(options.timeout * 1000)));
  StatusOr<std::vector<StepResult>> result = trainer->Train(train);
  if (const int signal = trainer->stopped_by_signal(); result.ok() && signal != 0) {
    if (rank0) {
      std::cout << "stopped by " << (signal == SIGINT ? "SIGINT" : "SIGTERM") << " after step "
                << result->back().step
                << (options.save_dir.empty() ? "" : " (the checkpoint above holds it)") << "\n"
                << std::flush;
    }
    return 128 + signal;  // a shell's exit code for a process ended by that signal
  }
  // A diverged loss is seen by every rank at once: no rank waits for another.
  if (!result.ok() && comm->size() > 1 && result.status().code() != StatusCode::kAborted) {
    // Other ranks may be waiting in a collective this rank will never join.
    const std::string line =
        StrCat("error: rank ", comm->rank(), ": ", result.status().message(), "\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
    comm->Abort(result.status().ExitCode());
  }
  if (!result.ok()) return result.status();
  return kExitOk;
}

StatusOr<int> RunGraphExec(const GraphExecOptions& options) {
  if (options.list_ops) {
    ZG_ASSIGN_OR_RETURN(std::string listing, runtime::ListSupportedOps());
    std::cout << listing;
    return kExitOk;
  }
  if (!options.run_once_model.empty()) {
    const std::string inputs[] = {options.run_once_model, options.input_dir};
    ZG_RETURN_IF_ERROR(
        CheckOutputPath("--output-dir", options.output_dir, OutputKind::kFolder, inputs));
    ZG_RETURN_IF_ERROR(
        runtime::RunOnce(options.run_once_model, options.input_dir, options.output_dir));
    return kExitOk;
  }
  return Train(options);
}

}  // namespace
}  // namespace zerograph

int main(int argc, char** argv) {
  CLI::App app(
      "Runs a training graph for K steps on every rank (launch N ranks with mpirun -np N), "
      "saving and loading sharded checkpoints.",
      "graph-exec");
  zerograph::GraphExecOptions options;
  zerograph::SetUpGraphExec(app, options);
  if (auto exit_code = zerograph::cli::ParseCommandLine(app, argc, argv)) return *exit_code;
  return zerograph::cli::RunAndExitWithCode([&] { return zerograph::RunGraphExec(options); });
}
