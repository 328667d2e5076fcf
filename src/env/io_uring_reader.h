// IoUringReader: the POSIX AsyncReader, reading with io_uring (liburing).
//
// Submit only queues; Poll places queued reads in the submission ring (as many as fit),
// submits them with one io_uring_enter, waits for at least one completion and reaps every
// completion ready. Short reads are continued from where they stopped, -EAGAIN and -EINTR
// are retried, end of file completes the read with the bytes read so far, other errors
// complete it with IOError. If the ring itself fails (io_uring_enter errors), the reader
// finishes the reads it still holds with pread(2) and refuses further Submits, so no read is
// lost.
//
// Ownership: owns its ring; files and requests are borrowed until their callbacks run.
// Thread safety: one thread (each thread makes its own reader).
#pragma once

#include <memory>

#include "shale/file_system.h"

namespace shale {

// Makes a reader with room for queue_depth reads in flight. Fails with IOError saying why
// when io_uring cannot be set up (ENOSYS: no kernel support; EPERM: forbidden by seccomp or
// kernel.io_uring_disabled; ENOMEM: locked-memory limit).
[[nodiscard]] Status NewIoUringReader(unsigned queue_depth, std::unique_ptr<AsyncReader>* reader);

}  // namespace shale
