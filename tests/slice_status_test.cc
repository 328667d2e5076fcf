// Public value types: Status, Slice, Cleanable and PinnableSlice.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "shale/pinnable_slice.h"
#include "shale/slice.h"
#include "shale/status.h"

namespace shale {
namespace {

TEST(StatusTest, CodesAndMessages) {
  EXPECT_TRUE(Status::OK().ok());
  EXPECT_EQ(Status::OK().ToString(), "OK");
  Status s = Status::Corruption("bad block", "file 7");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_FALSE(s.IsIOError());
  EXPECT_NE(s.ToString().find("bad block"), std::string::npos);
  EXPECT_NE(s.ToString().find("file 7"), std::string::npos);
  EXPECT_TRUE(Status::NotFound().IsNotFound());
  EXPECT_TRUE(Status::IOError("x").IsIOError());
  EXPECT_TRUE(Status::InvalidArgument("x").IsInvalidArgument());
  EXPECT_TRUE(Status::NotSupported("x").IsNotSupported());
  EXPECT_TRUE(Status::Incomplete("x").IsIncomplete());
  EXPECT_TRUE(Status::Busy("x").IsBusy());
  EXPECT_TRUE(Status::TimedOut("x").IsTimedOut());
  EXPECT_TRUE(Status::Aborted("x").IsAborted());
  // Copies and moves keep code and message.
  Status copy = s;
  EXPECT_EQ(copy.ToString(), s.ToString());
  Status moved = std::move(copy);
  EXPECT_TRUE(moved.IsCorruption());
  EXPECT_EQ(moved.ToString(), s.ToString());
  Status assigned;
  assigned = s;
  EXPECT_EQ(assigned.code(), s.code());
}

TEST(SliceTest, ComparisonAndEditing) {
  Slice a("abc"), b("abd"), p("ab"), e;
  EXPECT_LT(a.compare(b), 0);
  EXPECT_GT(b.compare(a), 0);
  EXPECT_GT(a.compare(p), 0);  // a longer key with the same prefix sorts after
  EXPECT_EQ(a.compare(Slice(std::string("abc"))), 0);
  EXPECT_TRUE(a.starts_with(p));
  EXPECT_FALSE(p.starts_with(a));
  EXPECT_TRUE(e.empty());
  EXPECT_LT(e.compare(a), 0);
  EXPECT_TRUE(a == Slice("abc"));
  // Bytes compare unsigned.
  EXPECT_LT(Slice("\x01").compare(Slice("\xff")), 0);
  Slice c("hello world");
  c.remove_prefix(6);
  EXPECT_EQ(c.ToString(), "world");
  c.remove_suffix(2);
  EXPECT_EQ(c.ToString(), "wor");
  EXPECT_EQ(Slice("\x01\xab", 2).ToString(/*hex=*/true), "01AB");
  const std::string with_nul("a\0b", 3);
  EXPECT_EQ(Slice(with_nul).size(), 3u);
}

void Count(void* arg1, void* /*arg2*/) { ++*static_cast<int*>(arg1); }

TEST(CleanableTest, CleanupsRunOnceOnResetDestructionOrDelegate) {
  int runs = 0;
  {
    Cleanable c;
    c.RegisterCleanup(&Count, &runs, nullptr);
    c.RegisterCleanup(&Count, &runs, nullptr);
    c.RegisterCleanup(&Count, &runs, nullptr);
    EXPECT_TRUE(c.HasCleanups());
  }
  EXPECT_EQ(runs, 3);
  runs = 0;
  Cleanable target;
  {
    Cleanable c;
    c.RegisterCleanup(&Count, &runs, nullptr);
    c.RegisterCleanup(&Count, &runs, nullptr);
    c.DelegateCleanupsTo(&target);
    EXPECT_FALSE(c.HasCleanups());
  }
  EXPECT_EQ(runs, 0);
  Cleanable moved(std::move(target));
  EXPECT_EQ(runs, 0);
  moved.Reset();
  EXPECT_EQ(runs, 2);
  moved.Reset();
  EXPECT_EQ(runs, 2);
}

TEST(PinnableSliceTest, PinSelfCopiesAndPinSliceReferences) {
  PinnableSlice v;
  {
    std::string src = "temporary";
    v.PinSelf(src);
  }
  EXPECT_FALSE(v.IsPinned());
  EXPECT_EQ(v.ToString(), "temporary");

  int released = 0;
  static const std::string kBacking = "pinned bytes";
  v.PinSlice(kBacking, &Count, &released, nullptr);
  EXPECT_TRUE(v.IsPinned());
  EXPECT_EQ(v.data(), kBacking.data());  // zero-copy
  EXPECT_EQ(released, 0);
  // Moving transfers the pin; the source is left empty and releases nothing.
  PinnableSlice w(std::move(v));
  EXPECT_EQ(w.ToString(), "pinned bytes");
  EXPECT_EQ(released, 0);
  w.Reset();
  EXPECT_EQ(released, 1);
  EXPECT_TRUE(w.empty());

  // A caller-provided buffer receives self-pinned values.
  std::string buf;
  PinnableSlice x(&buf);
  x.PinSelf(Slice("into caller buffer"));
  EXPECT_EQ(buf, "into caller buffer");
  EXPECT_EQ(x.ToString(), "into caller buffer");
}

}  // namespace
}  // namespace shale
