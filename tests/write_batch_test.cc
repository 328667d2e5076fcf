// WriteBatch: the encoding, counts, Iterate, Validate on malformed bytes, and application to a
// memtable with consecutive sequence numbers.
#include "shale/write_batch.h"

#include <gtest/gtest.h>

#include <string>

#include "memtable/memtable.h"
#include "shale/column_family.h"
#include "shale/comparator.h"
#include "src/db/write_batch_internal.h"
#include "src/util/coding.h"

namespace shale {
namespace {

// Renders a batch as "Put(k,v)Delete(k)Merge(k,v)".
class Printer : public WriteBatch::Handler {
 public:
  Status Put(const Slice& k, const Slice& v) override {
    out += "Put(" + k.ToString() + "," + v.ToString() + ")";
    return Status::OK();
  }
  Status Delete(const Slice& k) override {
    out += "Delete(" + k.ToString() + ")";
    return Status::OK();
  }
  Status Merge(const Slice& k, const Slice& v) override {
    out += "Merge(" + k.ToString() + "," + v.ToString() + ")";
    return Status::OK();
  }
  Status SingleDelete(const Slice& k) override {
    out += "SingleDelete(" + k.ToString() + ")";
    return Status::OK();
  }
  std::string out;
};

std::string Print(const WriteBatch& b) {
  Printer p;
  Status s = b.Iterate(&p);
  return s.ok() ? p.out : p.out + "ERROR:" + s.ToString();
}

TEST(WriteBatchTest, EmptyBatch) {
  WriteBatch b;
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_EQ(b.GetDataSize(), WriteBatchInternal::kHeader);
  EXPECT_EQ(Print(b), "");
  EXPECT_TRUE(WriteBatchInternal::Validate(&b).ok());
}

TEST(WriteBatchTest, RecordsInOrderAndClear) {
  WriteBatch b;
  ASSERT_TRUE(b.Put("foo", "bar").ok());
  ASSERT_TRUE(b.Delete("box").ok());
  ASSERT_TRUE(b.Merge("m", "op").ok());
  ASSERT_TRUE(b.Put("", "").ok());
  EXPECT_EQ(b.Count(), 4u);
  EXPECT_EQ(Print(b), "Put(foo,bar)Delete(box)Merge(m,op)Put(,)");
  b.Clear();
  EXPECT_EQ(b.Count(), 0u);
  EXPECT_EQ(Print(b), "");
}

// A moved-from batch is empty and usable (not a string without its header).
TEST(WriteBatchTest, MovedFromBatchIsEmptyAndUsable) {
  WriteBatch a;
  ASSERT_TRUE(a.Put("k", "v").ok());
  WriteBatch b(std::move(a));
  EXPECT_EQ(b.Count(), 1u);
  EXPECT_EQ(a.Count(), 0u);  // NOLINT(bugprone-use-after-move): the documented state
  EXPECT_EQ(a.GetDataSize(), WriteBatchInternal::kHeader);
  EXPECT_TRUE(WriteBatchInternal::Validate(&a).ok());
  ASSERT_TRUE(a.Merge("m", "1").ok());
  EXPECT_EQ(Print(a), "Merge(m,1)");
  b = std::move(a);
  EXPECT_EQ(Print(b), "Merge(m,1)");
  EXPECT_EQ(a.Count(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(Print(a), "");
  EXPECT_TRUE(WriteBatchInternal::HasMerge(&b));
  EXPECT_FALSE(WriteBatchInternal::HasMerge(&a));
}

TEST(WriteBatchTest, EncodingIsTheDocumentedFormat) {
  WriteBatch b;
  ASSERT_TRUE(b.Put("k", "v").ok());
  ASSERT_TRUE(b.Delete("d").ok());
  WriteBatchInternal::SetSequence(&b, 0x0102030405060708ull);
  std::string expected;
  PutFixed64(&expected, 0x0102030405060708ull);
  PutFixed32(&expected, 2);
  expected += '\x01';
  PutLengthPrefixedSlice(&expected, "k");
  PutLengthPrefixedSlice(&expected, "v");
  expected += '\x00';
  PutLengthPrefixedSlice(&expected, "d");
  EXPECT_EQ(b.Data(), expected);
  EXPECT_EQ(WriteBatchInternal::Sequence(&b), 0x0102030405060708ull);
}

// SingleDelete records: 0x7 for the default family, 0x8 with a family id (RocksDB's bytes).
TEST(WriteBatchTest, SingleDeleteEncoding) {
  class Family final : public ColumnFamilyHandle {
   public:
    const std::string& GetName() const override { return name_; }
    uint32_t GetID() const override { return 3; }
    const Comparator* GetComparator() const override { return BytewiseComparator(); }

   private:
    std::string name_ = "f";
  } family;
  WriteBatch b;
  ASSERT_TRUE(b.SingleDelete("s").ok());
  ASSERT_TRUE(b.SingleDelete(&family, "t").ok());
  std::string expected;
  PutFixed64(&expected, 0);
  PutFixed32(&expected, 2);
  expected += '\x07';
  PutLengthPrefixedSlice(&expected, "s");
  expected += '\x08';
  PutVarint32(&expected, 3);
  PutLengthPrefixedSlice(&expected, "t");
  EXPECT_EQ(b.Data(), expected);
  EXPECT_EQ(Print(b), "SingleDelete(s)ERROR:Invalid argument: column family 3 does not exist");
  WriteBatch copy;
  ASSERT_TRUE(WriteBatchInternal::SetContents(&copy, b.Data()).ok());
  EXPECT_TRUE(WriteBatchInternal::Validate(&copy, [](uint32_t id) { return id == 3; }).ok());
  // A truncated single deletion is Corruption.
  ASSERT_TRUE(
      WriteBatchInternal::SetContents(&copy, Slice(b.Data().data(), b.Data().size() - 1)).ok());
  EXPECT_TRUE(WriteBatchInternal::Validate(&copy).IsCorruption());
}

TEST(WriteBatchTest, AppendConcatenates) {
  WriteBatch a, b;
  ASSERT_TRUE(a.Put("a", "1").ok());
  ASSERT_TRUE(b.Delete("b").ok());
  ASSERT_TRUE(b.Merge("c", "3").ok());
  WriteBatchInternal::Append(&a, &b);
  EXPECT_EQ(a.Count(), 3u);
  EXPECT_EQ(Print(a), "Put(a,1)Delete(b)Merge(c,3)");
}

TEST(WriteBatchTest, MalformedContentsAreCorruption) {
  WriteBatch good;
  ASSERT_TRUE(good.Put("key", "value").ok());
  ASSERT_TRUE(good.Delete("key2").ok());
  const std::string rep = good.Data();

  // Every truncation is rejected, by SetContents (short header) or Validate.
  for (size_t n = 0; n < rep.size(); n++) {
    WriteBatch b;
    Status s = WriteBatchInternal::SetContents(&b, Slice(rep.data(), n));
    if (s.ok()) s = WriteBatchInternal::Validate(&b);
    EXPECT_TRUE(s.IsCorruption()) << n << ": " << s.ToString();
  }
  // A count that disagrees with the records.
  {
    WriteBatch b;
    ASSERT_TRUE(WriteBatchInternal::SetContents(&b, rep).ok());
    WriteBatchInternal::SetCount(&b, 3);
    EXPECT_TRUE(WriteBatchInternal::Validate(&b).IsCorruption());
    WriteBatchInternal::SetCount(&b, 1);
    EXPECT_TRUE(WriteBatchInternal::Validate(&b).IsCorruption());
  }
  // An unknown record type.
  {
    std::string bad = rep;
    bad[WriteBatchInternal::kHeader] = '\x09';
    WriteBatch b;
    ASSERT_TRUE(WriteBatchInternal::SetContents(&b, bad).ok());
    EXPECT_TRUE(WriteBatchInternal::Validate(&b).IsCorruption());
    EXPECT_NE(Print(b).find("ERROR:"), std::string::npos);
  }
  // A key length running past the end.
  {
    std::string bad = rep;
    bad[WriteBatchInternal::kHeader + 1] = '\x7f';
    WriteBatch b;
    ASSERT_TRUE(WriteBatchInternal::SetContents(&b, bad).ok());
    EXPECT_TRUE(WriteBatchInternal::Validate(&b).IsCorruption());
  }
  // Trailing garbage after the last record.
  {
    WriteBatch b;
    ASSERT_TRUE(WriteBatchInternal::SetContents(&b, rep + "x").ok());
    EXPECT_TRUE(WriteBatchInternal::Validate(&b).IsCorruption());
  }
}

TEST(WriteBatchTest, InsertIntoUsesConsecutiveSequences) {
  InternalKeyComparator icmp(BytewiseComparator());
  MemTable* mem = new MemTable(icmp);
  mem->Ref();
  WriteBatch b;
  ASSERT_TRUE(b.Put("a", "1").ok());
  ASSERT_TRUE(b.Merge("b", "2").ok());
  ASSERT_TRUE(b.Delete("a").ok());
  ASSERT_TRUE(WriteBatchInternal::InsertInto(&b, 100, mem).ok());
  auto it = mem->NewIterator();
  std::string got;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ParsedInternalKey p;
    ASSERT_TRUE(ParseInternalKey(it->key(), &p));
    got += p.user_key.ToString() + "@" + std::to_string(p.sequence) + ":" +
           std::to_string(static_cast<int>(p.type)) + " ";
  }
  EXPECT_EQ(got, "a@102:0 a@100:1 b@101:2 ");
  it.reset();
  mem->Unref();
}

}  // namespace
}  // namespace shale
