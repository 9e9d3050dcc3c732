// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/accel_config.h"

#include <fmt/format.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace tpu::tb::accel {
namespace {

[[noreturn]] void Bad(const std::string& msg) {
  throw std::invalid_argument(msg);
}

void CheckRange(const std::string& what, const char* key, long long v, long long lo, long long hi) {
  if (v < lo || v > hi)
    Bad(fmt::format("{}: {} = {} is out of range {}..{}", what, key, v, lo, hi));
}

void CheckChannels(const std::string& what, const char* key, long long v) {
  if (v != 1 && v != 2 && v != 4 && v != 8) {
    Bad(fmt::format("{}: {} = {} must be one of 1, 2, 4, 8", what, key, v));
  }
}

// The JSON spelling of a mode.
const char* ModeKey(num::Mode m) {
  return m == num::Mode::kFtz ? "ftz" : "ieee";
}

// Calls f(name, value) for each "Name=Value" of a comma-separated list (rtl/builds.json's
// parameter lists, as tpu/builds.h has them).
void ForEachParam(const char* list, const std::function<void(const std::string&, int)>& f) {
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    f(item.substr(0, eq), std::stoi(item.substr(eq + 1)));
  }
}

// The buffer and queue depths an engine name RxC_Nch stands for: the accelerator defaults, with
// its preset's values where rtl/builds.json's engine_presets has one.
struct Depths {
  int act = kDefaultActDepth, wgt = kDefaultWgtDepth, acc = kDefaultAccDepth,
      queue = kDefaultQueueDepth;
};
Depths NamedDepths(const std::string& name) {
  Depths d;
  for (const builds::Preset& p : builds::kPresets) {
    if (name != p.name) continue;
    ForEachParam(p.params, [&](const std::string& key, int v) {
      if (key == "ActDepth") d.act = v;
      if (key == "WgtDepth") d.wgt = v;
      if (key == "AccDepth") d.acc = v;
      if (key == "QueueDepth") d.queue = v;
    });
  }
  return d;
}

void Finish(Config& c) {
  c.machine.hbm_bytes = kHbmBytesPerChannel * uint64_t(c.channels);
  Validate(c);
  c.name = CanonicalName(c);
}

bool AllDefault(const Config& c, bool with_mode) {
  const auto& m = c.machine;
  const Depths d = NamedDepths(fmt::format("{}x{}_{}ch", m.r, m.c, c.channels));
  return m.act_depth == d.act && m.wgt_depth == d.wgt && m.acc_depth == d.acc &&
         m.queue_depth == d.queue && c.preset == kDefaultPreset &&
         c.per_bank_refresh == kDefaultPerBankRefresh && (!with_mode || m.mode == num::Mode::kIeee);
}

std::string Hashed(const Config& c, bool with_mode) {
  const auto& m = c.machine;
  const std::string base = fmt::format("{}x{}_{}ch", m.r, m.c, c.channels);
  if (AllDefault(c, with_mode)) return base;
  const std::string fields = fmt::format(
      "rows={};cols={};channels={};act_depth={};wgt_depth={};acc_depth={};queue_depth={};"
      "preset={};per_bank_refresh={};mode={}",
      m.r, m.c, c.channels, m.act_depth, m.wgt_depth, m.acc_depth, m.queue_depth, c.preset,
      c.per_bank_refresh ? 1 : 0, with_mode ? ModeKey(m.mode) : "ieee");
  uint32_t h = 0x811C9DC5u;  // FNV-1a, 32 bits
  for (unsigned char ch : fields) h = (h ^ ch) * 0x01000193u;
  return fmt::format("{}_{:08x}", base, h);
}

}  // namespace

void Validate(const Config& c) {
  const std::string what = "config";
  const auto& m = c.machine;
  CheckRange(what, "rows", m.r, 1, kMaxArrayDim);
  CheckRange(what, "cols", m.c, 1, kMaxArrayDim);
  CheckChannels(what, "channels", c.channels);
  CheckRange(what, "act_depth", m.act_depth, 1, 65535);
  CheckRange(what, "wgt_depth", m.wgt_depth, 1, 65535);
  CheckRange(what, "acc_depth", m.acc_depth, 1, 65535);
  CheckRange(what, "queue_depth", m.queue_depth, 1, 1024);
  CheckRange(what, "preset", c.preset, 0, 2);
  if (m.hbm_bytes != kHbmBytesPerChannel * uint64_t(c.channels)) {
    Bad(fmt::format("config: hbm_bytes = {} must be 2^31 * channels = {}", m.hbm_bytes,
                    kHbmBytesPerChannel * uint64_t(c.channels)));
  }
}

