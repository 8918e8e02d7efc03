#ifndef ZEROGRAPH_IR_NAME_INDEX_H_
#define ZEROGRAPH_IR_NAME_INDEX_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "zerograph/core/status.h"

namespace zerograph {

// Finds graph items (values, nodes) by name: an open-addressing table with linear probing over
// 8-byte slots, each the item's address with 16 bits of its name's hash above it, the key being
// the item's own `name()`. Each item has a `name_hash_` field for the index to keep its hash in.
//
// Why not std::unordered_map: loading a 1M-node graph does millions of name lookups, and a
// node-based map costs several dependent cache misses per lookup (bucket, node, key) plus a
// modulo by a prime. Here a lookup reads one slot (its neighbours share the cache line), compares
// the hash bits, and only on a match reads the item's name. The table holds no strings: names
// live in the graph, which outlives the index.
//
// Why the hash bits share the slot with the address: a slot of {hash, address} is 16 bytes, and
// the two indexes of a 1M-node graph are then 96 MB, every page of it written and probed at
// random. User-space addresses on the 64-bit targets we build for (x86-64, AArch64) fit in 48
// bits (Insert checks), so the 16 bits above hold enough of the hash to tell names apart before
// reading one: a false match costs one name compare in 65536. The full hash, which the slot's
// position follows, stays in the item (`name_hash_`), and growing or erasing reads it there.
template <typename T>
class NameIndex {
 public:
  NameIndex() = default;
  NameIndex(const NameIndex&) = delete;
  NameIndex& operator=(const NameIndex&) = delete;

  size_t size() const { return size_; }

  // Makes room for `count` names without growing.
  void Reserve(size_t count) {
    if (count * kMaxLoadDen > slots_.size() * kMaxLoadNum) Rehash(CapacityFor(count));
  }

  // The hash an item called `name` is filed under; the overloads that take it save hashing twice.
  static uint64_t Hash(std::string_view name) { return std::hash<std::string_view>()(name); }

  // The item called `name`, or null.
  T* Find(std::string_view name) const { return Find(name, Hash(name)); }
  T* Find(std::string_view name, uint64_t hash) const {
    if (size_ == 0) return nullptr;
    const uint64_t tag = TagOf(hash);
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const uint64_t slot = slots_[i];
      if (slot == kEmpty) return nullptr;
      if ((slot & kTagMask) == tag && ItemOf(slot)->name() == name) return ItemOf(slot);
    }
  }

  // Adds `item` under its name unless the name is taken. Returns the item that holds the name
  // and whether it is `item`.
  std::pair<T*, bool> Insert(T* item) { return Insert(item, Hash(item->name())); }
  std::pair<T*, bool> Insert(T* item, uint64_t hash) {
    const auto address = reinterpret_cast<uintptr_t>(item);
    ZG_CHECK((address & kTagMask) == 0, "an item at ", address,
             " lies above the 48-bit address space that the index's slots hold");
    if ((size_ + 1) * kMaxLoadDen > slots_.size() * kMaxLoadNum) Rehash(CapacityFor(size_ + 1));
    const std::string_view name = item->name();
    const uint64_t tag = TagOf(hash);
    size_t i = hash & mask_;
    for (; slots_[i] != kEmpty; i = (i + 1) & mask_) {
      const uint64_t slot = slots_[i];
      if ((slot & kTagMask) == tag && ItemOf(slot)->name() == name) return {ItemOf(slot), false};
    }
    slots_[i] = tag | address;
    item->name_hash_ = hash;
    ++size_;
    return {item, true};
  }

  // For bulk work (resolving every edge of a loaded graph): prepares the searches for
  // `hashes[i + 1 ..]` while search `i` runs. On a graph larger than the caches a search misses
  // three times in a row (slot, item, the item's name), and a miss costs hundreds of cycles;
  // starting each load a few searches early overlaps them (measured: the 1M-node import loop
  // takes about 40% less time).
  //
  // Always inlined: GCC judges a function that only reads and prefetches to have no effect, and
  // drops calls to it (seen in the generated code: no prefetch was left).
  [[gnu::always_inline]] void PrefetchAhead(std::span<const uint64_t> hashes, size_t i) const {
    const size_t count = hashes.size();
    // A prefetch never faults, so the first needs no test for an empty table.
    if (i + 3 * kPrefetchStep < count) {
      __builtin_prefetch(slots_.data() + (hashes[i + 3 * kPrefetchStep] & mask_));
    }
    if (size_ == 0) return;
    // The slot loaded a step ago: its item, then the item's name. Only the home slot is looked
    // at, which holds the entry searched for most of the time.
    if (i + 2 * kPrefetchStep < count) {
      const uint64_t hash = hashes[i + 2 * kPrefetchStep];
      const uint64_t slot = slots_[hash & mask_];
      if (slot != kEmpty && (slot & kTagMask) == TagOf(hash)) __builtin_prefetch(ItemOf(slot));
    }
    if (i + kPrefetchStep < count) {
      const uint64_t hash = hashes[i + kPrefetchStep];
      const uint64_t slot = slots_[hash & mask_];
      if (slot != kEmpty && (slot & kTagMask) == TagOf(hash)) {
        __builtin_prefetch(ItemOf(slot)->name().data());
      }
    }
  }

