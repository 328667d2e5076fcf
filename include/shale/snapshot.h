// Snapshot: a consistent, read-only view of a DB at one sequence number.
//
// Obtained from DB::GetSnapshot() and returned with DB::ReleaseSnapshot(); the DB owns it.
// A snapshot is valid only with the DB that made it: passing it to another DB is InvalidArgument.
// Thread safety: immutable; may be shared between threads until released.
#pragma once

#include <cstdint>

namespace shale {

using SequenceNumber = uint64_t;

class Snapshot {
 public:
  virtual SequenceNumber GetSequenceNumber() const = 0;

 protected:
  virtual ~Snapshot() = default;
};

}  // namespace shale
