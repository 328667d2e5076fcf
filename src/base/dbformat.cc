#include "src/base/dbformat.h"

namespace shale {

InternalKeyComparator::InternalKeyComparator(const Comparator* user)
    : user_(user), name_(std::string("shale.InternalKeyComparator:") + user->Name()) {}

void InternalKeyComparator::FindShortestSeparator(std::string* start, const Slice& limit) const {
  const Slice user_start = ExtractUserKey(*start);
  const Slice user_limit = ExtractUserKey(limit);
  std::string tmp(user_start.data(), user_start.size());
  user_->FindShortestSeparator(&tmp, user_limit);
  if (tmp.size() < user_start.size() && user_->Compare(user_start, tmp) < 0) {
    // A shorter, strictly larger user key: with the largest tag it sorts first among its
    // versions, so it is still > *start and < limit.
    PutFixed64(&tmp, PackSequenceAndType(kMaxSequenceNumber, kValueTypeForSeek));
    start->swap(tmp);
  }
}

void InternalKeyComparator::FindShortSuccessor(std::string* key) const {
  const Slice user_key = ExtractUserKey(*key);
  std::string tmp(user_key.data(), user_key.size());
  user_->FindShortSuccessor(&tmp);
  if (tmp.size() < user_key.size() && user_->Compare(user_key, tmp) < 0) {
    PutFixed64(&tmp, PackSequenceAndType(kMaxSequenceNumber, kValueTypeForSeek));
    key->swap(tmp);
  }
}

}  // namespace shale
