// SPDX-License-Identifier: Apache-2.0
// Accelerator configurations (accel::Config) from a name ("16x16_1ch") or a JSON file, their
// canonical names, and the Verilog parameters of the accelerator top `tpu_accel` they stand for.
//
// A name is `RxC_Nch`: R and C in 1..128 (kMaxArrayDim), N in {1, 2, 4, 8}, every other field
// at its default. A JSON file holds an object with any of these keys (every other key is an
// error):
//
//   the keys of Params() below (rtl/builds.json's accel_params; `tpusim --config-keys` lists
//   them with their ranges, defaults and meanings), and
//   mode              "ieee" / "ftz"        "ieee"   numerics mode (a register, not a parameter)
//
// The HBM address space behind the port is 2^31 bytes per channel. Bad input throws
// std::invalid_argument naming the key (or the name's part) and the allowed range.
#pragma once

#include <string>
#include <vector>

#include "tpu/builds.h"
#include "tpu/hbm/hbm_presets.h"
#include "tpu/tb/accel_sim.h"

namespace tpu::tb::accel {

inline constexpr uint64_t kHbmBytesPerChannel = uint64_t(1) << 31;
// The largest array side a configuration may have (the TPU's matrix unit: 128x128). Arrays
// larger than 32x32 build hierarchically (sim/CMakeLists.txt, docs/accel.md).
inline constexpr int kMaxArrayDim = 128;

// The accelerator's parameters a configuration sets, one row each, from rtl/builds.json's
// accel_params (through tpu/builds.h): tpu_accel's Verilog name, the configuration file's key,
// the kind, the range, the default (tpu_accel.sv's own, which CMake reads from the RTL) and a
// description. This table drives parsing (names, files, builds), checking, the canonical and
// engine names, VerilogParams (the engines' and the SystemC model's parameters) and tpusim's
// --config-keys, so a new parameter is the RTL plus one row of accel_params. A parameter the
// golden model reads lives in a field of Config (FieldOf in accel_config.cpp says which); every
// other one, which only the RTL sees (FetchDepth, LoadDepth, ...), in Config::rtl_params.
struct Param {
  enum class Kind { kInt, kChannels, kPreset, kBool };
  const char* verilog;  // "ActDepth"
  const char* key;      // "act_depth"
  Kind kind;            // kChannels: 1, 2, 4 or 8; kPreset: an index or a name of the table
                        // of HBM presets; kBool: true / false in files, 1 / 0 in Verilog
  int lo, hi;           // the range (kPreset: 0 .. hbm::kNumPresets - 1, from Hi())
  int def;
  const char* help;
  int Hi() const { return kind == Kind::kPreset ? hbm::kNumPresets - 1 : hi; }
  int Get(const Config& c) const;
  void Set(Config& c, int v) const;
};
// The rows, in accel_params' order.
const std::vector<Param>& Params();

// The default configuration of an R×C array with N channels (checks the ranges).
Config MakeConfig(int rows, int cols, int channels);
// "RxC_Nch".
Config ConfigFromName(const std::string& name);
// The configuration of a Verilated accelerator model of rtl/builds.json (e.g. "accel_3x5").
Config ConfigFromBuild(const std::string& model);
// A JSON object (the text); `what` names the source in messages (e.g. the file name).
Config ConfigFromJson(const std::string& text, const std::string& what = "config");
// Reads and parses a JSON file.
Config ConfigFromFile(const std::string& path);
// A name, or a file when the argument ends in ".json".
Config ResolveConfig(const std::string& name_or_file);

// The keys a configuration file may have: "rows, cols, ..., per_bank_refresh, mode".
std::string ConfigKeys();
// Every key with its Verilog name, default, range and meaning, one a line (tpusim
// --config-keys).
std::string ParamsTable();

// Throws std::invalid_argument naming the field when a value is out of range.
void Validate(const Config& cfg);

// "RxC_Nch" when every field but R, C and N is at its default, else "RxC_Nch_<8 hex digits>"
// with an FNV-1a hash of every field (mode included).
std::string CanonicalName(const Config& cfg);
// The name of the Verilated build the configuration runs on: the canonical name of the
// configuration with the numerics mode (a register, not a parameter) left at its default. It is
// also a suffix for C identifiers (`accel_<engine name>`).
std::string EngineName(const Config& cfg);

// The parameters of `tpu_accel` as "Name=Value" (Params()' order), and the same as Verilator's
// "-GName=Value".
std::vector<std::string> VerilogParams(const Config& cfg);
std::vector<std::string> VerilogArgs(const Config& cfg);

// One readable line: "16x16 array, act 2048 x 16 bf16, ..., ieee".
std::string Describe(const Config& cfg);

}  // namespace tpu::tb::accel
