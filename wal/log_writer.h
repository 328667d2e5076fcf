// LogWriter: appends logical records to a log file in the format of log_format.h.
//
// Ownership: owns its WritableFile. Thread safety: none; the DB's write leader (or the MANIFEST
// writer under the DB mutex) is its only user at any time.
#pragma once

#include <cstdint>
#include <memory>

#include "shale/file_system.h"
#include "shale/slice.h"
#include "shale/status.h"
#include "wal/log_format.h"

namespace shale::log {

class Writer {
 public:
  // dest starts empty, or holds dest_length bytes of an earlier log to append to.
  explicit Writer(std::unique_ptr<WritableFile> dest, uint64_t dest_length = 0);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Appends one logical record and hands it to the OS (Flush); not durable until Sync().
  // After an error the writer is unusable: the file may hold a partial record.
  Status AddRecord(const Slice& payload);
  Status Sync() { return file_->Sync(); }
  Status Close() { return file_->Close(); }
  uint64_t FileSize() const { return file_->GetFileSize(); }
  WritableFile* file() { return file_.get(); }

 private:
  Status EmitPhysicalRecord(RecordType type, const char* data, size_t length);

  std::unique_ptr<WritableFile> file_;
  int block_offset_;  // bytes used in the current block
  // crc32c of each record type byte, precomputed: the crc of type+payload extends from it.
  uint32_t type_crc_[kMaxRecordType + 1];
};

}  // namespace shale::log
