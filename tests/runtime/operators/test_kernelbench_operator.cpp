// The offline operator of KernelBench-format problems with the real family matcher, templates and Python
// evaluator (Debian's python3 with torch): for problems of a template family it proposes that template's
// kernels wrapped as ModelNew, which the evaluator verifies and labels as kernels, beside framework rewrites;
// a family matched wrongly gives kernels that fail verification.
#include <catch2/catch.hpp>

#include <iostream>
#include <set>

#include "tests/test_support/skip.hpp"
#include "backends/python/python_backend.hpp"
#include "knowledge/hardware_profile.hpp"
#include "knowledge/template_library.hpp"
#include "tools/kevolve/setup/kernelbench_setup.hpp"
#include "runtime/operators/kernelbench_operator.hpp"
#include "tests/backends/cpu/eval_helpers.hpp"
#include "tests/runtime/operators/kernelbench_helpers.hpp"

using namespace kevolve;

namespace {

EvalOptions quick() {
  EvalOptions o = test::quick_options();
  o.threads = 2;
  o.call_timeout_s = 10;
  return o;
}

bool no_torch_python() {
  if (!python::torch_python().empty()) return false;
  kevolve::test::say_skipped("no python3 with torch here (the KernelBench operator tests)");
  return true;
}

ProblemSpec problem(const std::string& rel) { return python::kernelbench_problem(test::source_path(rel)); }

}  // namespace

TEST_CASE(
    "template kernels wrapped as ModelNew are proposed for problems of a template family, verified, and labelled "
    "kernels",
    "[python][kernelbench]") {
  if (no_torch_python()) return;
  static python::PythonBackend backend("cpu");
  struct Case {
    const char* file;
    const char* family;
    std::vector<std::string> inputs, params;
  };
  // A sample problem (its weight is a parameter, eps an attribute), and small fixtures written differently:
  // layer norm spelled out in torch ops with its own parameter names and a literal eps; GELU through nn.GELU.
  const std::vector<Case> cases = {
      {"problems/kernelbench-small/7_rmsnorm.py", "rmsnorm_fwd", {"arg:0", "state:weight"}, {"attr:eps"}},
      {"tests/fixtures/kernelbench/layernorm_by_hand.py",
       "layernorm_fwd",
       {"arg:0", "state:gain", "state:shift"},
       {"value:1e-06"}},
      {"tests/fixtures/kernelbench/gelu_small.py", "gelu", {"arg:0"}, {}},
  };
  for (auto& c : cases) {
    INFO(c.file);
    const ProblemSpec spec = problem(c.file);
    auto setup = cli::kernelbench_operator(spec, "cpu", resolve_hardware("cpu", "auto"), true, false);
    REQUIRE(setup);
    CHECK(setup->match.family == c.family);
    CHECK(setup->match.inputs == c.inputs);
    CHECK(setup->match.params == c.params);
    REQUIRE(setup->op->has_kernels());
    auto [seed, kernel] = test::seed_and_child(*setup->op);
    CHECK(seed.params.at("impl") == "framework");
    CHECK(kernel.params.at("impl") == "kernel");
    CHECK(kernel.candidate.language == "python");
    CHECK(kernel.candidate.source.find("class ModelNew(_KevolveBase)") !=
          std::string::npos);                                                  // the reference's state_dict
    CHECK(kernel.candidate.source.find("class Model(") == std::string::npos);  // never the reference itself
    CHECK(kernel.candidate.provenance.find(std::string("templates/cpu/") + c.family) != std::string::npos);
    const EvalResult r = backend.evaluate_source(spec, kernel.candidate, quick());
    INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\n" << r.runner_log);
    CHECK(r.status == EvalStatus::ok);
    CHECK(r.trials == 5);
    CHECK(r.kind == "kernel");  // counted as a generated kernel, not a framework rewrite
  }
}

TEST_CASE("a problem of no template family gets framework rewrites only", "[python][kernelbench]") {
  if (no_torch_python()) return;
  const ProblemSpec spec = problem("problems/kernelbench-small/8_gelu_scale.py");  // gelu(x) * scale: not GELU alone
  auto setup = cli::kernelbench_operator(spec, "cpu", resolve_hardware("cpu", "auto"), true, false);
  REQUIRE(setup);
  CHECK(setup->match.family.empty());
  CHECK(setup->note.find("framework rewrites only") != std::string::npos);
  CHECK_FALSE(setup->op->has_kernels());
  auto [seed, child] = test::seed_and_child(*setup->op);
  CHECK(child.params.at("impl") == "framework");
}

TEST_CASE("a wrongly matched family gives kernels that fail verification", "[python][kernelbench]") {
  if (no_torch_python()) return;
  // A ReLU problem whose marker names the softmax family: the marker is taken at its word.
  const ProblemSpec spec = problem("tests/fixtures/kernelbench/relu_marked_softmax.py");
  auto setup = cli::kernelbench_operator(spec, "cpu", resolve_hardware("cpu", "auto"), true, false);
  REQUIRE(setup);
  CHECK(setup->match.family == "softmax_rows");
  CHECK(setup->match.how.find("marker") != std::string::npos);
  auto [seed, kernel] = test::seed_and_child(*setup->op);
  REQUIRE(kernel.params.at("impl") == "kernel");
  static python::PythonBackend backend("cpu");
  const EvalResult r = backend.evaluate_source(spec, kernel.candidate, quick());
  INFO(status_name(r.status) << " [" << r.reason << "] " << r.message);
  CHECK(r.status == EvalStatus::incorrect);
  CHECK(r.reason == "mismatch");
}

