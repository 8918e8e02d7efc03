// MpiCommunicator's timeout: collectives that give up when a rank does not arrive.
//
// Why non-blocking collectives polled against a deadline, not a watchdog thread: a blocking MPI
// call can be neither bounded nor cancelled, and under MPI_THREAD_SERIALIZED another thread may
// not call MPI while this one is inside it, so a watchdog could only kill the process without
// learning anything. Polling keeps every MPI call on the communication thread and, when the time
// is up, lets that thread find out who is missing, on a communicator of its own:
//   - each rank announces every collective it begins to every other rank, so a rank that never
//     began this one is one whose announcement did not come ("did not reach");
//   - a rank that began it but stopped (SIGSTOP, a debugger, a hung thread) is found by asking:
//     waiting ranks answer questions while they poll, a stopped one cannot ("stopped answering").
// The waiting rank returns Unavailable; graph-exec then calls MPI_Abort, which ends every rank.
#if ZG_WITH_MPI

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "runtime/comm/mpi_communicator.h"

namespace zerograph::runtime {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kAnnounceTag = 7302;
constexpr int kQuestionTag = 7303;
constexpr int kAnswerTag = 7304;
// A wait polls without sleeping (each poll yields the core, as Open MPI's blocking waits do here)
// for its first kSpinTime, then sleeps kSleep between polls, so that a long wait costs little CPU
// and the deadline is met within about 1 ms. Why so long a spin: on a
// loaded machine a thread that sleeps waits for a core when it wakes, so a short spin made the
// ring's many small exchanges 100x slower (comm_mpi_test with 40-byte pieces: 113 s against
// 1.3 s with 100 ms).
constexpr auto kSpinTime = std::chrono::milliseconds(100);
constexpr auto kSleep = std::chrono::microseconds(1000);
// How long the ranks asked have to answer once the timeout has passed.
constexpr auto kAnswerTime = std::chrono::seconds(1);

}  // namespace

Status MpiCommunicator::Send(int peer, int tag, uint64_t number) {
  // Sent messages are done with; those to a rank that stopped stay until the job ends.
  while (!sent_.empty()) {
    int done = 0;
    ZG_MPI_CHECK(rank(), MPI_Test(&sent_.front().request, &done, MPI_STATUS_IGNORE));
    if (!done) break;
    sent_.pop_front();
  }
  SentMessage& sent = sent_.emplace_back();
  sent.number = number;
  ZG_MPI_CHECK(rank(),
               MPI_Isend(&sent.number, 1, MPI_UINT64_T, peer, tag, presence_, &sent.request));
  return Status::Ok();
}

Status MpiCommunicator::Announce() {
  ++began_;
  for (int peer = 0; peer < size(); ++peer) {
    if (peer != rank()) ZG_RETURN_IF_ERROR(Send(peer, kAnnounceTag, began_));
  }
  return ReadMessages();
}

Status MpiCommunicator::ReadMessages() {
  heard_.resize(static_cast<size_t>(size()), 0);
  answered_.resize(static_cast<size_t>(size()), 0);
  while (true) {
    int arrived = 0;
    MPI_Status status;
    ZG_MPI_CHECK(rank(), MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, presence_, &arrived, &status));
    if (!arrived) return Status::Ok();
    uint64_t number = 0;
    ZG_MPI_CHECK(rank(), MPI_Recv(&number, 1, MPI_UINT64_T, status.MPI_SOURCE, status.MPI_TAG,
                                  presence_, MPI_STATUS_IGNORE));
    const auto peer = static_cast<size_t>(status.MPI_SOURCE);
    if (status.MPI_TAG == kAnnounceTag) heard_[peer] = std::max(heard_[peer], number);
    if (status.MPI_TAG == kAnswerTag) answered_[peer] = std::max(answered_[peer], number);
    if (status.MPI_TAG == kQuestionTag) {
      ZG_RETURN_IF_ERROR(Send(status.MPI_SOURCE, kAnswerTag, number));
    }
  }
}

Status MpiCommunicator::Wait(std::span<MPI_Request> requests, std::string_view collective) {
  const auto start = Clock::now();
  auto last_poll = start;
  auto longest_gap = Clock::duration::zero();
  while (true) {
    int done = 0;
    ZG_MPI_CHECK(rank(), MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                                     MPI_STATUSES_IGNORE));
    if (done) return Status::Ok();
    const auto now = Clock::now();
    longest_gap = std::max(longest_gap, now - last_poll);
    last_poll = now;
    if (now - start >= timeout()) break;
    if (now - start >= kSpinTime) {
      ZG_RETURN_IF_ERROR(ReadMessages());  // answer the ranks that are waiting too
      std::this_thread::sleep_for(kSleep);
    }
  }
  const double seconds = std::chrono::duration<double>(timeout()).count();
  const std::string what =
      StrCat(CollectiveLabel(collective), " within ", seconds, " s (--timeout)");
  // A process stopped while it waited finds its own time up when it resumes: it is the one at
  // fault, not the others.
  if (longest_gap >= timeout() / 2) {
    return UnavailableError(StrCat("this rank was itself suspended for ",
                                   std::chrono::duration<double>(longest_gap).count(),
                                   " s while it waited: ", CollectiveLabel(collective),
                                   " did not complete within ", seconds, " s (--timeout)"));
  }

  // Who never began it, and who began it but does not answer.
  ++questions_;
  for (int peer = 0; peer < size(); ++peer) {
    if (peer != rank()) ZG_RETURN_IF_ERROR(Send(peer, kQuestionTag, questions_));
  }
  std::vector<int> missing;
  std::vector<int> silent;
  const auto answer_deadline = Clock::now() + kAnswerTime;
  while (true) {
    ZG_RETURN_IF_ERROR(ReadMessages());
    missing.clear();
    silent.clear();
    for (int peer = 0; peer < size(); ++peer) {
      const auto p = static_cast<size_t>(peer);
      if (peer == rank()) continue;
      if (heard_[p] < began_) missing.push_back(peer);
      if (heard_[p] >= began_ && answered_[p] < questions_) silent.push_back(peer);
    }
    if (silent.empty() || Clock::now() >= answer_deadline) break;
    std::this_thread::sleep_for(kSleep);
  }
  const std::string label = CollectiveLabel(collective);
  const std::string limit = StrCat(" within ", seconds, " s (--timeout)");
  std::vector<std::string> parts;
  if (!missing.empty()) parts.push_back(StrCat(RankList(missing), " did not reach ", label, limit));
  if (!silent.empty()) {
    parts.push_back(StrCat(RankList(silent), " began ", label,
                           " but stopped answering (stopped or hung); it did not complete", limit));
  }
  if (parts.empty()) {
    parts.push_back(
        StrCat("every rank began ", label, " and answers, but it did not complete", limit));
  }
  const std::string message = StrJoin(parts, "; ");
  return UnavailableError(message);
}

}  // namespace zerograph::runtime

#endif  // ZG_WITH_MPI
