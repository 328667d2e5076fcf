// Raw bytes as a block: every iterator operation, over both the bytewise and the internal-key
// comparator, with values sized or BlockHandles, must stay inside the block; the same bytes as a
// properties block must decode or fail cleanly.
#include <cstdint>
#include <cstring>
#include <memory>

#include "shale/comparator.h"
#include "src/base/dbformat.h"
#include "table/block.h"
#include "table/table_properties.h"

namespace {

void Exercise(shale::BlockIter* it, const uint8_t* data, size_t size) {
  int n = 0;
  for (it->SeekToFirst(); it->Valid() && n < 10000; it->Next()) n++;
  for (it->SeekToLast(); it->Valid() && n < 20000; it->Prev()) n++;
  // Seek to a few targets cut from the input itself.
  for (size_t i = 0; i + 1 < size && i < 64; i += 16) {
    const size_t len = std::min<size_t>(data[i] % 24, size - i - 1);
    const shale::Slice target(reinterpret_cast<const char*>(data + i + 1), len);
    it->Seek(target);
    if (it->Valid()) it->Prev();
    it->SeekForPrev(target);
    if (it->Valid()) it->Next();
  }
  (void)it->status();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shale::Block block(
      shale::BlockContents::CopyOf(shale::Slice(reinterpret_cast<const char*>(data), size)));

  shale::BlockIter bytewise;
  block.InitIterator(shale::BytewiseComparator(), &bytewise);
  Exercise(&bytewise, data, size);

  const shale::InternalKeyComparator icmp(shale::BytewiseComparator());
  shale::BlockIter internal;
  block.InitIterator(&icmp, &internal);
  Exercise(&internal, data, size);

  // The same bytes with the prefix index a cached data block gets: built only when the
  // restart keys are internal keys in order, and then every seek to an internal key lands
  // where the plain block's does.
  shale::Block indexed(
      shale::BlockContents::CopyOf(shale::Slice(reinterpret_cast<const char*>(data), size)));
  indexed.BuildRestartPrefixIndex();
  shale::BlockIter with_index;
  indexed.InitIterator(&icmp, &with_index);
  Exercise(&with_index, data, size);
  if (indexed.has_prefix_index()) {
    shale::BlockIter plain, fast;
    block.InitIterator(&icmp, &plain);
    indexed.InitIterator(&icmp, &fast);
    for (size_t i = 0; i + 8 < size && i < 256; i += 8) {
      const size_t len = std::min<size_t>(8 + data[i] % 24, size - i - 1);
      const shale::Slice target(reinterpret_cast<const char*>(data + i + 1), len);
      plain.Seek(target);
      fast.Seek(target);
      if (plain.Valid() != fast.Valid() || plain.status().ok() != fast.status().ok() ||
          (plain.Valid() && plain.key() != fast.key())) {
        __builtin_trap();
      }
    }
  }

  // The same bytes as a format 3 index block: values are BlockHandles without a length, keys
  // user keys, with the prefix index a reader builds for it or without; a seek lands where the
  // plain block's does.
  shale::Block handles(
      shale::BlockContents::CopyOf(shale::Slice(reinterpret_cast<const char*>(data), size)),
      shale::BlockValueFormat::kHandle);
  shale::BlockIter handle_iter;
  handles.InitIterator(shale::BytewiseComparator(), &handle_iter);
  Exercise(&handle_iter, data, size);
  shale::Block indexed_handles(
      shale::BlockContents::CopyOf(shale::Slice(reinterpret_cast<const char*>(data), size)),
      shale::BlockValueFormat::kHandle);
  indexed_handles.BuildRestartPrefixIndex(/*user_keys=*/true);
  shale::BlockIter indexed_handle_iter;
  indexed_handles.InitIterator(shale::BytewiseComparator(), &indexed_handle_iter);
  Exercise(&indexed_handle_iter, data, size);
  if (indexed_handles.has_prefix_index()) {
    shale::BlockIter plain, fast;
    handles.InitIterator(shale::BytewiseComparator(), &plain);
    indexed_handles.InitIterator(shale::BytewiseComparator(), &fast);
    for (size_t i = 0; i + 1 < size && i < 256; i += 8) {
      const size_t len = std::min<size_t>(data[i] % 24, size - i - 1);
      const shale::Slice target(reinterpret_cast<const char*>(data + i + 1), len);
      plain.Seek(target);
      fast.Seek(target);
      if (plain.Valid() != fast.Valid() || plain.status().ok() != fast.status().ok() ||
          (plain.Valid() && (plain.key() != fast.key() || plain.value() != fast.value()))) {
        __builtin_trap();
      }
    }
  }

  shale::TableProperties props;
  (void)props.Decode(shale::Slice(reinterpret_cast<const char*>(data), size));
  return 0;
}
