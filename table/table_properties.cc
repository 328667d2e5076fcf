#include "table/table_properties.h"

#include <fmt/format.h>

#include <map>

#include "shale/comparator.h"
#include "src/util/coding.h"
#include "table/block.h"
#include "table/block_builder.h"

namespace shale {
namespace {

// Visits each field by its stored name, for encoding, decoding and printing alike.
template <typename Props, typename IntFn, typename StrFn>
void ForEachField(Props& p, IntFn&& on_int, StrFn&& on_str) {
  on_int("shale.bloom.millibits.per.key", p.bloom_millibits_per_key);
  on_str("shale.comparator", p.comparator);
  on_str("shale.compression", p.compression);
  on_int("shale.data.size", p.data_size);
  on_str("shale.filter.kind", p.filter_kind);
  on_int("shale.filter.size", p.filter_size);
  on_int("shale.filter.whole.keys", p.whole_key_filtering);
  on_int("shale.format.version", p.format_version);
  on_int("shale.index.key.is.user.key", p.index_key_is_user_key);
  on_int("shale.index.size", p.index_size);
  on_str("shale.key.largest", p.largest_key);
  on_str("shale.key.smallest", p.smallest_key);
  on_str("shale.merge.operator", p.merge_operator);
  on_int("shale.num.data.blocks", p.num_data_blocks);
  on_int("shale.num.deletions", p.num_deletions);
  on_int("shale.num.entries", p.num_entries);
  on_int("shale.num.merge.operands", p.num_merge_operands);
  on_int("shale.num.range.deletions", p.num_range_deletions);
  on_str("shale.prefix.extractor", p.prefix_extractor);
  on_int("shale.raw.key.size", p.raw_key_size);
  on_int("shale.raw.value.size", p.raw_value_size);
  on_int("shale.seqno.largest", p.largest_seqno);
  on_int("shale.seqno.smallest", p.smallest_seqno);
}

}  // namespace

std::string TableProperties::Encode() const {
  std::map<std::string, std::string> entries;  // sorted by name
  ForEachField(
      *this,
      [&](const char* name, uint64_t v) {
        std::string enc;
        PutVarint64(&enc, v);
        entries[name] = enc;
      },
      [&](const char* name, const std::string& v) { entries[name] = v; });
  BlockBuilder b(1);
  for (const auto& [k, v] : entries) b.Add(k, v);
  return b.Finish().ToString();
}

Status TableProperties::Decode(const Slice& block) {
  BlockContents contents;
  contents.data = block;  // borrowed: the Block lives only inside this call
  Block b(std::move(contents));
  BlockIter it;
  b.InitIterator(BytewiseComparator(), &it);
  std::map<std::string, std::string, std::less<>> entries;
  for (it.SeekToFirst(); it.Valid(); it.Next())
    entries[it.key().ToString()] = it.value().ToString();
  if (!it.status().ok()) return Status::Corruption("properties block", it.status().ToString());
  Status s;
  ForEachField(
      *this,
      [&](const char* name, uint64_t& v) {
        auto e = entries.find(name);
        if (e == entries.end()) return;
        Slice in(e->second);
        if (!GetVarint64(&in, &v) || !in.empty()) {
          s = Status::Corruption("properties block: bad value for", name);
        }
      },
      [&](const char* name, std::string& v) {
        auto e = entries.find(name);
        if (e != entries.end()) v = e->second;
      });
  return s;
}

std::string TableProperties::ToString() const {
  std::string out;
  ForEachField(
      *this, [&](const char* name, uint64_t v) { out += fmt::format("{}: {}\n", name, v); },
      [&](const char* name, const std::string& v) {
        const bool key = std::string_view(name).starts_with("shale.key.");
        out += fmt::format("{}: {}\n", name, key ? Slice(v).ToString(/*hex=*/true) : v);
      });
  return out;
}

}  // namespace shale
