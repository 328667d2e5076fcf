// SkipList: an ordered set of keys in an arena, with lock-free readers and concurrent
// inserters.
//
// Keys live inline in their nodes: AllocateKey(n) returns room for an n-byte key right after a
// fresh node's bottom link, the caller writes the key there and passes it to Insert. A node's
// upper-level links are stored before it, so the key sits at a fixed offset and walking the
// bottom level touches one cache line per entry. Cmp is a functor
// `int operator()(const char* a, const char* b) const`. Keys are never removed; the whole list
// dies with its arena.
//
// Thread safety:
//   - Insert may run concurrently with other Inserts and with readers (CAS per level).
//   - Readers (Contains, Iterator) need no lock and see every insert that completed before they
//     started; an insert racing with them may or may not be seen.
// Invariants:
//   1. A node is linked at level i only after it is linked at every level below i, and its own
//      next pointers are set before it is published (release store / CAS), so a reader that
//      finds it (acquire load) sees a fully initialized node.
//   2. Equal keys are not inserted (memtable internal keys are unique by sequence number).
#pragma once

#include <atomic>
#include <cstdint>
#include <new>

#include "src/util/arena.h"
#include "src/util/invariants.h"
#include "src/util/random.h"

namespace shale {

template <typename Cmp>
class SkipList {
 private:
  struct Node;

 public:
  static constexpr int kMaxHeight = 12;
  static constexpr unsigned kBranching = 4;

  // The arena must outlive the list.
  SkipList(Cmp cmp, ConcurrentArena* arena);
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;

  // Room for a key of key_size bytes inside a new node (not yet in the list).
  char* AllocateKey(size_t key_size);
  // Links the node of key into the list. REQUIRES: key came from AllocateKey and is written;
  // no equal key present.
  void Insert(const char* key);
  bool Contains(const char* key) const;

  // Iterates the list. Holding an Iterator needs the list (and arena) to stay alive.
  class Iterator {
   public:
    explicit Iterator(const SkipList* list) : list_(list) {}
    bool Valid() const { return node_ != nullptr; }
    const char* key() const {
      SHALE_ASSERT(Valid());
      return node_->Key();
    }
    void Next() {
      SHALE_ASSERT(Valid());
      node_ = node_->Next(0);
    }
    // Starts loading the next node (its bottom link and the start of its key) so that the miss
    // overlaps the caller's work on this one. REQUIRES: Valid().
    void PrefetchNext() const {
      const char* next =
          reinterpret_cast<const char*>(node_->next0.load(std::memory_order_relaxed));
      if (next != nullptr) {
        __builtin_prefetch(next);
        __builtin_prefetch(next + 48);
      }
    }
    // O(log n): the last node before the current one.
    void Prev() {
      SHALE_ASSERT(Valid());
      node_ = list_->FindLessThan(node_->Key());
      if (node_ == list_->head_) node_ = nullptr;
    }
    // First key >= target.
    void Seek(const char* target) { node_ = list_->FindGreaterOrEqual(target, nullptr); }
    // Last key <= target.
    void SeekForPrev(const char* target) {
      Seek(target);
      if (!Valid()) {
        SeekToLast();
      } else if (list_->cmp_(node_->Key(), target) > 0) {
        Prev();
      }
    }
    void SeekToFirst() { node_ = list_->head_->Next(0); }
    void SeekToLast() {
      node_ = list_->FindLast();
      if (node_ == list_->head_) node_ = nullptr;
    }

   private:
    const SkipList* list_;
    const Node* node_ = nullptr;
  };

 private:
  // Memory of a node of height h: links for levels h-1 .. 1, then the bottom link (the Node
  // itself), then the key. Before Insert, the bottom link temporarily holds the height.
  struct Node {
    std::atomic<Node*> next0;

    std::atomic<Node*>* Link(int level) { return &next0 - level; }
    const std::atomic<Node*>* Link(int level) const { return &next0 - level; }
    Node* Next(int level) const { return Link(level)->load(std::memory_order_acquire); }
    void SetNextRelaxed(int level, Node* n) { Link(level)->store(n, std::memory_order_relaxed); }
    bool CasNext(int level, Node* expected, Node* n) {
      return Link(level)->compare_exchange_strong(expected, n, std::memory_order_release,
                                                  std::memory_order_relaxed);
    }
    const char* Key() const { return reinterpret_cast<const char*>(&next0 + 1); }
  };

  Node* NewNode(size_t key_size, int height);
  int RandomHeight();
  int GetMaxHeight() const { return max_height_.load(std::memory_order_relaxed); }
  // The first node >= key; fills prev[level] with the last node < key at each level if given.
  Node* FindGreaterOrEqual(const char* key, Node** prev) const;
  Node* FindLessThan(const char* key) const;
  Node* FindLast() const;
  // Starts loading what a search at before (< key) reads next: next's link at this level (read
  // if the search passes next) and, at the level below, the node after before (compared if it
  // does not). Each step of a search is a likely cache miss; this lets two of them run at once.
  void PrefetchCandidates(const Node* before, const Node* next, int level) const;
  // Starting at before (< key), finds the pair (prev < key <= next) at level.
  void FindSpliceForLevel(const char* key, Node* before, int level, Node** out_prev,
                          Node** out_next) const;

