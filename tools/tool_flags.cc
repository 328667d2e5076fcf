#include "tools/tool_flags.h"

#include <gflags/gflags.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace shale::tools {

// Checks every argument against the registered flags before gflags sees them, so that a typo
// is an error (exit 2) instead of a silently ignored setting.
void ParseFlagsStrictly(const char* program, const char* usage, int argc, char** argv) {
  gflags::SetUsageMessage(usage);
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-help") {
      gflags::ShowUsageWithFlagsRestrict(argv[0], program);
      std::exit(0);
    }
    if (arg.size() < 2 || arg[0] != '-') {
      std::fprintf(stderr, "%s: unexpected argument '%s'\n", program, arg.c_str());
      std::exit(2);
    }
    arg = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string name = arg.substr(0, arg.find('='));
    bool has_value = arg.find('=') != std::string::npos;
    std::string value = has_value ? arg.substr(name.size() + 1) : "";
    gflags::CommandLineFlagInfo info;
    if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) {
      // -noflag for booleans
      if (!has_value && name.rfind("no", 0) == 0 &&
          gflags::GetCommandLineFlagInfo(name.substr(2).c_str(), &info) && info.type == "bool") {
        gflags::SetCommandLineOption(info.name.c_str(), "false");
        continue;
      }
      std::fprintf(stderr, "%s: unknown flag '-%s'\n", program, name.c_str());
      std::exit(2);
    }
    if (!has_value) {
      if (info.type != "bool") {
        std::fprintf(stderr, "%s: flag '-%s' needs a value (-%s=...)\n", program, name.c_str(),
                     name.c_str());
        std::exit(2);
      }
      value = "true";
    }
    if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
      std::fprintf(stderr, "%s: bad value '%s' for flag '-%s' (%s)\n", program, value.c_str(),
                   name.c_str(), info.type.c_str());
      std::exit(2);
    }
  }
}

}  // namespace shale::tools
