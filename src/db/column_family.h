// ColumnFamilyHandleImpl: the DB's ColumnFamilyHandle (shale/column_family.h), naming the
// family by id and the DB it belongs to, so that a handle of another DB is refused.
//
// Ownership: borrows the DB, which must outlive the handle. Thread safety: immutable.
#pragma once

#include <cstdint>
#include <string>

#include "shale/column_family.h"

namespace shale {

class DB;

class ColumnFamilyHandleImpl final : public ColumnFamilyHandle {
 public:
  ColumnFamilyHandleImpl(const DB* db, uint32_t id, std::string name, const Comparator* cmp)
      : db_(db), id_(id), name_(std::move(name)), cmp_(cmp) {}

  const std::string& GetName() const override { return name_; }
  uint32_t GetID() const override { return id_; }
  const Comparator* GetComparator() const override { return cmp_; }
  const DB* db() const { return db_; }

 private:
  const DB* const db_;
  const uint32_t id_;
  const std::string name_;
  const Comparator* const cmp_;
};

}  // namespace shale