TEST_CASE("a match that does not fit the family's kernel is refused when wrapping, naming what was expected",
          "[kernelbench]") {
  KernelWrap w;
  auto found = find_problem("layernorm_fwd", default_problem_roots());
  REQUIRE(found);
  auto core = load_problem(*found);
  REQUIRE(core);
  w.core = *core;
  w.backend = "cpu";
  w.match.family = "layernorm_fwd";
  w.match.inputs = {"arg:0"};  // the kernel also takes weight and bias
  w.match.params = {"default"};
  auto r = wrap_kernel_as_model_new(w, "// kernel\n", "test");
  REQUIRE_FALSE(r);
  CHECK(r.error().find("layernorm_fwd takes 3 inputs, the family match gives 1") != std::string::npos);
  w.match.inputs = {"arg:0", "state:ln.weight", "bias"};
  r = wrap_kernel_as_model_new(w, "// kernel\n", "test");
  REQUIRE_FALSE(r);
  CHECK(r.error().find("comes from 'bias' (expected arg:I or state:NAME)") != std::string::npos);
  w.match.inputs = {"arg:0", "state:ln.weight", "state:ln.bias"};
  r = wrap_kernel_as_model_new(w, "// kernel\n", "test");
  REQUIRE(r);
  CHECK(r->find("_KV_INPUTS = [(\"arg\", 0, [\"T\", \"H\"]), (\"state\", \"ln.weight\", [\"H\"]), (\"state\", "
                "\"ln.bias\", [\"H\"])]") != std::string::npos);
  CHECK(r->find("_KV_PARAMS = [(\"value\", 1.0000000000000001e-05)]") !=
        std::string::npos);  // the core problem's default eps
}

namespace {

// An operator over the real rewrite and CPU softmax templates, with a stand-in module, glue and header: the
// arms, labels and wrapping, without running anything.
KernelBenchOperator softmax_operator() {
  auto rewrite = find_template("python", "rewrite", default_knowledge_roots());
  auto kernel = find_template("cpu", "softmax_rows", default_knowledge_roots());
  auto found = find_problem("softmax_rows", default_problem_roots());
  REQUIRE(rewrite);
  REQUIRE(kernel);
  REQUIRE(found);
  auto hw = load_hardware(test::source_path("knowledge"), "x86-avx2");
  REQUIRE(hw);
  kernel->hardware = hw->numbers;
  KernelWrap w;
  w.core = *load_problem(*found);
  w.match.family = "softmax_rows";
  w.match.inputs = {"arg:0"};
  w.backend = "cpu";
  w.problem_source = "class _KevolveBase:\n    pass\n";
  w.glue = "# glue\n";
  w.header = "/* header */\n";
  return KernelBenchOperator(*rewrite, std::make_pair(*kernel, w));
}

}  // namespace

TEST_CASE("the KernelBench operator explores both arms, labels every child by its arm, and never repeats one",
          "[kernelbench]") {
  KernelBenchOperator op = softmax_operator();
  SearchGraph g;
  Rng rng(11);
  auto seed = op.make({"seed", {}, 0}, g, rng);
  REQUIRE(seed);
  std::vector<NodeRecord> nodes;
  auto add = [&](const Offspring& o, std::vector<uint64_t> parents) {
    NodeRecord n;
    n.id = g.size() + 1;
    n.parents = std::move(parents);
    n.params = o.params;
    n.state = NodeState::scored;
    n.status = EvalStatus::ok;
    n.fitness = std::uniform_real_distribution<double>(0.1, 2.0)(rng);
    g.upsert(n);
  };
  add(*seed, {});
  std::map<std::string, int> arms;
  std::set<std::string> seen{SearchGraph::params_key(seed->params)};
  for (int i = 0; i < 40; ++i) {
    const uint64_t a = std::uniform_int_distribution<uint64_t>(1, g.size())(rng),
                   b = std::uniform_int_distribution<uint64_t>(1, g.size())(rng);
    auto child = op.make(i % 3 == 0 ? Proposal{"crossover", {a, b}, 0} : Proposal{"mutate", {a}, 0}, g, rng);
    if (!child) continue;  // the rewrite space is small: a neighbourhood can run out
    const std::string impl = child->params.at("impl");
    ++arms[impl];
    CHECK(seen.insert(SearchGraph::params_key(child->params)).second);  // never a parameter set the graph holds
    CHECK(child->candidate.language == "python");
    if (impl == "kernel") {
      CHECK(child->candidate.source.find("_kv_build(\"cpu\", _KV_KERNEL") != std::string::npos);
      CHECK(child->params.count("threads") == 1);
      CHECK(child->params.count("wrapper") == 0);
    } else {
      CHECK(impl == "framework");
      CHECK(child->candidate.source.find("_KV_KERNEL") == std::string::npos);
      CHECK(child->params.count("wrapper") == 1);
    }
    add(*child, {a});
  }
  CHECK(arms["kernel"] >= 10);
  CHECK(arms["framework"] >= 5);
}

TEST_CASE("the KernelBench operator warm-starts from the best earlier node of either arm", "[kernelbench]") {
  KernelBenchOperator op = softmax_operator();
  Lessons l;
  Exemplar e;
  e.search = "earlier";
  e.node = 7;
  e.params = {{"impl", "kernel"}, {"threads", "2"}, {"vec", "8"}, {"exp", "poly"}, {"acc", "float"}, {"pass", "store"}};
  e.fitness = 1.4;
  l.best.push_back(e);
  const std::string how = op.warm_start(l);
  CHECK(how.find("(kernel)") != std::string::npos);
  SearchGraph g;
  Rng rng(1);
  auto seed = op.make({"seed", {}, 0}, g, rng);
  REQUIRE(seed);
  CHECK(seed->params == e.params);
  CHECK(seed->candidate.source.find("threads=2 vec=8 exp=poly acc=float pass=store") != std::string::npos);
}
