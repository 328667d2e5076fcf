#!/usr/bin/env python3
"""Summarizes the compactions an info log describes (shale's LOG, or RocksDB's: both write
EVENT_LOG_v1 lines, see docs/info-log.md).

    tools/compaction_report.py [-v] LOG.old.123 LOG.old.456 LOG

Give the logs oldest first (a DB's LOG.old.* files by number, then LOG): an input file's size
comes from the table_file_creation event that created it, which may be in an earlier log, and a
compaction that started in one log may finish in the next (a log set aside at
max_log_file_size). Job numbers start again with each process: a compaction_started event
replaces an unfinished one of the same job, which a process that stopped left behind.
Prints, per kind of compaction (input level -> output level), how many ran, the bytes read from
each of the two levels and their ratio (bytes of the output level rewritten per byte moved
down), and the bytes written; with -v, one line per compaction too.
"""

import json
import re
import sys
from collections import defaultdict

EVENT = re.compile(r"EVENT_LOG_v1 (\{.*\})\s*$")
FILES = re.compile(r"^files_L(\d+)$")


def events(paths):
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                m = EVENT.search(line)
                if not m:
                    continue
                try:
                    yield json.loads(m.group(1))
                except json.JSONDecodeError:
                    continue


def mb(n):
    return n / 1048576.0


def main(argv):
    verbose = "-v" in argv
    paths = [a for a in argv if a != "-v"]
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sizes = {}  # file number -> bytes
    started = {}  # job -> (from level, to level, bytes per level, files per level)
    kinds = defaultdict(lambda: {"count": 0, "upper": 0, "lower": 0, "written": 0,
                                 "unknown": 0})
    moves = defaultdict(lambda: [0, 0])
    for e in events(paths):
        kind = e.get("event")
        if kind == "table_file_creation":
            sizes[e["file_number"]] = e.get("file_size", 0)
        elif kind == "compaction_started":
            levels = sorted(int(FILES.match(k).group(1)) for k in e if FILES.match(k))
            if not levels:
                continue
            out = e.get("output_level", levels[-1])
            upper = levels[0]
            got = {}
            unknown = 0
            for level in levels:
                files = e["files_L%d" % level]
                if "bytes_L%d" % level in e:
                    got[level] = e["bytes_L%d" % level]
                else:
                    got[level] = sum(sizes.get(n, 0) for n in files)
                    unknown += sum(1 for n in files if n not in sizes)
            started[e["job"]] = (upper, out, got, unknown,
                                 {lv: len(e["files_L%d" % lv]) for lv in levels})
        elif kind == "compaction_finished":
            s = started.pop(e["job"], None)
            if s is None:
                continue
            upper, out, got, unknown, nfiles = s
            k = kinds[(upper, out)]
            k["count"] += 1
            up = got.get(upper, 0)
            low = got.get(out, 0) if out != upper else 0
            k["upper"] += up
            k["lower"] += low
            k["written"] += e.get("total_output_size", 0)
            k["unknown"] += unknown
            if verbose:
                print("job %5d  L%d -> L%d  L%d %2d files %8.1f MB  L%d %2d files %8.1f MB  "
                      "ratio %5.2f  wrote %8.1f MB" %
                      (e["job"], upper, out, upper, nfiles.get(upper, 0), mb(up), out,
                       nfiles.get(out, 0) if out != upper else 0, mb(low),
                       low / up if up else 0, mb(e.get("total_output_size", 0))))
        elif kind == "trivial_move":
            m = moves[e.get("destination_level", -1)]
            m[0] += e.get("files", 1)
            m[1] += e.get("total_files_size", 0)
    print("%-10s %6s %12s %12s %7s %12s" % ("kind", "count", "upper MB", "lower MB", "ratio",
                                             "written MB"))
    total_written = 0
    for (upper, out), k in sorted(kinds.items()):
        total_written += k["written"]
        print("L%d -> L%-4d %6d %12.1f %12.1f %7.2f %12.1f%s" %
              (upper, out, k["count"], mb(k["upper"]), mb(k["lower"]),
               k["lower"] / k["upper"] if k["upper"] else 0, mb(k["written"]),
               "  (%d input files of unknown size)" % k["unknown"] if k["unknown"] else ""))
    for dst, (count, size) in sorted(moves.items()):
        print("moved to L%d without rewriting: %d files, %.1f MB" % (dst, count, mb(size)))
    print("compactions wrote %.1f MB" % mb(total_written))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
