// The input format of db_ops_fuzzer, shared with make_seeds so the seeds speak it.
//
//   input   := options:byte op*                 (at most kMaxOps ops; the rest is ignored)
//   op      := code:byte operands               (code % kNumOps picks the DbOp)
//   key     := byte                             (byte % kNumKeys picks from kKeys)
//   value   := len:byte bytes                   (len < kBigValue: len % 48 raw bytes follow;
//                                                 else a generated value of
//                                                 (len - kBigValue + 1) * 32 bytes)
// Operand bytes past the end of the input read as zero.
//
// Options byte bits:
//   0: zstd compression          1: no table Bloom filter     2: avoid_flush_during_recovery
//   3: no memtable Bloom filter  4-5: WAL recovery mode (0 tolerate tail, 1 absolute
//                                     consistency, 2 point in time, 3 tolerate tail, with
//                                     an LRU block cache instead of the CLOCK one)
//   6: 32 KiB write buffer and one background job (else 4 KiB and two)
//   7: a temporary directory on the POSIX file system (else the in-memory file system; kCrash
//      is then a clean reopen)
// Thread safety: constants only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace shale::fuzz {

enum class DbOp : uint8_t {
  kPut = 0,         // key value
  kSyncPut,         // key value; WriteOptions::sync
  kDelete,          // key
  kMerge,           // key value (string append, ',' between operands)
  kBatch,           // n:byte, then 1 + n % 8 times: kind:byte (% 3: put, delete, merge) key [value]
  kGet,             // key
  kMultiGet,        // n:byte (1 + n % 6 keys; bit 7: async_io), then the keys
  kIterate,         // n:byte (1 + n % 16 steps; bit 7: at a snapshot), then n times step:byte
                    // (% 6: SeekToFirst, SeekToLast, Seek key, SeekForPrev key, Next, Prev)
  kScan,            // whole DB forward and backward
  kFlush,           //
  kCompactRange,    // flags:byte (bit 0: begin key follows, bit 1: end key follows, bits 2-3:
                    // bottommost_level_compaction) [key] [key]
  kReopen,          // Close and Open; everything written must be there
  kSnapshot,        // which:byte; takes one when fewer than 4 are held and bit 7 is clear,
                    // else releases snapshot which % held
  kSnapshotRead,    // which:byte key; Get and a full scan at snapshot which % held
  kMergeOperands,   // key room:byte (room % 4 == 0: room for 1 operand, else 64)
  kSyncWAL,         //
  kWaitForCompact,  //
  kCrash,           // flags:byte (bit 0: directory entries revert to their last fsync too, bit 1:
                    // wait for background work first); in-memory only: power loss dropping
                    // unsynced data, then Open
  kNumOps
};

inline constexpr int kMaxOps = 200;
inline constexpr uint8_t kBigValue = 0xC0;

// A small key space with shared prefixes, an empty key and bytes at both ends of the order.
// clang-format off
inline constexpr std::string_view kKeys[] = {
    "",  "a", std::string_view("a\0", 2), "aa", "ab", "abc", "b",    "ba",
    "c", "d", "e",                        "f",  "g",  "k",   "\x7f", "\xff"};
// clang-format on
inline constexpr size_t kNumKeys = sizeof(kKeys) / sizeof(kKeys[0]);

}  // namespace shale::fuzz
