#ifndef ZEROGRAPH_IR_LINK_FOLLOWER_H_
#define ZEROGRAPH_IR_LINK_FOLLOWER_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "zerograph/core/status.h"

namespace zerograph {

class Node;

// For loaders: checks nodes on a thread of its own while the graph links the later ones
// (Graph::FromModelProto tells it what is linked). Loading a large model ends with the linking
// thread alone, the parser's threads done, for about half a second at 1M nodes: a check of each
// node by itself (its op contract) fits beside it there instead of after loading.
//
// The thread starts once the parser is done, so that it does not take the linking thread's core
// from the parser's, or else at the end of linking. Join checks on the caller's thread what the
// follower has not taken by then: everything, where no thread could be had.
class LinkFollower {
 public:
  // Checks a run of nodes, in the order they were linked, and returns its first error.
  using Check = std::function<Status(std::span<const Node* const>)>;

  explicit LinkFollower(Check check);
  LinkFollower(const LinkFollower&) = delete;
  LinkFollower& operator=(const LinkFollower&) = delete;
  // Stops (see Stop).
  ~LinkFollower();

  // From the linking thread: `nodes` are linked and stay as they are until Join. `parsed_all`:
  // every node is parsed, so a core is free.
  void Linked(std::span<Node* const> nodes, bool parsed_all);
  // From the linking thread: every node is linked.
  void Finish();
  // Drops what is not checked yet and waits for the thread (a failed load frees the nodes next).
  void Stop();
  // Waits until every linked node is checked; returns the first error in link order.
  Status Join();

 private:
  void Start();
  // Takes and checks runs until none is left and linking is finished, or the follower is stopped
  // (on the follower's thread, and on Join's beside it).
  void CheckUntilDone(std::unique_lock<std::mutex>& lock);

  const Check check_;
  std::mutex mutex_;  // guards what follows, up to started_
  std::condition_variable linked_;
  std::vector<const Node*> unchecked_;  // linked, not taken yet
  size_t taken_ = 0;                    // nodes taken: where unchecked_ starts in link order
  Status error_;                        // the first error of a run, and where that run starts
  size_t error_at_ = SIZE_MAX;
  bool finished_ = false;
  bool stopped_ = false;
  bool started_ = false;  // only the linking thread reads and writes it
  std::thread thread_;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_LINK_FOLLOWER_H_
