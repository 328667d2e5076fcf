#include "src/db/subcompaction.h"

#include <algorithm>

#include "src/db/table_cache.h"
#include "table/table_reader.h"

namespace shale {

namespace {

// Anchors asked of each input table.
constexpr size_t kAnchorsPerTable = 128;

}  // namespace

std::vector<std::string> SubcompactionBoundaries(const Compaction& c, TableCache* tables,
                                                 const Comparator* ucmp, uint32_t max_parts,
                                                 uint64_t min_part_bytes) {
  if (max_parts <= 1) return {};
  std::vector<TableReader::KeyAnchor> anchors;
  uint64_t total = 0;
  for (int which = 0; which < 2; which++) {
    for (const auto& f : c.inputs(which)) {
      std::vector<TableReader::KeyAnchor> mine;
      TableRef table;
      Status s = tables->Find(*f, &table);
      if (s.ok()) s = table->ApproximateKeyAnchors(kAnchorsPerTable, &mine);
      // A table that cannot be read here fails the compaction when it is read; until then it
      // weighs its size at its last key.
      if (!s.ok() || mine.empty()) {
        mine.assign(1, {ExtractUserKey(f->largest).ToString(), f->file_size});
      }
      for (auto& a : mine) {
        total += a.range_bytes;
        anchors.push_back(std::move(a));
      }
    }
  }
  const uint64_t part =
      std::max<uint64_t>(total / max_parts, std::max<uint64_t>(min_part_bytes, 1));
  if (part >= total) return {};
  std::stable_sort(anchors.begin(), anchors.end(), [ucmp](const auto& a, const auto& b) {
    return ucmp->Compare(a.user_key, b.user_key) < 0;
  });
  std::vector<std::string> boundaries;
  uint64_t sum = 0;
  uint64_t next = part;
  for (const auto& a : anchors) {
    sum += a.range_bytes;
    if (sum <= next) continue;
    while (next < sum) next += part;  // one heavy anchor may pass several multiples
    // Anchors with equal keys are adjacent: a boundary is never repeated.
    if (boundaries.empty() || ucmp->Compare(a.user_key, boundaries.back()) > 0) {
      boundaries.push_back(a.user_key);
    }
    if (boundaries.size() + 1 == max_parts) break;
  }
  // A boundary at the last anchor would leave the last part only keys above every input's last
  // block key: none.
  if (!boundaries.empty() && ucmp->Compare(boundaries.back(), anchors.back().user_key) >= 0) {
    boundaries.pop_back();
  }
  return boundaries;
}

}  // namespace shale
