// SPDX-License-Identifier: Apache-2.0
// Accelerator configurations (accel::Config) from a name ("16x16_1ch") or a JSON file, their
// canonical names, and the Verilog parameters of the accelerator top `tpu_accel` they stand for.
//
// A name is `RxC_Nch`: R and C in 1..128 (kMaxArrayDim), N in {1, 2, 4, 8}, every other field
// at its default. A JSON file holds an object with any of these keys (every other key is an
// error):
//
//   key               range                 default  what
//   rows, cols        1..128                16       the array (R, C)
//   channels          1, 2, 4, 8            1        HBM2 channels behind the port
//   act_depth         1..65535              2048     activation-buffer rows of R bf16
//   wgt_depth         1..65535              2048     weight-buffer rows of C bf16
//   acc_depth         1..65535              4096     accumulator rows of C fp32
//   queue_depth       1..1024               32       per-module dispatch queues
//   preset            0, 1, 2               0        HBM timing (2.0 Gb/s, 2.4 Gb/s, checker test)
//   per_bank_refresh  true / false          true
//   mode              "ieee" / "ftz"        "ieee"   numerics mode (a register, not a parameter)
//
// The HBM address space behind the port is 2^31 bytes per channel. Bad input throws
// std::invalid_argument naming the key (or the name's part) and the allowed range.
#pragma once

#include <string>
#include <vector>

#include "tpu/builds.h"
#include "tpu/tb/accel_sim.h"

namespace tpu::tb::accel {

// The defaults of a named configuration (rtl/builds.json, accel_defaults).
inline constexpr int kDefaultActDepth = builds::kAccelDefaultActDepth;
inline constexpr int kDefaultWgtDepth = builds::kAccelDefaultWgtDepth;
inline constexpr int kDefaultAccDepth = builds::kAccelDefaultAccDepth;
inline constexpr int kDefaultQueueDepth = builds::kAccelDefaultQueueDepth;
inline constexpr int kDefaultPreset = builds::kAccelDefaultPreset;
inline constexpr bool kDefaultPerBankRefresh = builds::kAccelDefaultPerBankRefresh != 0;
inline constexpr uint64_t kHbmBytesPerChannel = uint64_t(1) << 31;
// The largest array side a configuration may have (the TPU's matrix unit: 128x128). Arrays
// larger than 32x32 build hierarchically (sim/CMakeLists.txt, docs/accel.md).
inline constexpr int kMaxArrayDim = 128;

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

// Throws std::invalid_argument naming the field when a value is out of range.
void Validate(const Config& cfg);

// "RxC_Nch" when every field but R, C and N is at its default, else "RxC_Nch_<8 hex digits>"
// with an FNV-1a hash of every field (mode included).
std::string CanonicalName(const Config& cfg);
// The name of the Verilated build the configuration runs on: the canonical name of the
// configuration with the numerics mode (a register, not a parameter) left at its default. It is
// also a suffix for C identifiers (`accel_<engine name>`).
std::string EngineName(const Config& cfg);

// The parameters of `tpu_accel` as "Name=Value" (Rows, Cols, Channels, ActDepth, WgtDepth,
// AccDepth, QueueDepth, Preset, PerBankRefresh), and the same as Verilator's "-GName=Value".
std::vector<std::string> VerilogParams(const Config& cfg);
std::vector<std::string> VerilogArgs(const Config& cfg);

// One readable line: "16x16 array, act 2048 x 16 bf16, ..., ieee".
std::string Describe(const Config& cfg);

}  // namespace tpu::tb::accel