Config MakeConfig(int rows, int cols, int channels) {
  Config c;
  c.machine.r = rows;
  c.machine.c = cols;
  c.machine.act_depth = kDefaultActDepth;
  c.machine.wgt_depth = kDefaultWgtDepth;
  c.machine.acc_depth = kDefaultAccDepth;
  c.machine.queue_depth = kDefaultQueueDepth;
  c.machine.mode = num::Mode::kIeee;
  c.channels = channels;
  c.preset = kDefaultPreset;
  c.per_bank_refresh = kDefaultPerBankRefresh;
  Finish(c);
  return c;
}

Config ConfigFromBuild(const std::string& model) {
  for (const builds::Model& m : builds::kModels) {
    if (model != m.name) continue;
    if (std::string(m.top) != "tpu_accel") {
      Bad(fmt::format("build '{}' is a {}, not an accelerator (rtl/builds.json)", model, m.top));
    }
    // The RTL's defaults are accel_defaults: start there, and take the parameters the machine's
    // configuration knows (the others, such as FetchDepth, are not visible to programs).
    Config c = MakeConfig(16, 16, 1);
    ForEachParam(m.params, [&](const std::string& key, int v) {
      if (key == "Rows") c.machine.r = v;
      if (key == "Cols") c.machine.c = v;
      if (key == "Channels") c.channels = v;
      if (key == "ActDepth") c.machine.act_depth = v;
      if (key == "WgtDepth") c.machine.wgt_depth = v;
      if (key == "AccDepth") c.machine.acc_depth = v;
      if (key == "QueueDepth") c.machine.queue_depth = v;
      if (key == "Preset") c.preset = v;
      if (key == "PerBankRefresh") c.per_bank_refresh = v != 0;
    });
    Finish(c);
    return c;
  }
  Bad(fmt::format("rtl/builds.json has no model named '{}'", model));
}

Config ConfigFromName(const std::string& name) {
  static const std::regex re("([0-9]{1,4})x([0-9]{1,4})_([0-9]{1,2})ch");
  std::smatch mt;
  if (!std::regex_match(name, mt, re)) {
    Bad(fmt::format(
        "config name '{}' is not of the form RxC_Nch (e.g. 16x16_1ch: R, C in 1..{}, N in 1, 2, "
        "4, 8) nor a .json file",
        name, kMaxArrayDim));
  }
  const std::string what = fmt::format("config name '{}'", name);
  const int r = std::stoi(mt[1]), c = std::stoi(mt[2]), n = std::stoi(mt[3]);
  CheckRange(what, "rows (R)", r, 1, kMaxArrayDim);
  CheckRange(what, "cols (C)", c, 1, kMaxArrayDim);
  CheckChannels(what, "channels (N)", n);
  Config cfg = MakeConfig(r, c, n);
  // A preset (rtl/builds.json, engine_presets) replaces some of the defaults.
  const Depths d = NamedDepths(fmt::format("{}x{}_{}ch", r, c, n));
  cfg.machine.act_depth = d.act;
  cfg.machine.wgt_depth = d.wgt;
  cfg.machine.acc_depth = d.acc;
  cfg.machine.queue_depth = d.queue;
  Finish(cfg);
  return cfg;
}

