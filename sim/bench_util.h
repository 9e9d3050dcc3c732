// SPDX-License-Identifier: Apache-2.0
// What the benches (tpu_mxu_bench, tpu_hbm_replay, tpu_accel_bench) share: the command line as
// typed, and their CSV files (metadata in '#' lines as key=value, which gnuplot and
// scripts/report.py skip, then the rows).
#pragma once

#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>

namespace tpu::bench {

// The command line as typed, arguments the shell would split or expand in single quotes.
inline std::string CommandLine(int argc, char** argv) {
  std::string cmd;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.empty() || a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_=./,:+@%") != std::string::npos) {
      std::string q = "'";
      for (const char ch : a) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      a = q + "'";
    }
    cmd += (i ? " " : "") + a;
  }
  return cmd;
}

// A CSV field, quoted when it holds a comma, a quote or a line break.
inline std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (const char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

// A bench's --csv file: opened before the runs (a path that cannot be written fails at once,
// with std::runtime_error), starting with the tool's name, its command line and the date.
// Closed (is_open() false) when no path was given: then Meta and the rows write nothing.
class CsvFile {
 public:
  void Open(const std::string& path, const char* tool, int argc, char** argv) {
    f_.open(path);
    if (!f_) throw std::runtime_error(fmt::format("--csv: cannot write '{}'", path));
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    f_ << fmt::format("# tool={}\n# command={}\n# date={}\n", tool, CommandLine(argc, argv), date);
  }
  // Appends rows to a file another run opened (the bench's per-engine variants).
  void Append(const std::string& path) {
    f_.open(path, std::ios::app);
    if (!f_) throw std::runtime_error(fmt::format("--csv-append: cannot write '{}'", path));
  }
  bool is_open() const { return f_.is_open(); }
  void Meta(const std::string& key, const std::string& value) {
    if (f_.is_open()) f_ << fmt::format("# {}={}\n", key, value);
  }
  // Writes one line (a header or a row, without its line break) and flushes it.
  void Line(const std::string& line) {
    if (!f_.is_open()) return;
    f_ << line << '\n';
    f_.flush();
  }
  std::ofstream& stream() { return f_; }

 private:
  std::ofstream f_;
};

}  // namespace tpu::bench
