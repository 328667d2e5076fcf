// Strict command-line parsing shared by the tools: every argument must be a registered gflags
// flag with a well-formed value; anything else prints why and exits with status 2 (a typo in a
// benchmark flag must not silently run a different benchmark). -flagfile=F reads flags from F,
// one per line, under the same rules. --help (and gflags' other help flags) prints the flags of
// the source file whose name contains program, --version the version; both exit 0.
#pragma once

namespace shale::tools {

void ParseFlagsStrictly(const char* program, const char* usage, int argc, char** argv);

}  // namespace shale::tools
