// tools/db_bench end to end: the scoreboard's command lines (scaled down) run and print result
// lines in RocksDB's format; -report_json writes valid JSON with every benchmark; bad flags and
// unknown benchmarks exit 2.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <filesystem>
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
    const std::regex line(
        "^" + name +
        R"( *: +[0-9.]+ micros/op [0-9]+ ops/sec [0-9.]+ seconds [0-9]+ operations;.*)");
    std::istringstream in(output);
    std::string l;
    int n = 0;
    while (std::getline(in, l)) n += std::regex_match(l, line);
    return n;
  }
  ScratchDir dir_;
};

TEST_F(DBBenchTest, UseExistingDbWithoutADbExitsTwoAndCreatesNothing) {
  RunResult r = Bench("-use_existing_db=true -benchmarks=readrandom -num=1000");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("-use_existing_db=true needs a shale DB"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("ops/sec"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/db/CURRENT"));
}

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
  r = Bench(common +
            "-benchmarks=fillrandom,multireadrandom -num=2000 -batch_size=32 "
            "-multiread_batched=true -multiread_stride=16");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CountResults(r.output, "multireadrandom"), 1) << r.output;
  // B7's two steps, scaled down.
  ASSERT_EQ(Bench(common + "-benchmarks=fillrandom -num=3000 -value_size=256").exit_code, 0);
  r = Bench(common +
            "-use_existing_db=true -use_direct_reads=true -cache_size=65536 "
            "-benchmarks=multireadrandom -num=3000 -value_size=256 -batch_size=32 "
            "-multiread_batched=true -async_io=true -duration=1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CountResults(r.output, "multireadrandom"), 1) << r.output;
  // B8's two steps, scaled down.
  ASSERT_EQ(Bench(common + "-benchmarks=mergerandom -merge_operator=StringAppendOperator -num=4 "
                           "-writes=200 -value_size=64 -write_buffer_size=104857600")
                .exit_code,
            0);
  r = Bench(common +
            "-benchmarks=readrandomoperands -use_existing_db=true "
            "-avoid_flush_during_recovery=true -write_buffer_size=104857600 "
            "-merge_operator=StringAppendOperator -num=4 -threads=2 -duration=1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CountResults(r.output, "readrandomoperands"), 1) << r.output;
}

TEST_F(DBBenchTest, EveryBenchmarkRuns) {
  RunResult r = Bench(
      "-benchmarks=fillseq,fillrandom,filluniquerandom,overwrite,fillsync,readrandom,readseq,"
      "readreverse,seekrandom,multireadrandom,mergerandom,readrandomoperands,readwhilewriting,"
      "readrandomwriterandom,compact,waitforcompaction,stats -merge_operator=StringAppendOperator "
      "-num=3000 -seek_nexts=3 -batch_size=8 -threads=2 -benchmark_write_rate_limit=1000000 "
      "-statistics=true -perf_level=3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* b :
       {"fillseq", "fillrandom", "filluniquerandom", "overwrite", "fillsync", "readrandom",
        "readseq", "readreverse", "seekrandom", "multireadrandom", "mergerandom",
        "readrandomoperands", "readwhilewriting", "readrandomwriterandom"}) {
    EXPECT_EQ(CountResults(r.output, b), 1) << b << "\n" << r.output;
  }
  // fillsync writes num / 1000 keys per thread, as RocksDB's does.
  EXPECT_NE(r.output.find(" 6 operations;"), std::string::npos) << r.output;
  // readwhilewriting reports its readers only: threads x num reads.
  const std::regex rww(R"(readwhilewriting : .* 6000 operations;.*\(([0-9]+) of 6000 found\))");
  EXPECT_TRUE(std::regex_search(r.output, rww)) << r.output;
  // readrandomwriterandom splits its operations ~90/10 and reports the split.
  std::smatch m;
  const std::regex mixed(R"(\( reads:([0-9]+) writes:([0-9]+) total:([0-9]+) found:([0-9]+)\))");
  ASSERT_TRUE(std::regex_search(r.output, m, mixed)) << r.output;
  const int reads = std::stoi(m[1]), writes = std::stoi(m[2]), total = std::stoi(m[3]);
  EXPECT_EQ(reads + writes, total);
  EXPECT_EQ(total, 6000);
  EXPECT_GT(reads, 8 * writes / 2) << m[0];
  EXPECT_NE(r.output.find("compact      :"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("** DB Stats **"), std::string::npos) << r.output;
  // -statistics and -perf_level print their reports.
  EXPECT_NE(r.output.find("STATISTICS:\nshale.block.cache.miss COUNT : "), std::string::npos);
  EXPECT_NE(r.output.find("shale.db.get.micros P50 : "), std::string::npos);
  EXPECT_NE(r.output.find("PERF_CONTEXT:\nget_from_memtable_count = "), std::string::npos);
  EXPECT_EQ(r.output.find("PERF_CONTEXT:\nget_from_memtable_count = 0, "
                          "get_from_memtable_time = 0, get_from_output_files_time = 0, "
                          "bloom_memtable_hit_count = 0, bloom_memtable_miss_count = 0, "
                          "bloom_sst_hit_count = 0, bloom_sst_miss_count = 0, "
                          "block_cache_hit_count = 0, block_read_count = 0, "
                          "block_read_byte = 0, block_read_time = 0, "
                          "index_block_read_count = 0, filter_block_read_count = 0, "
                          "multiget_async_read_count = 0, iter_async_read_count = 0, "
                          "iter_async_batch_count = 0, internal_merge_count = 0, "
                          "get_read_bytes = 0, multiget_read_bytes = 0, "
                          "get_merge_operands_read_bytes = 0, iter_read_bytes = 0, "
                          "internal_key_skipped_count = 0, internal_delete_skipped_count = 0, "
                          "internal_range_del_reseek_count = 0, "
                          "write_thread_wait_nanos = 0, write_delay_time = 0, "
                          "write_wal_time = 0, write_memtable_time = 0\n"),
            std::string::npos)
      << "a benchmark reported an all-zero PerfContext";
}

// seekrandom with -max_scan_distance bounds each iterator that many keys from the seek key
// (below it with -reverse_iterator): no seek reads past it, however many -seek_nexts.
TEST_F(DBBenchTest, MaxScanDistanceBoundsEachSeek) {
  RunResult r = Bench("-benchmarks=fillseq -num=2000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* direction : {"false", "true"}) {
    r = Bench(std::string("-benchmarks=seekrandom,seekrandomwhilewriting -use_existing_db=true "
                          "-num=2000 -reads=300 -seek_nexts=40 -max_scan_distance=5 "
                          "-perf_level=2 -benchmark_write_rate_limit=1000000 -reverse_iterator=") +
              direction);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(CountResults(r.output, "seekrandom"), 1) << r.output;
    EXPECT_EQ(CountResults(r.output, "seekrandomwhilewriting"), 1) << r.output;
    // At most 5 keys of 16 + 100 bytes per seek in the bounded run (the first PerfContext);
    // backward 6, as the lower bound is inclusive.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(iter_read_bytes = ([0-9]+))")))
        << r.output;
    const long long bytes = std::stoll(m[1]);
    EXPECT_GT(bytes, 300 * 116) << r.output;
    EXPECT_LE(bytes, 300 * (direction == std::string("true") ? 6 : 5) * 116) << r.output;
  }
  // deleterandom deletes random keys, deleteseq every key in order: nothing is left to find.
  // 500 deletes drawn with replacement leave about 1,558 of 2,000 keys, and 2,000 random reads
  // find about as many (sigma 19); the seed is fixed so that the count does not wander.
  r = Bench(
      "-benchmarks=deleterandom,readrandom,deleteseq,readrandom -use_existing_db=true "
      "-num=2000 -deletes=500 -seed=7");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CountResults(r.output, "deleterandom"), 1) << r.output;
  EXPECT_EQ(CountResults(r.output, "deleteseq"), 1) << r.output;
  std::smatch found;
  ASSERT_TRUE(std::regex_search(r.output, found, std::regex(R"(\(([0-9]+) of 2000 found\))")));
  EXPECT_LT(std::stoi(found[1]), 2000) << r.output;  // some deleted
  EXPECT_GT(std::stoi(found[1]), 1500) << r.output;  // at most 500
  r = Bench("-benchmarks=deleteseq,readseq -use_existing_db=true -num=2000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(readseq +:.* 0 operations;)"))) << r.output;
  r = Bench("-benchmarks=fillseq -num=2000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Unbounded, the same seeks read up to 41 keys each.
  r = Bench(
      "-benchmarks=seekrandom -use_existing_db=true -num=2000 -reads=300 -seek_nexts=40 "
      "-perf_level=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(iter_read_bytes = ([0-9]+))")));
  EXPECT_GT(std::stoll(m[1]), 300 * 10 * 116) << r.output;
}