Config ConfigFromJson(const std::string& text, const std::string& what) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    Bad(fmt::format("{}: not valid JSON: {}", what, e.what()));
  }
  if (!j.is_object()) Bad(fmt::format("{}: must be a JSON object {{\"rows\": 16, ...}}", what));
  Config c = MakeConfig(16, 16, 1);
  auto& m = c.machine;
  auto integer = [&](const std::string& key, const nlohmann::json& v, long long lo, long long hi) {
    if (!v.is_number_integer()) {
      Bad(fmt::format("{}: {} must be an integer in {}..{}, got {}", what, key, lo, hi, v.dump()));
    }
    const long long x = v.get<long long>();
    CheckRange(what, key.c_str(), x, lo, hi);
    return int(x);
  };
  for (const auto& [key, v] : j.items()) {
    if (key == "rows") {
      m.r = integer(key, v, 1, kMaxArrayDim);
    } else if (key == "cols") {
      m.c = integer(key, v, 1, kMaxArrayDim);
    } else if (key == "channels") {
      if (!v.is_number_integer()) {
        Bad(fmt::format("{}: channels must be one of 1, 2, 4, 8, got {}", what, v.dump()));
      }
      CheckChannels(what, "channels", v.get<long long>());
      c.channels = v.get<int>();
    } else if (key == "act_depth") {
      m.act_depth = integer(key, v, 1, 65535);
    } else if (key == "wgt_depth") {
      m.wgt_depth = integer(key, v, 1, 65535);
    } else if (key == "acc_depth") {
      m.acc_depth = integer(key, v, 1, 65535);
    } else if (key == "queue_depth") {
      m.queue_depth = integer(key, v, 1, 1024);
    } else if (key == "preset") {
      c.preset = integer(key, v, 0, 2);
    } else if (key == "per_bank_refresh") {
      if (!v.is_boolean()) {
        Bad(fmt::format("{}: per_bank_refresh must be true or false, got {}", what, v.dump()));
      }
      c.per_bank_refresh = v.get<bool>();
    } else if (key == "mode") {
      const std::string s = v.is_string() ? v.get<std::string>() : v.dump();
      if (s == "ieee") {
        m.mode = num::Mode::kIeee;
      } else if (s == "ftz") {
        m.mode = num::Mode::kFtz;
      } else {
        Bad(fmt::format("{}: mode must be \"ieee\" or \"ftz\", got {}", what, v.dump()));
      }
    } else {
      Bad(fmt::format(
          "{}: unknown key '{}' (allowed: rows, cols, channels, act_depth, wgt_depth, acc_depth, "
          "queue_depth, preset, per_bank_refresh, mode)",
          what, key));
    }
  }
  Finish(c);
  return c;
}

Config ConfigFromFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) Bad(fmt::format("config file '{}' cannot be read", path));
  std::stringstream ss;
  ss << f.rdbuf();
  return ConfigFromJson(ss.str(), path);
}

Config ResolveConfig(const std::string& name_or_file) {
  const std::string ext = ".json";
  if (name_or_file.size() >= ext.size() &&
      name_or_file.compare(name_or_file.size() - ext.size(), ext.size(), ext) == 0) {
    return ConfigFromFile(name_or_file);
  }
  return ConfigFromName(name_or_file);
}

std::string CanonicalName(const Config& cfg) {
  return Hashed(cfg, true);
}

std::string EngineName(const Config& cfg) {
  return Hashed(cfg, false);
}

std::vector<std::string> VerilogParams(const Config& cfg) {
  const auto& m = cfg.machine;
  return {fmt::format("Rows={}", m.r),
          fmt::format("Cols={}", m.c),
          fmt::format("Channels={}", cfg.channels),
          fmt::format("ActDepth={}", m.act_depth),
          fmt::format("WgtDepth={}", m.wgt_depth),
          fmt::format("AccDepth={}", m.acc_depth),
          fmt::format("QueueDepth={}", m.queue_depth),
          fmt::format("Preset={}", cfg.preset),
          fmt::format("PerBankRefresh={}", cfg.per_bank_refresh ? 1 : 0)};
}

std::vector<std::string> VerilogArgs(const Config& cfg) {
  std::vector<std::string> v;
  for (const auto& p : VerilogParams(cfg)) v.push_back("-G" + p);
  return v;
}

std::string Describe(const Config& cfg) {
  const auto& m = cfg.machine;
  static const char* kPresets[] = {"2.0 Gb/s", "2.4 Gb/s", "checker-test timing"};
  return fmt::format(
      "{}x{} array, act {} x {} bf16, wgt {} x {} bf16, acc {} x {} fp32, queues {}, HBM {} ch "
      "({}, {} refresh, {} GiB), {}",
      m.r, m.c, m.act_depth, m.r, m.wgt_depth, m.c, m.acc_depth, m.c, m.queue_depth, cfg.channels,
      kPresets[cfg.preset], cfg.per_bank_refresh ? "per-bank" : "all-bank", m.hbm_bytes >> 30,
      ModeKey(m.mode));
}

}  // namespace tpu::tb::accel
