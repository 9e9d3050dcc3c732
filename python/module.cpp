// SPDX-License-Identifier: Apache-2.0
// The Python module's native part (_tpusim, pybind11 from Debian's pybind11-dev): the golden
// model back end in-process (ONNX models and GEMMs; the golden model is not checked against
// itself, as on the command line).
// The RTL back end runs the configuration's tpusim engine (one Verilated model per program, as on
// the command line); python/tpusim/__init__.py chooses.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <string>

#include "tpu/io/npy.h"
#include "tpu/net.h"
#include "tpu/onnx_import.h"
#include "tpu/tb/accel_config.h"
#include "tpu/tb/accel_scoreboard.h"
#include "tpu/tb/job_pool.h"
#include "tpu/tb/model_sim.h"
#include "tpu/tb/net_run.h"
#include "tpu/tb/workloads.h"

namespace py = pybind11;
using namespace tpu;
using tpu::tb::accel::Config;

namespace {

struct BadInput : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A NumPy array as a net::Tensor, with the element types of .npy files (tpu/io/npy.h): the same
// decoding, from a C-contiguous copy when the array is not one.
net::Tensor FromArray(const std::string& name, const py::array& a) {
  net::Tensor t;
  try {
    const io::Dtype dt = io::ParseDtype(a.dtype().attr("str").cast<std::string>(), name);
    const auto c = py::array::ensure(a, py::array::c_style);
    if (!c) throw std::invalid_argument(name + ": cannot be made C-contiguous");
    net::Shape shape;
    for (py::ssize_t i = 0; i < c.ndim(); ++i) shape.push_back(c.shape(i));
    t = io::Decode(c.data(), size_t(c.nbytes()), dt, shape, false, name);
  } catch (const std::invalid_argument& e) {
    throw BadInput(e.what());
  }
  return t;
}

py::array_t<float> ToArray(const net::Tensor& t) {
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  py::array_t<float> a(shape);
  if (!t.f.empty()) std::memcpy(a.mutable_data(), t.f.data(), t.f.size() * 4);
  return a;
}

Config Resolve(const std::string& config) {
  try {
    return tb::accel::ResolveConfig(config);
  } catch (const std::invalid_argument& e) {
    throw BadInput(e.what());
  }
}

// (outputs by name, statistics as JSON text)
std::pair<std::map<std::string, py::array_t<float>>, std::string> RunOnnxModel(
    const std::string& path, const std::map<std::string, py::array>& arrays,
    const std::string& config, bool check, int jobs, bool whole) {
  const Config cfg = Resolve(config);
  net::Graph g;
  std::map<std::string, net::Tensor> inputs;
  std::optional<net::Plan> plan;
  try {
    g = onnx_import::LoadModel(path);
    for (const auto& [k, v] : arrays) inputs[k] = FromArray(k, v);
    plan.emplace(net::PlanForInputs(&g, &inputs, cfg.machine.mode, cfg.machine.vector_unit(),
                                    cfg.machine.vmem_depth));
  } catch (const net::Error& e) {
    throw BadInput(e.what());
  }
  if (jobs < 1 || jobs > 256) {
    throw BadInput("jobs " + std::to_string(jobs) +
                   ": give a whole number of processes from 1 to 256");
  }
  // Worker processes forked here run only this library's code and end with _exit.
  tb::accel::JobPool pool(
      jobs, [&cfg] { return std::make_unique<tb::accel::ModelSim>(cfg); }, check);
  if (whole && jobs > 1) {
    throw BadInput("whole_network with jobs " + std::to_string(jobs) +
                   ": a whole-network program runs in one process");
  }
  tb::accel::NetRunner runner(pool);
  runner.SetWholeNetwork(whole);
  std::map<std::string, net::Tensor> outs;
  try {
    py::gil_scoped_release release;
    outs = runner.Run(*plan, inputs);
  } catch (const net::Error& e) {
    throw BadInput(e.what());
  }
  std::map<std::string, py::array_t<float>> r;
  for (const auto& [k, v] : outs) r[k] = ToArray(v);
  return {r, tb::accel::NetJson(*plan, runner.steps(), cfg, "model", true, runner.programs())};
}

// C = A·B (+ C0) on the golden model: A, B rounded to bf16 per the contract, C0 kept fp32.
std::pair<py::array_t<float>, std::string> GemmModel(const py::array& a, const py::array& b,
                                                     const std::optional<py::array>& c,
                                                     const std::string& config) {
  const Config cfg = Resolve(config);
  const net::Tensor ta = AsFloat(FromArray("a", a)), tb = AsFloat(FromArray("b", b));
  if (ta.shape.size() != 2 || tb.shape.size() != 2 || ta.shape[1] != tb.shape[0] ||
      ta.shape[0] < 1 || ta.shape[1] < 1 || tb.shape[1] < 1) {
    throw BadInput("a (M x K) and b (K x N) must be non-empty matrices with matching K: got " +
                   net::ShapeText(ta.shape) + " and " + net::ShapeText(tb.shape));
  }
  const int m = int(ta.shape[0]), k = int(ta.shape[1]), n = int(tb.shape[1]);
  std::optional<net::Tensor> tc;
  if (c) {
    tc = AsFloat(FromArray("c", *c));
    if (tc->shape != net::Shape{m, n}) {
      throw BadInput("c must be an M x N float matrix " + net::ShapeText({m, n}) + ": got " +
                     net::ShapeText(tc->shape));
    }
  }
  tb::accel::Workload w;
  try {
    w = tb::accel::MakeFromHost(cfg, m, k, n, ta.f, tb.f, tc ? &tc->f : nullptr);
  } catch (const std::invalid_argument& e) {
    throw BadInput(e.what());
  }
  tb::accel::ModelSim sim(cfg);
  tb::accel::Load(sim, w);
  const auto r = tb::accel::Run(sim, w, {});
  if (r.code != isa::ErrorCode::kOk) {
    throw std::runtime_error("machine error " + std::string(isa::ErrorName(r.code)) + ": " +
                             sim.last_run().message);
  }
  const auto& out = w.Output("C");
  const auto bits = tb::accel::ReadTensor(sim, out);
  net::Tensor t;
  t.shape = {m, n};
  t.f.resize(bits.size());
  std::memcpy(t.f.data(), bits.data(), bits.size() * 4);
  const std::string js = "{\"config\": \"" + cfg.name +
                         "\", \"backend\": \"model\", \"macs\": " + std::to_string(r.perf.macs) +
                         ", \"hbm_read_bytes\": " + std::to_string(r.perf.hbm_read_bytes) +
                         ", \"hbm_write_bytes\": " + std::to_string(r.perf.hbm_write_bytes) +
                         ", \"instructions\": " + std::to_string(r.perf.instructions) + "}";
  return {ToArray(t), js};
}

}  // namespace

PYBIND11_MODULE(_tpusim, m) {
  m.doc() = "tpusim's native part: the golden-model back end (see tpusim.run_onnx, tpusim.gemm)";
  py::register_exception<BadInput>(m, "BadInput", PyExc_ValueError);
  m.def("run_onnx_model", &RunOnnxModel, py::arg("path"), py::arg("inputs"), py::arg("config"),
        py::arg("check"), py::arg("jobs") = 1, py::arg("whole_network") = false);
  m.def("gemm_model", &GemmModel, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("config"));
  m.attr("binary_dir") = TPU_BINARY_DIR;
}
