#include "zerograph/ir/name_index.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "zerograph/core/str_cat.h"

namespace zerograph {
namespace {

struct Item {
  std::string text;
  std::string_view name() const { return text; }
  uint64_t name_hash_ = 0;
};

// Find, Insert and Erase agree with std::unordered_map over a long random sequence, growth and
// backward-shift deletion included.
TEST(NameIndexTest, AgreesWithUnorderedMap) {
  std::deque<Item> items;
  for (int i = 0; i < 5000; ++i) items.push_back({StrCat("value.", i)});
  NameIndex<Item> index;
  std::unordered_map<std::string_view, Item*> reference;
  std::mt19937 random(7);
  for (int step = 0; step < 60000; ++step) {
    Item& item = items[random() % items.size()];
    switch (random() % 3) {
      case 0: {
        auto [holder, inserted] = index.Insert(&item);
        auto [it, expected] = reference.emplace(item.name(), &item);
        ASSERT_EQ(inserted, expected);
        ASSERT_EQ(holder, it->second);
        break;
      }
      case 1:
        // Names are distinct here: the item is in the index exactly when its name is.
        ASSERT_EQ(index.Erase(&item), reference.erase(item.name()) > 0);
        break;
      default: {
        auto it = reference.find(item.name());
        ASSERT_EQ(index.Find(item.name()), it == reference.end() ? nullptr : it->second);
      }
    }
    ASSERT_EQ(index.size(), reference.size());
  }
}

// A second item of the same name is refused and the first one kept.
TEST(NameIndexTest, InsertKeepsTheFirstItemOfAName) {
  Item first{"x"}, second{"x"};
  NameIndex<Item> index;
  EXPECT_TRUE(index.Insert(&first).second);
  auto [holder, inserted] = index.Insert(&second);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(holder, &first);
  EXPECT_EQ(index.Find("x"), &first);
  EXPECT_EQ(index.Find("y"), nullptr);
  // Erasing goes by item: the refused one is not there, and the first stays.
  EXPECT_FALSE(index.Erase(&second));
  EXPECT_EQ(index.Find("x"), &first);
  EXPECT_TRUE(index.Erase(&first));
  EXPECT_EQ(index.Find("x"), nullptr);
}

// FindManyAsFiled finds each filed item from the hash kept in it, across chunk boundaries, as Find
// finds it by name; an item of a taken name, never filed, does not find itself.
TEST(NameIndexTest, FindManyAsFiledFindsWhatFindFinds) {
  std::deque<Item> items;
  NameIndex<Item> index;
  for (int i = 0; i < 3000; ++i) {
    items.push_back({StrCat("n", i)});
    index.Insert(&items.back());
  }
  Item twin{"n17"};
  EXPECT_FALSE(index.Insert(&twin).second);
  std::vector<const Item*> queries;
  for (const Item& item : items) queries.push_back(&item);
  queries.push_back(&twin);
  std::vector<Item*> found(queries.size());
  index.FindManyAsFiled(queries, found);
  for (size_t i = 0; i < items.size(); ++i) {
    ASSERT_EQ(found[i], index.Find(items[i].name())) << i;
    ASSERT_EQ(found[i], &items[i]) << i;
  }
  EXPECT_NE(found.back(), &twin);
}

// FindMany answers as Find does, across chunk boundaries, for present and absent names.
TEST(NameIndexTest, FindManyMatchesFind) {
  std::deque<Item> items;
  NameIndex<Item> index;
  index.Reserve(3000);
  for (int i = 0; i < 3000; ++i) {
    items.push_back({StrCat("n", i)});
    index.Insert(&items.back());
  }
  std::vector<std::string> queries;
  for (int i = 0; i < 2 * static_cast<int>(NameIndex<Item>::kBulkChunk) + 17; ++i) {
    queries.push_back(StrCat("n", (i * 7919) % 4000));  // about a quarter absent
  }
  std::vector<std::string_view> names(queries.begin(), queries.end());
  std::vector<Item*> found(names.size());
  index.FindMany(names, found);
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(found[i], index.Find(names[i])) << names[i];
}

// A slot keeps only the top 16 bits of a hash: two names that share them, and share their home
// slot in a small index (the hash's low 4 bits), are still told apart by their names, found,
// erased and shifted back as their own.
TEST(NameIndexTest, NamesSharingTheSlotsHashBitsStayApart) {
  constexpr uint64_t kKeptBits = (~uint64_t{0} << 48) | 0xF;
  std::unordered_map<uint64_t, std::string> seen;
  std::string first, second;
  for (int i = 0; second.empty(); ++i) {
    ASSERT_LT(i, 1 << 22) << "no two names share the bits; the test's search is too short";
    std::string name = StrCat("param.", i);
    auto [it, inserted] = seen.emplace(NameIndex<Item>::Hash(name) & kKeptBits, name);
    if (!inserted) {
      first = it->second;
      second = name;
    }
  }
  Item a{first}, b{second}, c{"other"};
  NameIndex<Item> index;
  ASSERT_TRUE(index.Insert(&a).second);
  ASSERT_TRUE(index.Insert(&b).second);
  ASSERT_TRUE(index.Insert(&c).second);
  EXPECT_EQ(index.Find(first), &a);
  EXPECT_EQ(index.Find(second), &b);
  EXPECT_EQ(index.Find(StrCat(first, "x")), nullptr);
  // b sits after a in their run; erasing a shifts b back, where it must still be found.
  EXPECT_TRUE(index.Erase(&a));
  EXPECT_EQ(index.Find(first), nullptr);
  EXPECT_EQ(index.Find(second), &b);
  EXPECT_EQ(index.Find("other"), &c);
}

// An empty index finds nothing, in bulk too.
TEST(NameIndexTest, EmptyIndexFindsNothing) {
  NameIndex<Item> index;
  Item x{"x"};
  EXPECT_EQ(index.Find("x"), nullptr);
  EXPECT_FALSE(index.Erase(&x));
  std::vector<std::string_view> names = {"x", "y"};
  std::vector<Item*> found(2, reinterpret_cast<Item*>(1));
  index.FindMany(names, found);
  EXPECT_EQ(found, (std::vector<Item*>{nullptr, nullptr}));
}

}  // namespace
}  // namespace zerograph
