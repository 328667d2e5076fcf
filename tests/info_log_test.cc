// The info log: the LOG file a DB writes (what it holds, how old logs are set aside and
// trimmed, where db_log_dir puts them), an application's own Logger, levels, and that the log
// files never disturb the DB's own files.
#include "src/base/info_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "shale/db.h"
#include "shale/logger.h"
#include "src/base/filename.h"
#include "src/util/event_log.h"
#include "tests/db_test_util.h"

namespace shale::test {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

// Names in dir that start with prefix.
std::vector<std::string> Entries(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(prefix)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class InfoLogTest : public DBTestBase {
 protected:
  std::string LogText() { return ReadAll(dbname_ + "/LOG"); }
  // Two flushed L0 files, then one compaction of both into L1.
  void FlushTwiceAndCompact() {
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < 100; i++)
        ASSERT_TRUE(Put(NumberedKey(i), "v" + std::to_string(round)).ok());
      ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    }
    ASSERT_TRUE(db_->CompactRange(CompactRangeOptions(), nullptr, nullptr).ok());
  }
};

TEST_F(InfoLogTest, OpenWritesHeaderOptionsAndEvents) {
  options_.write_buffer_size = 1 << 20;
  Open();
  FlushTwiceAndCompact();
  Close();
  const std::string log = LogText();
  EXPECT_NE(log.find("shale version "), std::string::npos);
  EXPECT_NE(log.find("DB path: " + dbname_), std::string::npos);
  EXPECT_NE(log.find("Options.write_buffer_size: 1048576"), std::string::npos);
  EXPECT_NE(log.find("Options for column family [default]"), std::string::npos);
  EXPECT_NE(log.find("Options.max_background_jobs: 2"), std::string::npos);
  EXPECT_NE(log.find("DB opened: 1 column families"), std::string::npos);
  for (const char* event : {"flush_started", "flush_finished", "table_file_creation",
                            "compaction_started", "compaction_finished", "table_file_deletion"}) {
    EXPECT_NE(log.find(std::string("\"event\": \"") + event + "\""), std::string::npos) << event;
  }
  EXPECT_NE(log.find("\"files_L0\": ["), std::string::npos);
  EXPECT_NE(log.find("\"compaction_reason\": \"ManualCompaction\""), std::string::npos);
  // The manual compaction merged the two flushes' 200 entries into the 100 newest.
  EXPECT_NE(log.find("\"num_input_records\": 200, \"num_output_records\": 100"), std::string::npos);
  EXPECT_NE(log.find("DB closed: OK"), std::string::npos);
  // Every line starts with a time stamp and a thread id; every event line is one JSON object.
  for (const std::string& line : Lines(log)) {
    ASSERT_GE(line.size(), 27u) << line;
    EXPECT_EQ(line[4], '/') << line;
    EXPECT_EQ(line[10], '-') << line;
    EXPECT_EQ(line[19], '.') << line;
    const size_t at = line.find("EVENT_LOG_v1 ");
    if (at == std::string::npos) continue;
    const std::string json = line.substr(at + 13);
    EXPECT_EQ(json.front(), '{') << line;
    EXPECT_EQ(json.back(), '}') << line;
    EXPECT_EQ(std::count(json.begin(), json.end(), '"') % 2, 0) << line;
    EXPECT_NE(json.find("\"time_micros\": "), std::string::npos) << line;
  }
}

TEST_F(InfoLogTest, ReopenSetsTheOldLogAsideAndKeepsAtMostKeepLogFileNum) {
  options_.keep_log_file_num = 3;
  for (int i = 0; i < 5; i++) {
    Open();
    ASSERT_TRUE(Put("k", std::to_string(i)).ok());
    Close();
  }
  const std::vector<std::string> logs = Entries(dbname_, "LOG");
  ASSERT_EQ(logs.size(), 3u);  // LOG and the two newest old ones
  EXPECT_EQ(logs[0], "LOG");
  EXPECT_TRUE(logs[1].starts_with("LOG.old.")) << logs[1];
  EXPECT_TRUE(logs[2].starts_with("LOG.old.")) << logs[2];
  // The DB still opens, and the log files took no file numbers: the tables written next are
  // numbered as if they were not there.
  Open();
  ASSERT_EQ(Get("k"), "4");
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  for (const std::string& name : Entries(dbname_, "")) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kTable) {
      EXPECT_LT(number, 1000u) << name;
    }
  }
  Close();
}