  Cmp const cmp_;
  ConcurrentArena* const arena_;
  Node* const head_;
  std::atomic<int> max_height_{1};
};

template <typename Cmp>
SkipList<Cmp>::SkipList(Cmp cmp, ConcurrentArena* arena)
    : cmp_(cmp), arena_(arena), head_(NewNode(0, kMaxHeight)) {
  for (int i = 0; i < kMaxHeight; i++) head_->SetNextRelaxed(i, nullptr);
}

template <typename Cmp>
typename SkipList<Cmp>::Node* SkipList<Cmp>::NewNode(size_t key_size, int height) {
  const size_t links = sizeof(std::atomic<Node*>) * static_cast<size_t>(height);
  char* mem = arena_->AllocateAligned(links + key_size);
  Node* n = reinterpret_cast<Node*>(mem + links - sizeof(std::atomic<Node*>));
  for (int i = 0; i < height; i++) new (n->Link(i)) std::atomic<Node*>(nullptr);
  return n;
}

template <typename Cmp>
char* SkipList<Cmp>::AllocateKey(size_t key_size) {
  const int height = RandomHeight();
  Node* n = NewNode(key_size, height);
  n->next0.store(reinterpret_cast<Node*>(static_cast<uintptr_t>(height)),
                 std::memory_order_relaxed);
  return const_cast<char*>(n->Key());
}

template <typename Cmp>
int SkipList<Cmp>::RandomHeight() {
  thread_local Random rnd(reinterpret_cast<uintptr_t>(&rnd) ^ 0x5eed);
  int height = 1;
  while (height < kMaxHeight && rnd.OneIn(kBranching)) height++;
  return height;
}

template <typename Cmp>
typename SkipList<Cmp>::Node* SkipList<Cmp>::FindGreaterOrEqual(const char* key,
                                                                Node** prev) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  Node* last_bigger = nullptr;
  while (true) {
    Node* next = x->Next(level);
    if (next != last_bigger) PrefetchCandidates(x, next, level);
    if (next != nullptr && next != last_bigger && cmp_(next->Key(), key) < 0) {
      x = next;
    } else {
      if (prev != nullptr) prev[level] = x;
      if (level == 0) return next;
      last_bigger = next;
      level--;
    }
  }
}

template <typename Cmp>
void SkipList<Cmp>::PrefetchCandidates(const Node* before, const Node* next, int level) const {
  if (next == nullptr) return;
  // next's key is compared now; its link at this level is read if the search passes it.
  __builtin_prefetch(next->Link(level));
  // Otherwise the search goes down from before: the miss on that node overlaps this one.
  if (level > 0) {
    const Node* down = before->Next(level - 1);
    if (down != next && down != nullptr) {
      __builtin_prefetch(down);
      __builtin_prefetch(down->Link(level - 1));
    }
  }
}

template <typename Cmp>
typename SkipList<Cmp>::Node* SkipList<Cmp>::FindLessThan(const char* key) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    Node* next = x->Next(level);
    if (next != nullptr && cmp_(next->Key(), key) < 0) {
      x = next;
    } else {
      if (level == 0) return x;
      level--;
    }
  }
}

template <typename Cmp>
typename SkipList<Cmp>::Node* SkipList<Cmp>::FindLast() const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    Node* next = x->Next(level);
    if (next != nullptr) {
      x = next;
    } else {
      if (level == 0) return x;
      level--;
    }
  }
}

template <typename Cmp>
void SkipList<Cmp>::FindSpliceForLevel(const char* key, Node* before, int level, Node** out_prev,
                                       Node** out_next) const {
  while (true) {
    Node* next = before->Next(level);
    PrefetchCandidates(before, next, level);
    if (next == nullptr || cmp_(next->Key(), key) >= 0) {
      *out_prev = before;
      *out_next = next;
      return;
    }
    before = next;
  }
}

template <typename Cmp>
void SkipList<Cmp>::Insert(const char* key) {
  Node* x = reinterpret_cast<Node*>(const_cast<char*>(key)) - 1;
  const int height =
      static_cast<int>(reinterpret_cast<uintptr_t>(x->next0.load(std::memory_order_relaxed)));
  SHALE_ASSERT(height >= 1 && height <= kMaxHeight);
  int max_height = GetMaxHeight();
  while (height > max_height) {
    if (max_height_.compare_exchange_weak(max_height, height, std::memory_order_relaxed)) {
      max_height = height;
      break;
    }
  }
  // prev[i] < key <= next[i] at every level, found top-down.
  Node* prev[kMaxHeight];
  Node* next[kMaxHeight];
  Node* before = head_;
  for (int level = max_height - 1; level >= 0; level--) {
    FindSpliceForLevel(key, before, level, &prev[level], &next[level]);
    before = prev[level];
  }
  SHALE_ASSERT(next[0] == nullptr || cmp_(next[0]->Key(), key) != 0);

  for (int level = 0; level < height; level++) {
    while (true) {
      x->SetNextRelaxed(level, next[level]);
      if (prev[level]->CasNext(level, next[level], x)) break;
      // Another inserter changed prev[level]->next; the splice moved forward from prev.
      FindSpliceForLevel(key, prev[level], level, &prev[level], &next[level]);
    }
  }
}

template <typename Cmp>
bool SkipList<Cmp>::Contains(const char* key) const {
  Node* x = FindGreaterOrEqual(key, nullptr);
  return x != nullptr && cmp_(key, x->Key()) == 0;
}

}  // namespace shale