// -num_column_families spreads keys over the families (key k in family k % N) for writes and
// point reads, and the DB keeps them: a later run opens them all, every key is found.
TEST_F(DBBenchTest, ColumnFamiliesHoldTheirShareOfTheKeys) {
  RunResult r = Bench("-benchmarks=fillseq,readrandom -num=4000 -num_column_families=4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(4000 of 4000 found)"), std::string::npos) << r.output;
  r = Bench("-benchmarks=readrandom,stats -num=4000 -num_column_families=4 -use_existing_db=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(4000 of 4000 found)"), std::string::npos) << r.output;
  // The default family alone holds a quarter of them (keys 0, 4, 8, ...).
  r = Bench("-benchmarks=readseq -num=4000 -num_column_families=4 -use_existing_db=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(1000 of 1000 found)"), std::string::npos) << r.output;
  // Opening without naming the families fails, naming them.
  r = Bench("-benchmarks=readrandom -num=4000 -use_existing_db=true");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("column_family_name_000001"), std::string::npos) << r.output;
}

TEST_F(DBBenchTest, ReportJsonIsValidAndHasEveryBenchmark) {
  const std::string json = dir_.path() + "/report.json";
  RunResult r = Bench("-benchmarks=fillrandom,readrandom -num=1000 -report_json=" + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream f(json);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_TRUE(JsonChecker(text.str()).Valid()) << text.str();
  for (const char* key :
       {"\"fillrandom\"", "\"readrandom\"", "\"ops_per_sec\"", "\"p99\"", "\"seed\""}) {
    EXPECT_NE(text.str().find(key), std::string::npos) << key;
  }
  EXPECT_FALSE(JsonChecker("{\"a\": [1, 2,]}").Valid());
  EXPECT_FALSE(JsonChecker("{\"a\": 1").Valid());
}

TEST_F(DBBenchTest, BadFlagsAndUnknownBenchmarksExitTwo) {
  for (const char* args :
       {"-no_such_flag=1", "-num=abc", "-num=-5", "-compression_type=lz4",
        "-benchmarks=frobnicate -num=10", "-threads=0", "-merge_operator=nope",
        "-readwritepercent=101", "-perf_level=9", "-seek_nexts=-1", "-entries_per_batch=-2"}) {
    RunResult r = Bench(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_FALSE(r.output.empty()) << args;
  }
  // A typo anywhere in the list stops the run before the first benchmark.
  RunResult r = Bench("-benchmarks=fillseq,fillrandm -num=10");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(CountResults(r.output, "fillseq"), 0) << r.output;
  // A value that only DB::Open checks is bad usage too.
  r = Bench("-benchmarks=fillseq -num=10 -bloom_bits=1000");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bloom_bits_per_key"), std::string::npos) << r.output;
}

// gflags' help and version flags print and exit; they never run the default suite.
TEST_F(DBBenchTest, HelpAndVersionFlagsExitWithoutRunning) {
  for (const char* args : {"--version", "-helpfull", "--helpshort", "-help"}) {
    RunResult r = Bench(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("micros/op"), std::string::npos) << args << "\n" << r.output;
  }
  EXPECT_NE(Bench("--version").output.find("version 0."), std::string::npos);
}

// -flagfile: one flag per line under the command line's rules; a bad line is an error.
TEST_F(DBBenchTest, FlagfileLinesAreCheckedLikeArguments) {
  const std::string good = dir_.path() + "/good.flags";
  std::ofstream(good) << "# the scoreboard's B1 in small\n\n--benchmarks=fillseq\n  -num=50\n";
  RunResult r = Bench("-flagfile=" + good);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CountResults(r.output, "fillseq"), 1) << r.output;
  EXPECT_NE(r.output.find("Entries:    50"), std::string::npos) << r.output;
  const std::string bad = dir_.path() + "/bad.flags";
  std::ofstream(bad) << "--benchmarks=fillseq\n--nmu=50\n";
  r = Bench("-flagfile=" + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nmu"), std::string::npos) << r.output;
  const std::string text = dir_.path() + "/text.flags";
  std::ofstream(text) << "num=50\n";
  EXPECT_EQ(Bench("-flagfile=" + text).exit_code, 2);
  EXPECT_EQ(Bench("-flagfile=" + dir_.path() + "/missing.flags").exit_code, 2);
}

#endif  // SHALE_DB_BENCH

}  // namespace
}  // namespace shale::test
