// Column families: named keyspaces of one DB, RocksDB's API.
//
// A DB has a default family, kDefaultColumnFamilyName, which DB::DefaultColumnFamily() names
// and which the calls without a handle use. DB::Open with a list of ColumnFamilyDescriptors
// returns one handle per descriptor, in order; every read and write call has a form that takes
// a handle.
//
// Each family has its own memtables, tables, LSM shape and options (ColumnFamilyOptions); all
// share the DB's WAL, sequence numbers and background threads, and a WriteBatch is atomic
// across them. DB::Open must name every family the DB holds (InvalidArgument listing those
// missing); families it names that the DB does not hold are created with
// DBOptions::create_missing_column_families, InvalidArgument otherwise. A family keeps the
// comparator it was created with. A dropped family refuses reads and writes through its
// handles (InvalidArgument); reads and iterators already running keep their view, and its
// files are deleted once nothing uses them. Ids are never reused.
//
// Ownership: handles returned by DB::Open and CreateColumnFamily belong to the caller
// (std::unique_ptr); DefaultColumnFamily() belongs to the DB. A handle keeps its family's
// state alive, so it may outlive a drop (and, destroyed only, the DB); calls need the DB open.
// Thread safety: a handle is immutable; any thread may use it while its DB is open.
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