TEST_F(InfoLogTest, MaxLogFileSizeStartsANewLog) {
  options_.max_log_file_size = 2048;
  options_.keep_log_file_num = 100;
  Open();
  FlushTwiceAndCompact();
  Close();
  const std::vector<std::string> logs = Entries(dbname_, "LOG");
  ASSERT_GE(logs.size(), 3u);  // the options alone fill one log
  for (const std::string& name : logs) {
    // A log is set aside once a line takes it to the bound: at most one line past it.
    EXPECT_LT(std::filesystem::file_size(dbname_ + "/" + name), 2048u + 1024u) << name;
  }
  std::string all;
  for (const std::string& name : logs) all += ReadAll(dbname_ + "/" + name);
  EXPECT_NE(all.find("compaction_finished"), std::string::npos);
}

TEST_F(InfoLogTest, LogFileTimeToRollStartsANewLogOnceTheLogIsOld) {
  options_.log_file_time_to_roll = 1;
  Open();
  ASSERT_EQ(Entries(dbname_, "LOG").size(), 1u);
  ASSERT_TRUE(Put("k", "v").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // logs lines, none a second after the start
  EXPECT_EQ(Entries(dbname_, "LOG").size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_TRUE(Put("k", "w").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // its first line finds the log too old
  Close();
  const std::vector<std::string> logs = Entries(dbname_, "LOG");
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_NE(ReadAll(dbname_ + "/LOG").find("DB closed: OK"), std::string::npos);
  EXPECT_NE(ReadAll(dbname_ + "/" + logs[1]).find("DB opened"), std::string::npos);
}

TEST_F(InfoLogTest, DbLogDirHoldsTheLogsAndDestroyDBRemovesThem) {
  ScratchDir log_dir;
  options_.db_log_dir = log_dir.path() + "/logs";  // created at Open
  Open();
  Close();
  Open();
  Close();
  EXPECT_TRUE(Entries(dbname_, "LOG").empty());
  const std::string name = InfoLogName(dbname_, options_.db_log_dir);
  EXPECT_TRUE(name.ends_with("_LOG")) << name;
  EXPECT_EQ(name.find('/'), std::string::npos) << name;
  const std::vector<std::string> logs = Entries(options_.db_log_dir, name);
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_NE(ReadAll(options_.db_log_dir + "/" + name).find("DB opened"), std::string::npos);
  // Another DB's log in the same directory is left alone.
  std::ofstream(options_.db_log_dir + "/other_LOG") << "x";
  ASSERT_TRUE(DestroyDB(dbname_, options_).ok());
  EXPECT_TRUE(Entries(options_.db_log_dir, name).empty());
  EXPECT_EQ(Entries(options_.db_log_dir, "other_LOG").size(), 1u);
}

TEST_F(InfoLogTest, AnApplicationLoggerGetsTheMessagesAndNoFileIsWritten) {
  auto logger = std::make_shared<MemoryLogger>();
  options_.info_log = logger;
  Open();
  FlushTwiceAndCompact();
  Close();
  EXPECT_TRUE(Entries(dbname_, "LOG").empty());
  EXPECT_TRUE(logger->Has("shale version"));
  EXPECT_TRUE(logger->Has("\"event\": \"compaction_finished\""));
  EXPECT_TRUE(logger->Has("DB closed"));
  // The application's logger stays usable after the DB is gone.
  Info(std::shared_ptr<Logger>(logger), "after %d", 42);
  EXPECT_TRUE(logger->Has("after 42"));
}

TEST_F(InfoLogTest, LevelsFilterMessagesButNotTheHeader) {
  auto logger = std::make_shared<MemoryLogger>(WARN_LEVEL);
  options_.info_log = logger;
  Open();
  FlushTwiceAndCompact();
  Close();
  EXPECT_TRUE(logger->Has("Options.write_buffer_size"));  // HEADER_LEVEL: always
  EXPECT_FALSE(logger->Has("flush_started"));
  EXPECT_FALSE(logger->Has("DB opened"));

  // The file logger takes info_log_level.
  options_.info_log = nullptr;
  options_.info_log_level = ERROR_LEVEL;
  Open();
  FlushTwiceAndCompact();
  Close();
  const std::string log = LogText();
  EXPECT_NE(log.find("Options.write_buffer_size"), std::string::npos);
  EXPECT_EQ(log.find("flush_started"), std::string::npos);
}

TEST_F(InfoLogTest, AutomaticCompactionsSayWhyTheyRan) {
  options_.level0_file_num_compaction_trigger = 2;
  Open();
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 100; i++) ASSERT_TRUE(Put(NumberedKey(i), "v").ok());
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }
  ASSERT_TRUE(db_->WaitForCompact().ok());
  Close();
  const std::string log = LogText();
  EXPECT_NE(log.find("\"compaction_reason\": \"LevelL0FilesNum\""), std::string::npos) << log;
  EXPECT_EQ(log.find("\"compaction_reason\": \"ManualCompaction\""), std::string::npos);
}

TEST_F(InfoLogTest, StatsAreDumpedEveryPeriod) {
  auto logger = std::make_shared<MemoryLogger>();
  options_.info_log = logger;
  options_.stats_dump_period_sec = 1;
  Open();
  FlushTwiceAndCompact();
  // The first dump comes a period after Open; allow a loaded machine ten.
  for (int i = 0; i < 100 && !logger->Has("------- DUMPING STATS -------"); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Close();
  EXPECT_TRUE(logger->Has("------- DUMPING STATS -------"));
  EXPECT_TRUE(logger->Has("** Compaction Stats [default] **"));
  EXPECT_TRUE(logger->Has("Options.stats_dump_period_sec: 1"));
}

TEST_F(InfoLogTest, CompactionReportSummarizesTheLog) {
  Open();
  FlushTwiceAndCompact();
  Close();
  const RunResult r =
      RunCommand("python3 " SHALE_SOURCE_DIR "/tools/compaction_report.py -v " + dbname_ + "/LOG");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // One compaction of the two L0 files (200 entries) into the base level: 100 live keys.
  EXPECT_NE(r.output.find("L0 -> L"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("L0  2 files"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("compactions wrote"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("unknown size"), std::string::npos) << r.output;
}

TEST_F(InfoLogTest, CompactionReportFollowsACompactionIntoTheNextLog) {
  // Two logs of one process, the second started (max_log_file_size) while job 5 compacted and
  // left when the process stopped during job 9, and a third of a later process, whose job 9 is
  // another compaction.
  std::filesystem::create_directories(dbname_);
  // One event line per {job, event, the rest of its JSON fields}.
  const auto write = [](const std::string& path,
                        std::vector<std::tuple<int, std::string, std::string>> events) {
    std::ofstream out(path);
    for (const auto& [job, event, fields] : events) {
      out << "2026/12/02-10:00:00.000000 7f00 EVENT_LOG_v1 {\"time_micros\": 1, \"job\": " << job
          << ", \"event\": \"" << event << "\", " << fields << "}\n";
    }
  };
  write(dbname_ + "/LOG.old.1",
        {{2, "table_file_creation", R"("file_number": 10, "file_size": 1048576)"},
         {3, "table_file_creation", R"("file_number": 11, "file_size": 2097152)"},
         {5, "compaction_started", R"("files_L0": [10], "files_L1": [11], "output_level": 1)"}});
  write(dbname_ + "/LOG.old.2",
        {{5, "compaction_finished", R"("output_level": 1, "total_output_size": 3145728)"},
         {9, "compaction_started", R"("files_L0": [10], "output_level": 1)"}});
  write(dbname_ + "/LOG",
        {{9, "compaction_started", R"("files_L1": [11], "files_L2": [], "output_level": 2)"},
         {9, "compaction_finished", R"("output_level": 2, "total_output_size": 2097152)"}});
  const RunResult r =
      RunCommand("python3 " SHALE_SOURCE_DIR "/tools/compaction_report.py " + dbname_ +
                 "/LOG.old.1 " + dbname_ + "/LOG.old.2 " + dbname_ + "/LOG");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Job 5 counted once, L0 1 MB over L1 2 MB; the stopped process's job 9 replaced by the next's.
  EXPECT_NE(r.output.find("L0 -> L1         1          1.0          2.0    2.00          3.0"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("L1 -> L2         1          2.0          0.0    0.00          2.0"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("compactions wrote 5.0 MB"), std::string::npos) << r.output;
}

TEST(LoggerTest, LevelNamesPrefixMessagesAboveInfo) {
  MemoryLogger logger(DEBUG_LEVEL);
  Log(WARN_LEVEL, &logger, "disk %s", "slow");
  Log(INFO_LEVEL, &logger, "plain");
  Log(ERROR_LEVEL, &logger, "bad %d", 7);
  Log(DEBUG_LEVEL, &logger, "detail");
  const std::vector<std::string> m = logger.messages();
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0], "[WARN] disk slow");
  EXPECT_EQ(m[1], "plain");
  EXPECT_EQ(m[2], "[ERROR] bad 7");
  EXPECT_EQ(m[3], "[DEBUG] detail");
  logger.SetInfoLogLevel(FATAL_LEVEL);
  Log(ERROR_LEVEL, &logger, "dropped");
  EXPECT_EQ(logger.messages().size(), 4u);
  Log(INFO_LEVEL, static_cast<Logger*>(nullptr), "nobody");  // no logger: nothing happens
}

TEST(LoggerTest, EventLinesEscapeStrings) {
  MemoryLogger logger;
  EventLog("test_event", 3)
      .Add("cf_name", std::string("a\"b\\c\nd"))
      .Add("files", std::vector<uint64_t>{4, 5})
      .Add("ok", true)
      .Add("ratio", 1.5)
      .Write(&logger);
  const std::vector<std::string> m = logger.messages();
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(m[0].starts_with("EVENT_LOG_v1 {\"time_micros\": ")) << m[0];
  EXPECT_NE(
      m[0].find("\"job\": 3, \"event\": \"test_event\", \"cf_name\": \"a\\\"b\\\\c\\u000ad\", "
                "\"files\": [4, 5], \"ok\": true, \"ratio\": 1.5}"),
      std::string::npos)
      << m[0];
}

TEST_F(InfoLogTest, InvalidLogOptionsAreRefused) {
  options_.keep_log_file_num = 0;
  Status s = TryOpen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("keep_log_file_num"), std::string::npos);
  options_.keep_log_file_num = 10;
  options_.info_log_level = NUM_INFO_LOG_LEVELS;
  s = TryOpen();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("info_log_level"), std::string::npos);
}

TEST_F(InfoLogTest, ALogThatCannotBeCreatedLeavesTheDBWithoutOne) {
  ScratchDir other;
  const std::string file = other.path() + "/plain_file";
  std::ofstream(file) << "x";
  options_.db_log_dir = file + "/logs";  // under a regular file: cannot be made
  Open();
  ASSERT_TRUE(Put("k", "v").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  Reopen();
  EXPECT_EQ(Get("k"), "v");
  Close();
}

TEST_F(InfoLogTest, AFailedOpenSaysWhy) {
  auto logger = std::make_shared<MemoryLogger>();
  options_.info_log = logger;
  Open();
  Close();
  // Damage: CURRENT names a MANIFEST that is not there.
  std::ofstream(dbname_ + "/CURRENT", std::ios::trunc) << "MANIFEST-999999\n";
  options_.create_if_missing = false;
  EXPECT_FALSE(TryOpen().ok());
  EXPECT_TRUE(logger->Has("Open failed: "));
}

TEST(FileLoggerTest, LinesAreBufferedUntilAWarningAFlushOrClose) {
  ScratchDir dir;
  InfoLogOptions o;
  o.fs = FileSystem::Default();
  o.dbname = dir.path();
  std::shared_ptr<Logger> logger;
  ASSERT_TRUE(FileLogger::Open(o, &logger).ok());
  const std::string path = dir.path() + "/LOG";
  Info(logger, "first");
  Info(logger, "second");
  EXPECT_EQ(ReadAll(path).find("second"), std::string::npos);  // still in the buffer
  Warn(logger, "third");
  std::string text = ReadAll(path);
  EXPECT_NE(text.find("first"), std::string::npos);
  EXPECT_NE(text.find("[WARN] third"), std::string::npos);
  Info(logger, "fourth");
  logger->Flush();
  EXPECT_NE(ReadAll(path).find("fourth"), std::string::npos);
  Info(logger, "fifth");
  ASSERT_TRUE(logger->Close().ok());
  text = ReadAll(path);
  EXPECT_NE(text.find("fifth"), std::string::npos);
  EXPECT_EQ(Lines(text).size(), 5u);
}

TEST(InfoLogConcurrentTest, ThreadsLoggingAtOnceWriteWholeLines) {
  ScratchDir dir;
  InfoLogOptions o;
  o.fs = FileSystem::Default();
  o.dbname = dir.path();
  o.max_log_file_size = 64 << 10;  // several restarts while the threads log
  o.keep_log_file_num = 1000;
  std::shared_ptr<Logger> logger;
  ASSERT_TRUE(FileLogger::Open(o, &logger).ok());
  constexpr int kThreads = 4, kLines = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&logger, t] {
      for (int i = 0; i < kLines; i++) Info(logger, "thread %d line %d end", t, i);
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_TRUE(logger->Close().ok());
  Info(logger, "after close");  // dropped, no crash
  size_t lines = 0;
  for (const std::string& name : Entries(dir.path(), "LOG")) {
    for (const std::string& line : Lines(ReadAll(dir.path() + "/" + name))) {
      EXPECT_TRUE(line.ends_with(" end")) << line;
      lines++;
    }
  }
  EXPECT_EQ(lines, static_cast<size_t>(kThreads * kLines));
  EXPECT_GE(Entries(dir.path(), "LOG.old.").size(), 2u);
}

}  // namespace
}  // namespace shale::test
