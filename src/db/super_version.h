// SuperVersion: what one read of a column family sees — the family (its options and
// comparator), the mutable memtable, the immutable memtables waiting for flush (newest first),
// and the Version of table files — captured together so that a read is never half before and
// half after a flush or compaction.
//
// Ownership: shares the family, holds a reference on each memtable and shares the Version
// (which borrows the family's comparator and table cache); readers share the
// SuperVersion (std::shared_ptr) for as long as they read, pin or iterate, which keeps every
// memtable and table file it names alive. The DB publishes a new one (atomically) whenever the
// memtables or the Version change. Thread safety: immutable; shareable across threads.
#pragma once

#include <memory>
#include <vector>

#include "memtable/memtable.h"
#include "src/base/get_context.h"
#include "src/db/column_family.h"
#include "src/db/version.h"

namespace shale {

struct SuperVersion {
  SuperVersion(std::shared_ptr<const ColumnFamilyData> family, MemTable* m,
               std::vector<MemTable*> immutables, std::shared_ptr<Version> v)
      : cfd(std::move(family)), mem(m), imm(std::move(immutables)), current(std::move(v)) {
    mem->Ref();
    for (MemTable* i : imm) i->Ref();
  }
  SuperVersion(const SuperVersion&) = delete;
  SuperVersion& operator=(const SuperVersion&) = delete;
  ~SuperVersion() {
    mem->Unref();
    for (MemTable* i : imm) i->Unref();
  }

  // The mutable memtable, then the immutable ones newest first.
  std::vector<const MemTable*> MemTables() const {
    std::vector<const MemTable*> all = {mem};
    all.insert(all.end(), imm.begin(), imm.end());
    return all;
  }
  // Feeds ctx the key's entries from the mutable memtable, then the immutable ones newest
  // first, until ctx has its answer. True if any memtable held an entry of the key.
  bool GetFromMemTables(const LookupKey& key, GetContext* ctx) const {
    bool seen = mem->Get(key, ctx);
    for (size_t i = 0; i < imm.size() && !ctx->resolved(); i++) {
      seen = imm[i]->Get(key, ctx) || seen;
    }
    return seen;
  }

  const std::shared_ptr<const ColumnFamilyData> cfd;
  MemTable* const mem;
  const std::vector<MemTable*> imm;  // newest first
  const std::shared_ptr<Version> current;
};

}  // namespace shale
