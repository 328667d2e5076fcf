#include "tools/tool_flags.h"

#include <gflags/gflags.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace shale::tools {
namespace {

// gflags' own flags that print something and exit; applied as plain flags they would do
// nothing and let the tool run.
bool IsHelpFlag(const std::string& name) {
  return name == "help" || name == "helpfull" || name == "helpshort" || name == "helpxml" ||
         name == "helppackage" || name == "helpmatch" || name == "helpon";
}

[[noreturn]] void BadUsage(const char* program, const std::string& why) {
  std::fprintf(stderr, "%s: %s\n", program, why.c_str());
  std::exit(2);
}

void ApplyArgument(const char* program, const char* argv0, const std::string& text, int depth);

// A flagfile holds one flag per line ("--name=value" or "-name"); blank lines and lines
// starting with '#' are skipped. Anything else is an error, as on the command line.
void ApplyFlagFile(const char* program, const char* argv0, const std::string& path, int depth) {
  if (depth > 8) BadUsage(program, "flagfiles nested too deep at '" + path + "'");
  std::ifstream in(path);
  if (!in) BadUsage(program, "cannot read flagfile '" + path + "'");
  std::string line;
  for (int number = 1; std::getline(in, line); number++) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t last = line.find_last_not_of(" \t\r");
    const std::string flag = line.substr(first, last - first + 1);
    if (flag[0] != '-') {
      BadUsage(program, "flagfile '" + path + "' line " + std::to_string(number) +
                            ": not a flag: '" + flag + "'");
    }
    ApplyArgument(program, argv0, flag, depth + 1);
  }
}

void ApplyArgument(const char* program, const char* argv0, const std::string& text, int depth) {
  if (text.size() < 2 || text[0] != '-') BadUsage(program, "unexpected argument '" + text + "'");
  const std::string arg = text.substr(text[1] == '-' ? 2 : 1);
  const std::string name = arg.substr(0, arg.find('='));
  const bool has_value = arg.find('=') != std::string::npos;
  std::string value = has_value ? arg.substr(name.size() + 1) : "";
  if (IsHelpFlag(name)) {
    gflags::ShowUsageWithFlagsRestrict(argv0, program);
    std::exit(0);
  }
  if (name == "version") {
    std::printf("%s (shale) version %s\n", program, SHALE_VERSION);
    std::exit(0);
  }
  if (name == "flagfile") {
    if (value.empty()) BadUsage(program, "flag '-flagfile' needs a file (-flagfile=F)");
    ApplyFlagFile(program, argv0, value, depth);
    return;
  }
  if (name == "fromenv" || name == "tryfromenv" || name == "undefok") {
    BadUsage(program, "flag '-" + name + "' is not supported");
  }
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) {
    // -noflag for booleans
    if (!has_value && name.rfind("no", 0) == 0 &&
        gflags::GetCommandLineFlagInfo(name.substr(2).c_str(), &info) && info.type == "bool") {
      gflags::SetCommandLineOption(info.name.c_str(), "false");
      return;
    }
    BadUsage(program, "unknown flag '-" + name + "'");
  }
  if (!has_value) {
    if (info.type != "bool") {
      BadUsage(program, "flag '-" + name + "' needs a value (-" + name + "=...)");
    }
    value = "true";
  }
  if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
    BadUsage(program, "bad value '" + value + "' for flag '-" + name + "' (" + info.type + ")");
  }
}

}  // namespace

void ParseFlagsStrictly(const char* program, const char* usage, int argc, char** argv) {
  gflags::SetUsageMessage(usage);
  for (int i = 1; i < argc; i++) ApplyArgument(program, argv[0], argv[i], 0);
}

}  // namespace shale::tools
