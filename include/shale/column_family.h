// Column families: named keyspaces of one DB, RocksDB's API.
//
// A DB has a default family, kDefaultColumnFamilyName, which DB::DefaultColumnFamily() names
// and which the calls without a handle use. DB::Open with a list of ColumnFamilyDescriptors
// returns one handle per descriptor, in order; every read and write call has a form that takes
// a handle.
//
// This build holds the default family only: a descriptor list must name it (and nothing else
// exists to name), and CreateColumnFamily returns NotSupported. Handles and the WriteBatch
// records that carry a family id are the format the later families use.
//
// Ownership: handles returned by DB::Open belong to the caller (std::unique_ptr) and must be
// destroyed before the DB; DefaultColumnFamily() belongs to the DB. Thread safety: a handle is
// immutable; any thread may use it while it and its DB live.
#pragma once

#include <cstdint>
#include <string>

#include "shale/comparator.h"
#include "shale/options.h"

namespace shale {

// The name of the family every DB has.
inline const std::string kDefaultColumnFamilyName = "default";

class ColumnFamilyHandle {
 public:
  ColumnFamilyHandle() = default;
  ColumnFamilyHandle(const ColumnFamilyHandle&) = delete;
  ColumnFamilyHandle& operator=(const ColumnFamilyHandle&) = delete;
  virtual ~ColumnFamilyHandle() = default;

  virtual const std::string& GetName() const = 0;
  // The id the family has in this DB (the default family's is 0); ids are never reused.
  virtual uint32_t GetID() const = 0;
  virtual const Comparator* GetComparator() const = 0;
};

// A family to open: its name and its options.
struct ColumnFamilyDescriptor {
  std::string name = kDefaultColumnFamilyName;
  ColumnFamilyOptions options;

  ColumnFamilyDescriptor() = default;
  ColumnFamilyDescriptor(std::string family_name, const ColumnFamilyOptions& family_options)
      : name(std::move(family_name)), options(family_options) {}
};

}  // namespace shale