  // out[i] = Find(names[i]) for every i, with the searches overlapped (see PrefetchAhead).
  void FindMany(std::span<const std::string_view> names, std::span<T*> out) const {
    FindInChunks(
        names.size(), [&](size_t i) { return names[i]; }, [&](size_t i) { return Hash(names[i]); },
        out);
  }

  // out[i] = Find(items[i]->name()), each search started from the hash the item was filed under
  // (kept in it) instead of hashing its name again; overlapped as FindMany's. For checking that
  // each item is the one its name finds (Verify): an item never filed finds another or none.
  void FindManyAsFiled(std::span<const T* const> items, std::span<T*> out) const {
    FindInChunks(
        items.size(), [&](size_t i) { return items[i]->name(); },
        [&](size_t i) { return items[i]->name_hash_; }, out);
  }

  // Names hashed at a time by bulk callers: small enough to stay cached between hashing and
  // searching, large enough that the searches not prepared at a chunk's start are few.
  static constexpr size_t kBulkChunk = 1024;

  // Starts loading the slot where Erase(item) begins its search, for bulk erasers.
  [[gnu::always_inline]] void PrefetchSlotOf(const T* item) const {
    if (!slots_.empty()) __builtin_prefetch(slots_.data() + (item->name_hash_ & mask_));
  }
  // Removes `item`; returns whether it was in the index. Found by the hash stored in it when it
  // was inserted and by address, so that no name is read or hashed: erasing a node per parameter
  // and its outputs costs a cache miss each this way, not four.
  bool Erase(T* item) {
    if (size_ == 0) return false;
    size_t i = item->name_hash_ & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i] == kEmpty) return false;
      if (ItemOf(slots_[i]) == item) break;
    }
    // Backward-shift deletion: pull later entries of the probe run into the hole, so that no
    // tombstones slow later searches. At most 3/4 full, a run past the hole is short.
    for (size_t j = (i + 1) & mask_; slots_[j] != kEmpty; j = (j + 1) & mask_) {
      const size_t home = ItemOf(slots_[j])->name_hash_ & mask_;
      // Entry j may fill hole i when its home is not in the cyclic range (i, j].
      const bool home_after_hole = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (home_after_hole) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = kEmpty;
    --size_;
    return true;
  }

 private:
  static constexpr uint64_t kEmpty = 0;
  static constexpr int kAddressBits = 48;
  static constexpr uint64_t kTagMask = ~uint64_t{0} << kAddressBits;
  static_assert(sizeof(T*) == sizeof(uint64_t), "slots hold 64-bit addresses");

  // The hash's top bits, in the slot's top bits: the home slot is chosen by its low bits, so
  // entries of one run rarely share these.
  static uint64_t TagOf(uint64_t hash) { return hash & kTagMask; }
  static T* ItemOf(uint64_t slot) { return reinterpret_cast<T*>(slot & ~kTagMask); }

  // At most 3/4 full: linear probing stays within a cache line or two.
  static constexpr size_t kMaxLoadNum = 3;
  static constexpr size_t kMaxLoadDen = 4;

  // Searches prepared ahead per stage of PrefetchAhead: enough to cover a miss, few enough that
  // what was loaded is still cached when it is used.
  static constexpr size_t kPrefetchStep = 4;

  // out[i] = Find(name_of(i), hash_of(i)) for i < count: the hashes are taken a chunk at a time
  // (so that the names are still cached when compared), and each search is prepared ahead.
  template <typename NameOf, typename HashOf>
  void FindInChunks(size_t count, NameOf name_of, HashOf hash_of, std::span<T*> out) const {
    std::vector<uint64_t> hashes;
    for (size_t begin = 0; begin < count; begin += kBulkChunk) {
      const size_t end = std::min(count, begin + kBulkChunk);
      hashes.clear();
      for (size_t i = begin; i < end; ++i) hashes.push_back(hash_of(i));
      for (size_t i = begin; i < end; ++i) {
        PrefetchAhead(hashes, i - begin);
        out[i] = Find(name_of(i), hashes[i - begin]);
      }
    }
  }

  static size_t CapacityFor(size_t count) {
    return std::bit_ceil(std::max<size_t>(16, count * kMaxLoadDen / kMaxLoadNum + 1));
  }

  // Moves every entry into a table of `capacity` slots, each filed by the full hash its item
  // keeps; the items are read ahead of need, as their order here is the old table's, not memory's.
  void Rehash(size_t capacity) {
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(capacity, kEmpty);
    mask_ = capacity - 1;
    constexpr size_t kAhead = 8;
    for (size_t k = 0; k < old.size(); ++k) {
      if (k + kAhead < old.size() && old[k + kAhead] != kEmpty) {
        __builtin_prefetch(ItemOf(old[k + kAhead]));
      }
      if (old[k] == kEmpty) continue;
      size_t i = ItemOf(old[k])->name_hash_ & mask_;
      while (slots_[i] != kEmpty) i = (i + 1) & mask_;
      slots_[i] = old[k];
    }
  }

  std::vector<uint64_t> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace zerograph

#endif  // ZEROGRAPH_IR_NAME_INDEX_H_
