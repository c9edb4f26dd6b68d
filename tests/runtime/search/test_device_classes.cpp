// Fitness per device class: what a search's results look like when its nodes ran on different devices.
#include <catch2/catch.hpp>

#include "backends/build_target.hpp"
#include "backends/device_info.hpp"
#include "runtime/search/device_classes.hpp"

using namespace kevolve;

namespace {

NodeRecord scored(uint64_t id, const std::string& cls, EvalStatus s, double fitness, double ms = 1) {
  NodeRecord n;
  n.id = id;
  n.state = NodeState::scored;
  n.status = s;
  n.fitness = s == EvalStatus::ok ? fitness : 0;
  n.candidate_ms = ms;
  n.device_class = cls;
  return n;
}

}  // namespace

TEST_CASE("each device class keeps its own counts and best and failed builds belong to none", "[search]") {
  const std::string h100 = "cuda:sm_90 NVIDIA H100 80GB HBM3", h200 = "cuda:sm_90 NVIDIA H200";
  std::vector<NodeRecord> nodes{
      scored(1, h200, EvalStatus::ok, 1.4, 0.20),  scored(2, h100, EvalStatus::ok, 2.1, 0.31),
      scored(3, h200, EvalStatus::ok, 1.9, 0.15),  scored(4, h200, EvalStatus::incorrect, 0),
      scored(5, "", EvalStatus::compile_error, 0),  // never reached a device
      scored(6, h100, EvalStatus::ok, 2.1, 0.30),   // tie with node 2: the lower id stays best
  };
  NodeRecord flying;
  flying.id = 7;
  flying.state = NodeState::queued;
  flying.device_class = h200;
  nodes.push_back(flying);
  const auto by = scores_by_class(nodes);
  REQUIRE(by.size() == 2);
  CHECK(by[0].device_class == h100);
  CHECK(by[0].evaluated == 2);
  CHECK(by[0].correct == 2);
  CHECK(by[0].best == 2);
  CHECK(by[0].best_ms == 0.31);
  CHECK(by[1].device_class == h200);
  CHECK(by[1].evaluated == 3);
  CHECK(by[1].correct == 2);
  CHECK(by[1].best == 3);  // not node 2: its 2.1x was measured on the H100
  CHECK(by[1].best_fitness == 1.9);
  REQUIRE(find_class(by, "H200"));
  CHECK(find_class(by, "H200")->best == 3);
  CHECK(find_class(by, "MI300") == nullptr);

  std::map<uint64_t, NodeRecord> graph;
  for (auto& n : nodes) graph[n.id] = n;
  CHECK(scores_by_class(graph).size() == 2);
  CHECK(scores_by_class(graph)[1].best == 3);
}

TEST_CASE("a device class is the build target and the device's model", "[search]") {
  CHECK(device_class("cuda:sm_90", "NVIDIA H200") == "cuda:sm_90 NVIDIA H200");
  setenv("KEVOLVE_DEVICE_MODEL", "Test Model 9", 1);
  setenv("KEVOLVE_BUILD_TARGET", "cpu:testarch", 1);
  CHECK(local_device_class("cpu", 0) == "cpu:testarch Test Model 9");
  unsetenv("KEVOLVE_DEVICE_MODEL");
  unsetenv("KEVOLVE_BUILD_TARGET");
  const std::string here = local_device_class("cpu", 0);
  CHECK(here.rfind("cpu:", 0) == 0);
  CHECK(here.find(' ') != std::string::npos);  // a model follows the target (the CPU's name from /proc/cpuinfo)
}

TEST_CASE("device i of a machine is the i-th GPU this process sees", "[search]") {
  unsetenv("CUDA_VISIBLE_DEVICES");
  CHECK(cuda_visible_device(0) == "0");
  CHECK(cuda_visible_device(3) == "3");
  setenv("CUDA_VISIBLE_DEVICES", "4, 6,GPU-1a2b", 1);  // a shard of a bigger machine, as gpu_check runs them
  CHECK(cuda_visible_device(0) == "4");
  CHECK(cuda_visible_device(1) == "6");
  CHECK(cuda_visible_device(2) == "GPU-1a2b");
  setenv("CUDA_VISIBLE_DEVICES", "0;rm -rf /", 1);  // never handed to a shell as is
  CHECK(cuda_visible_device(0) == "0");
  unsetenv("CUDA_VISIBLE_DEVICES");
}

// rocminfo as ROCm 5.x prints it on a machine with one CPU and two MI250X dies: the ISA block repeats "Name"
// with the full target triple, pools have no name; only GPU agents count.
TEST_CASE("an AMD device class is its gfx target and the marketing name rocminfo gives", "[search]") {
  const std::string text = R"(ROCk module is loaded
=====================
HSA Agents
==========
*******
Agent 1
*******
  Name:                    AMD EPYC 7763 64-Core Processor
  Marketing Name:          AMD EPYC 7763 64-Core Processor
  Vendor Name:             CPU
  Device Type:             CPU
  Compute Unit:            128
*******
Agent 2
*******
  Name:                    gfx90a
  Uuid:                    GPU-2d5b2a31c1a2b3c4
  Marketing Name:          AMD Instinct MI250X
  Vendor Name:             AMD
  Device Type:             GPU
  Compute Unit:            110
  Pool Info:
    Pool 1
      Segment:                 GLOBAL; FLAGS: COARSE GRAINED
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-
*******
Agent 3
*******
  Name:                    gfx90a:sramecc+:xnack-
  Marketing Name:
  Device Type:             GPU
  Compute Unit:            110
*** Done ***
)";
  const auto gpus = parse_rocminfo(text);
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[0].name == "gfx90a");
  CHECK(gpus[0].marketing_name == "AMD Instinct MI250X");
  CHECK(gpus[0].compute_units == 110);
  CHECK(gpus[1].name == "gfx90a:sramecc+:xnack-");
  CHECK(gpus[1].marketing_name.empty());
  CHECK(parse_rocminfo("ROCk module is NOT loaded, possibly no GPU devices\n").empty());
  // The build target of a HIP search follows [eval] arch; anything that is not a gfx target means gfx90a.
  EvalOptions o;
  o.arch = "gfx908";
  CHECK(build_target("hip", o) == "hip:gfx908");
  o.arch = "sm_90";
  CHECK(build_target("hip", o) == "hip:gfx90a");
  if (amd_gpu_agents().empty()) {
    CHECK(device_target("hip", 0) == "hip:unknown");
    CHECK(device_model("hip", 0) == "no AMD GPU");
  }
}
