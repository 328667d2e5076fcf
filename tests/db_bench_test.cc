// tools/db_bench end to end: the scoreboard's command lines (scaled down) run and print result
// lines in RocksDB's format; -report_json writes valid JSON with every benchmark; bad flags and
// unknown benchmarks exit 2.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/db_test_util.h"

namespace shale::test {
namespace {

#ifdef SHALE_DB_BENCH

// A minimal JSON validator: true when text is one well-formed JSON value.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& text) : s_(text) {}
  bool Valid() {
    Skip();
    if (!Value()) return false;
    Skip();
    return i_ == s_.size();
  }

 private:
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) i_++;
  }
  bool Eat(char c) {
    Skip();
    if (i_ < s_.size() && s_[i_] == c) {
      i_++;
      return true;
    }
    return false;
  }
  bool String() {
    if (!Eat('"')) return false;
    while (i_ < s_.size() && s_[i_] != '"') i_ += s_[i_] == '\\' ? 2 : 1;
    return i_++ < s_.size();
  }
  bool Number() {
    const size_t start = i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) ||
                              std::strchr("+-.eE", s_[i_]) != nullptr)) {
      i_++;
    }
    return i_ > start;
  }
  bool Value() {
    Skip();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') {
      i_++;
      if (Eat('}')) return true;
      do {
        if (!String() || !Eat(':') || !Value()) return false;
      } while (Eat(','));
      return Eat('}');
    }
    if (c == '[') {
      i_++;
      if (Eat(']')) return true;
      do {
        if (!Value()) return false;
      } while (Eat(','));
      return Eat(']');
    }
    if (c == '"') return String();
    for (const char* word : {"true", "false", "null"}) {
      if (s_.compare(i_, std::strlen(word), word) == 0) {
        i_ += std::strlen(word);
        return true;
      }
    }
    return Number();
  }

  const std::string& s_;
  size_t i_ = 0;
};

class DBBenchTest : public ::testing::Test {
 protected:
  RunResult Bench(const std::string& args) {
    return RunCommand(std::string(SHALE_DB_BENCH) + " -db=" + dir_.path() + "/db -progress=false " +
                      args);
  }
  // The result lines ("name : X micros/op Y ops/sec ...") of an output, by benchmark name.
  static int CountResults(const std::string& output, const std::string& name) {
    const std::regex line("^" + name +
                          R"( *: +[0-9.]+ micros/op [0-9]+ ops/sec [0-9.]+ seconds [0-9]+ operations;.*)");
    std::istringstream in(output);
    std::string l;
    int n = 0;
    while (std::getline(in, l)) n += std::regex_match(l, line);
    return n;
  }
  ScratchDir dir_;
};

TEST_F(DBBenchTest, ScoreboardCommandLinesRunAndReportInRocksDbFormat) {
  const std::string common =
      "-key_size=16 -value_size=100 -compression_type=none -bloom_bits=10 -cache_size=8388608 "
      "-threads=1 ";
  RunResult r = Bench(common + "-benchmarks=fillseq,fillrandom,readrandom,readseq -num=2000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* b : {"fillseq", "fillrandom", "readrandom", "readseq"}) {
    EXPECT_EQ(CountResults(r.output, b), 1) << b << "\n" << r.output;
  }
  EXPECT_NE(r.output.find("found)"), std::string::npos) << r.output;
  r = Bench(common + "-benchmarks=fillrandom,multireadrandom -num=2000 -batch_size=32 "
                     "-multiread_batched=true -multiread_stride=16");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CountResults(r.output, "multireadrandom"), 1) << r.output;
  // B7's two steps, scaled down.
  ASSERT_EQ(Bench(common + "-benchmarks=fillrandom -num=3000 -value_size=256").exit_code, 0);
  r = Bench(common + "-use_existing_db=true -use_direct_reads=true -cache_size=65536 "
                     "-benchmarks=multireadrandom -num=3000 -value_size=256 -batch_size=32 "
                     "-multiread_batched=true -async_io=true -duration=1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CountResults(r.output, "multireadrandom"), 1) << r.output;
  // B8's two steps, scaled down.
  ASSERT_EQ(Bench(common + "-benchmarks=mergerandom -merge_operator=StringAppendOperator -num=4 "
                           "-writes=200 -value_size=64 -write_buffer_size=104857600")
                .exit_code,
            0);
  r = Bench(common + "-benchmarks=readrandomoperands -use_existing_db=true "
                     "-avoid_flush_during_recovery=true -write_buffer_size=104857600 "
                     "-merge_operator=StringAppendOperator -num=4 -threads=2 -duration=1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CountResults(r.output, "readrandomoperands"), 1) << r.output;
}

TEST_F(DBBenchTest, ReportJsonIsValidAndHasEveryBenchmark) {
  const std::string json = dir_.path() + "/report.json";
  RunResult r = Bench("-benchmarks=fillrandom,readrandom -num=1000 -report_json=" + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream f(json);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_TRUE(JsonChecker(text.str()).Valid()) << text.str();
  for (const char* key : {"\"fillrandom\"", "\"readrandom\"", "\"ops_per_sec\"", "\"p99\"",
                          "\"seed\""}) {
    EXPECT_NE(text.str().find(key), std::string::npos) << key;
  }
  EXPECT_FALSE(JsonChecker("{\"a\": [1, 2,]}").Valid());
  EXPECT_FALSE(JsonChecker("{\"a\": 1").Valid());
}

TEST_F(DBBenchTest, BadFlagsAndUnknownBenchmarksExitTwo) {
  for (const char* args : {"-no_such_flag=1", "-num=abc", "-num=-5", "-compression_type=lz4",
                           "-benchmarks=frobnicate -num=10", "-threads=0",
                           "-merge_operator=nope"}) {
    RunResult r = Bench(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_FALSE(r.output.empty()) << args;
  }
}

#endif  // SHALE_DB_BENCH

}  // namespace
}  // namespace shale::test
