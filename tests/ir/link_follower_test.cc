#include "zerograph/ir/link_follower.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/graph.h"

namespace zerograph {
namespace {

TensorType Float(std::vector<int64_t> dims) { return TensorType{DataType::kFloat32, dims}; }

// A graph of `count` Relu nodes n0, n1, ..., handed to followers a run at a time as if linked.
class LinkFollowerTest : public ::testing::Test {
 protected:
  void MakeNodes(int count) {
    Value* x = graph_.AddInput("x", Float({4}));
    for (int i = 0; i < count; ++i) {
      nodes_.push_back(graph_.AddNode("Relu", "", {x}, {StrCat("y", i)}, StrCat("n", i)));
    }
  }
  // Hands nodes [begin, end) to `follower`.
  void Link(LinkFollower& follower, size_t begin, size_t end, bool parsed_all) {
    follower.Linked(std::span(nodes_).subspan(begin, end - begin), parsed_all);
  }

  Graph graph_;
  std::vector<Node*> nodes_;
};

// Every node is checked once, in runs that follow the link order, whether the thread starts while
// nodes are linked, only at the end, or Join takes what is left.
TEST_F(LinkFollowerTest, ChecksEveryNodeOnceInRunsOfLinkOrder) {
  MakeNodes(5000);
  for (const size_t parsed_at : {size_t{0}, size_t{2000}, size_t{5000}}) {
    std::mutex mutex;
    std::vector<std::vector<const Node*>> runs;
    LinkFollower follower([&](std::span<const Node* const> run) {
      std::lock_guard<std::mutex> lock(mutex);
      runs.emplace_back(run.begin(), run.end());
      return Status::Ok();
    });
    for (size_t begin = 0; begin < nodes_.size(); begin += 500) {
      Link(follower, begin, begin + 500, begin >= parsed_at);
    }
    follower.Finish();
    ASSERT_TRUE(follower.Join().ok());
    std::sort(runs.begin(), runs.end(),
              [](const auto& a, const auto& b) { return a.front()->id() < b.front()->id(); });
    std::vector<const Node*> checked;
    for (const std::vector<const Node*>& run : runs)
      checked.insert(checked.end(), run.begin(), run.end());
    EXPECT_EQ(checked, std::vector<const Node*>(nodes_.begin(), nodes_.end())) << parsed_at;
  }
}

// The first error in link order is the one returned, though a later run failed first: the
// follower's run holds the earlier fault and is slow, and Join's run, checked beside it, fails at
// once.
TEST_F(LinkFollowerTest, ReturnsTheFirstErrorInLinkOrder) {
  MakeNodes(2000);
  LinkFollower follower([](std::span<const Node* const> run) {
    for (const Node* node : run) {
      if (node->name() == "n100") {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return InvalidArgumentError("n100 is at fault");
      }
      if (node->name() == "n1500") return InvalidArgumentError("n1500 is at fault");
    }
    return Status::Ok();
  });
  Link(follower, 0, 1000, /*parsed_all=*/true);  // the thread starts and takes this run
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Link(follower, 1000, 2000, /*parsed_all=*/true);
  follower.Finish();
  const Status status = follower.Join();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "n100 is at fault");
}

// A failed load stops the follower: what it has not taken is not checked, and nothing waits.
TEST_F(LinkFollowerTest, StopDropsWhatIsNotTaken) {
  MakeNodes(1000);
  std::mutex mutex;
  size_t checked = 0;
  {
    LinkFollower follower([&](std::span<const Node* const> run) {
      std::lock_guard<std::mutex> lock(mutex);
      checked += run.size();
      return Status::Ok();
    });
    Link(follower, 0, 1000, /*parsed_all=*/false);  // not started: the parser is not done
    follower.Stop();
  }
  EXPECT_EQ(checked, 0u);
}

}  // namespace
}  // namespace zerograph
