// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/accel_config.h"

#include <fmt/format.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "tpu/hbm/hbm_presets.h"

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

// One parameter's value checked against its row: `key` is how messages name it.
void Check(const Param& p, const std::string& what, const char* key, long long v) {
  if (p.kind == Param::Kind::kChannels) {
    CheckChannels(what, key, v);
  } else {
    CheckRange(what, key, v, p.lo, p.Hi());
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

// Where a parameter the golden model reads lives in a Config (nullptr for the others, which
// live in Config::rtl_params).
struct Field {
  const char* verilog;
  int (*get)(const Config&);
  void (*set)(Config&, int);
};
const Field kFields[] = {
    {"Rows", [](const Config& c) { return c.machine.r; },
     [](Config& c, int v) { c.machine.r = v; }},
    {"Cols", [](const Config& c) { return c.machine.c; },
     [](Config& c, int v) { c.machine.c = v; }},
    {"Channels", [](const Config& c) { return c.channels; },
     [](Config& c, int v) { c.channels = v; }},
    {"ActDepth", [](const Config& c) { return c.machine.act_depth; },
     [](Config& c, int v) { c.machine.act_depth = v; }},
    {"WgtDepth", [](const Config& c) { return c.machine.wgt_depth; },
     [](Config& c, int v) { c.machine.wgt_depth = v; }},
    {"AccDepth", [](const Config& c) { return c.machine.acc_depth; },
     [](Config& c, int v) { c.machine.acc_depth = v; }},
    {"QueueDepth", [](const Config& c) { return c.machine.queue_depth; },
     [](Config& c, int v) { c.machine.queue_depth = v; }},
    {"VmemDepth", [](const Config& c) { return c.machine.vmem_depth; },
     [](Config& c, int v) { c.machine.vmem_depth = v; }},
    {"Preset", [](const Config& c) { return c.preset; }, [](Config& c, int v) { c.preset = v; }},
    {"PerBankRefresh", [](const Config& c) { return c.per_bank_refresh ? 1 : 0; },
     [](Config& c, int v) { c.per_bank_refresh = v != 0; }},
};

const Field* FieldOf(const char* verilog) {
  for (const Field& f : kFields) {
    if (std::string(verilog) == f.verilog) return &f;
  }
  return nullptr;
}

Param::Kind KindOf(const builds::AccelParam& a) {
  const std::string k = a.kind;
  if (k == "int") return Param::Kind::kInt;
  if (k == "channels") return Param::Kind::kChannels;
  if (k == "preset") return Param::Kind::kPreset;
  if (k == "bool") return Param::Kind::kBool;
  Bad(
      fmt::format("rtl/builds.json: accel_params {} has the kind '{}' (int, channels, preset, "
                  "bool)",
                  a.verilog, k));
}

const Param* FindVerilog(const std::string& name) {
  for (const Param& p : Params()) {
    if (name == p.verilog) return &p;
  }
  return nullptr;
}

// Every parameter at its default (Params()), then R, C and N; unchecked.
Config Defaults(int rows, int cols, int channels) {
  Config c;
  for (const Param& p : Params()) p.Set(c, p.def);
  c.machine.r = rows;
  c.machine.c = cols;
  c.channels = channels;
  c.machine.mode = num::Mode::kIeee;
  return c;
}

// The configuration an engine name RxC_Nch stands for: the accelerator defaults, with the
// parameters of its preset where rtl/builds.json's engine_presets has one.
Config Named(int rows, int cols, int channels) {
  Config c = Defaults(rows, cols, channels);
  const std::string name = fmt::format("{}x{}_{}ch", rows, cols, channels);
  for (const builds::Preset& pr : builds::kPresets) {
    if (name != pr.name) continue;
    ForEachParam(pr.params, [&](const std::string& key, int v) {
      if (const Param* p = FindVerilog(key)) p->Set(c, v);
    });
  }
  return c;
}

void Finish(Config& c) {
  c.machine.hbm_bytes = kHbmBytesPerChannel * uint64_t(c.channels);
  Validate(c);
  c.name = CanonicalName(c);
}

bool AllDefault(const Config& c, bool with_mode) {
  const Config d = Named(c.machine.r, c.machine.c, c.channels);
  for (const Param& p : Params()) {
    if (p.Get(c) != p.Get(d)) return false;
  }
  return !with_mode || c.machine.mode == num::Mode::kIeee;
}

std::string Hashed(const Config& c, bool with_mode) {
  const auto& m = c.machine;
  const std::string base = fmt::format("{}x{}_{}ch", m.r, m.c, c.channels);
  if (AllDefault(c, with_mode)) return base;
  std::string fields;
  for (const Param& p : Params()) fields += fmt::format("{}={};", p.key, p.Get(c));
  fields += fmt::format("mode={}", with_mode ? ModeKey(m.mode) : "ieee");
  uint32_t h = 0x811C9DC5u;  // FNV-1a, 32 bits
  for (unsigned char ch : fields) h = (h ^ ch) * 0x01000193u;
  return fmt::format("{}_{:08x}", base, h);
}

}  // namespace

const std::vector<Param>& Params() {
  static const std::vector<Param> params = [] {
    std::vector<Param> v;
    for (const builds::AccelParam& a : builds::kAccelParams) {
      v.push_back({a.verilog, a.key, KindOf(a), a.lo, a.hi, a.def, a.help});
    }
    return v;
  }();
  return params;
}

int Param::Get(const Config& c) const {
  if (const Field* f = FieldOf(verilog)) return f->get(c);
  const auto it = c.rtl_params.find(verilog);
  return it == c.rtl_params.end() ? def : it->second;
}

void Param::Set(Config& c, int v) const {
  if (const Field* f = FieldOf(verilog)) {
    f->set(c, v);
  } else {
    c.rtl_params[verilog] = v;
  }
}

std::string ParamsTable() {
  std::string s = fmt::format("{:<18} {:<16} {:>8} {:>12}  {}\n", "key", "Verilog", "default",
                              "range", "meaning");
  for (const Param& p : Params()) {
    const std::string range = p.kind == Param::Kind::kChannels ? "1,2,4,8"
                              : p.kind == Param::Kind::kBool   ? "true,false"
                                                             : fmt::format("{}..{}", p.lo, p.Hi());
    const std::string def = p.kind == Param::Kind::kBool     ? (p.def ? "true" : "false")
                            : p.kind == Param::Kind::kPreset ? hbm::kPresets[p.def].name
                                                             : std::to_string(p.def);
    s += fmt::format("{:<18} {:<16} {:>8} {:>12}  {}\n", p.key, p.verilog, def, range, p.help);
  }
  return s + fmt::format("{:<18} {:<16} {:>8} {:>12}  {}\n", "mode", "(register)", "ieee",
                         "ieee,ftz", "numerics mode");
}

void Validate(const Config& c) {
  const std::string what = "config";
  for (const Param& p : Params()) Check(p, what, p.key, p.Get(c));
  if (c.machine.hbm_bytes != kHbmBytesPerChannel * uint64_t(c.channels)) {
    Bad(fmt::format("config: hbm_bytes = {} must be 2^31 * channels = {}", c.machine.hbm_bytes,
                    kHbmBytesPerChannel * uint64_t(c.channels)));
  }
}

Config MakeConfig(int rows, int cols, int channels) {
  Config c = Defaults(rows, cols, channels);
  Finish(c);
  return c;
}

Config ConfigFromBuild(const std::string& model) {
  for (const builds::Model& m : builds::kModels) {
    if (model != m.name) continue;
    if (std::string(m.top) != "tpu_accel") {
      Bad(fmt::format("build '{}' is a {}, not an accelerator (rtl/builds.json)", model, m.top));
    }
    // The RTL's defaults: start there, and take the build's parameters that accel_params has
    // (the others, such as DmaBeats, are not a configuration's).
    Config c = MakeConfig(16, 16, 1);
    ForEachParam(m.params, [&](const std::string& key, int v) {
      if (const Param* p = FindVerilog(key)) p->Set(c, v);
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
  Config cfg = Named(r, c, n);  // a preset of rtl/builds.json's engine_presets, where one is
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
    const Param* p = nullptr;
    for (const Param& q : Params()) {
      if (key == q.key) p = &q;
    }
    if (key == "mode") {
      const std::string s = v.is_string() ? v.get<std::string>() : v.dump();
      if (s == "ieee") {
        m.mode = num::Mode::kIeee;
      } else if (s == "ftz") {
        m.mode = num::Mode::kFtz;
      } else {
        Bad(fmt::format("{}: mode must be \"ieee\" or \"ftz\", got {}", what, v.dump()));
      }
    } else if (p == nullptr) {
      Bad(fmt::format("{}: unknown key '{}' (allowed: {})", what, key, ConfigKeys()));
    } else if (p->kind == Param::Kind::kBool) {
      if (!v.is_boolean()) {
        Bad(fmt::format("{}: {} must be true or false, got {}", what, key, v.dump()));
      }
      p->Set(c, v.get<bool>() ? 1 : 0);
    } else if (p->kind == Param::Kind::kChannels) {
      if (!v.is_number_integer()) {
        Bad(fmt::format("{}: {} must be one of 1, 2, 4, 8, got {}", what, key, v.dump()));
      }
      CheckChannels(what, p->key, v.get<long long>());
      p->Set(c, v.get<int>());
    } else if (p->kind == Param::Kind::kPreset && v.is_string()) {
      // A preset by its name (the table's `name` column).
      int found = -1;
      std::string names;
      for (int i = 0; i < hbm::kNumPresets; ++i) {
        if (v.get<std::string>() == hbm::kPresets[i].name) found = i;
        names += fmt::format("{}\"{}\"", i ? ", " : "", hbm::kPresets[i].name);
      }
      if (found < 0) Bad(fmt::format("{}: preset {} is not one of {}", what, v.dump(), names));
      p->Set(c, found);
    } else {
      p->Set(c, integer(key, v, p->lo, p->Hi()));
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

std::string ConfigKeys() {
  std::string keys;
  for (const Param& p : Params()) keys += fmt::format("{}, ", p.key);
  return keys + "mode";
}

std::string CanonicalName(const Config& cfg) {
  return Hashed(cfg, true);
}

std::string EngineName(const Config& cfg) {
  return Hashed(cfg, false);
}

std::vector<std::string> VerilogParams(const Config& cfg) {
  std::vector<std::string> v;
  for (const Param& p : Params()) v.push_back(fmt::format("{}={}", p.verilog, p.Get(cfg)));
  return v;
}

std::vector<std::string> VerilogArgs(const Config& cfg) {
  std::vector<std::string> v;
  for (const auto& p : VerilogParams(cfg)) v.push_back("-G" + p);
  return v;
}

std::string Describe(const Config& cfg) {
  const auto& m = cfg.machine;
  return fmt::format(
      "{}x{} array, act {} x {} bf16, wgt {} x {} bf16, acc {} x {} fp32, {}queues {}, HBM {} ch "
      "({}, {} refresh, {} GiB), {}",
      m.r, m.c, m.act_depth, m.r, m.wgt_depth, m.c, m.acc_depth, m.c,
      m.vector_unit() ? fmt::format("vector unit with vmem {} x {} fp32, ", m.vmem_depth, m.c) : "",
      m.queue_depth, cfg.channels, hbm::kPresets[cfg.preset].label,
      cfg.per_bank_refresh ? "per-bank" : "all-bank", m.hbm_bytes >> 30, ModeKey(m.mode));
}

}  // namespace tpu::tb::accel
