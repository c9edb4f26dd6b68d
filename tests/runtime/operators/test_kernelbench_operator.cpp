// The offline operator of KernelBench-format problems with the real family matchers, generator, templates and
// Python evaluator (Debian's python3 with torch): for problems of a kernel family it proposes the kernels the
// family's generator writes at points of its space (seeds at the defaults and a few other points, mutations
// moving one parameter); for problems of a template family that template's kernels wrapped as ModelNew, which
// the evaluator verifies and labels as kernels, beside framework rewrites; a family matched wrongly gives kernels
// that fail verification; a problem of no family gets framework rewrites and the reason.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iostream>
#include <optional>
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
    REQUIRE(setup->op->has_template_kernels());
    auto [seed, kernel] = test::seed_and_child(*setup->op);
    // These problems are of a generated family too: the seed is its kernel at the defaults, and the template
    // arm, with no node yet, comes next.
    CHECK(setup->op->has_generated());
    CHECK(seed.params.at("impl") == "generated");
    CHECK(kernel.params.at("impl") == "kernel");
    CHECK(kernel.candidate.language == "python");
    CHECK(kernel.candidate.source.find("class ModelNew(_KevolveBase)") !=
          std::string::npos);                                                  // the reference's state_dict
    CHECK(kernel.candidate.source.find("class Model(") == std::string::npos);  // never the reference itself
    CHECK(kernel.candidate.provenance.find(std::string("templates/cpu/") + c.family) != std::string::npos);
    const EvalResult r = backend.evaluate_source(spec, kernel.candidate, quick());
    INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\n" << r.runner_log);
    if (test::skipped_without_cgroup(status_name(r.status), r.reason, r.sandbox)) return;
    CHECK(r.status == EvalStatus::ok);
    CHECK(r.trials == 5);
    CHECK(r.kind == "kernel");  // counted as a generated kernel, not a framework rewrite
  }
}

TEST_CASE("a problem of no family gets framework rewrites only, and the matcher's reason is reported",
          "[python][kernelbench]") {
  if (no_torch_python()) return;
  // A plain matmul: a library op with nothing after it to fuse, and no template family either.
  const ProblemSpec spec = problem("problems/kernelbench-small/6_matmul.py");
  auto setup = cli::kernelbench_operator(spec, "cpu", resolve_hardware("cpu", "auto"), true, false);
  REQUIRE(setup);
  CHECK(setup->match.family.empty());
  CHECK(setup->families.family.empty());
  CHECK(setup->families.reason == "no pointwise op or reduction after the library ops: nothing to fuse");
  CHECK(setup->family_note == "no family: " + setup->families.reason);
  CHECK(setup->note.find("no family: no pointwise op or reduction after the library ops") != std::string::npos);
  CHECK(setup->note.find("framework rewrites only") != std::string::npos);
  CHECK_FALSE(setup->op->has_kernels());
  CHECK_FALSE(setup->op->has_generated());
  auto [seed, child] = test::seed_and_child(*setup->op);
  CHECK(seed.params.at("impl") == "framework");
  CHECK(child.params.at("impl") == "framework");
  CHECK(child.candidate.source.find("class ModelNew(_KevolveBase)") != std::string::npos);
}

TEST_CASE("a problem of no template family but of a generated family gets generated kernels and rewrites",
          "[python][kernelbench]") {
  if (no_torch_python()) return;
  const ProblemSpec spec = problem("problems/kernelbench-small/8_gelu_scale.py");  // gelu(x) * scale: not GELU alone
  auto setup = cli::kernelbench_operator(spec, "cpu", resolve_hardware("cpu", "auto"), true, false);
  REQUIRE(setup);
  CHECK(setup->match.family.empty());
  CHECK(setup->families.family == "pointwise");
  CHECK(setup->note.rfind("family pointwise (traced by", 0) == 0);
  CHECK(setup->note.find("; and framework rewrites") != std::string::npos);
  CHECK_FALSE(setup->op->has_template_kernels());
  REQUIRE(setup->op->has_generated());
  auto [seed, child] = test::seed_and_child(*setup->op);
  CHECK(seed.params.at("impl") == "generated");
  CHECK(child.params.at("impl") == "framework");  // the arm with no node yet
}

namespace {

// The parameters of a generated node without its arm label.
Params point(Params p) {
  p.erase(KernelBenchOperator::kImpl);
  return p;
}

// Whether `p` is a point of `space`: every parameter of the space, each at one of its values, and nothing else.
bool in_space(const Params& p, const FamilySpace& space) {
  if (p.size() != space.params.size()) return false;
  for (auto& prm : space.params) {
    auto it = p.find(prm.name);
    if (it == p.end() || std::find(prm.values.begin(), prm.values.end(), it->second) == prm.values.end()) return false;
  }
  return true;
}

// The parameters on which two points differ.
std::vector<std::string> changed(const Params& a, const Params& b) {
  std::vector<std::string> out;
  for (auto& [k, v] : a)
    if (!b.count(k) || b.at(k) != v) out.push_back(k);
  return out;
}

}  // namespace

TEST_CASE(
    "for a problem of a kernel family, the seeds are generated kernels at points of its space, a mutation moves "
    "one parameter to another allowed value, and a generated CPU kernel evaluates ok",
    "[python][kernelbench][generated]") {
  if (no_torch_python()) return;
  const ProblemSpec spec = problem("tests/fixtures/kernelbench/softmax_dim1_small.py");
  auto setup = cli::kernelbench_operator(spec, "cpu", resolve_hardware("cpu", "auto"), true, false);
  REQUIRE(setup);
  INFO(setup->note);
  CHECK(setup->families.family == "softmax");
  CHECK(setup->families.layout == "outer");  // softmax over dim 1 of a 3-D tensor: a strided row
  CHECK(setup->match.family.empty());        // no template family: generated kernels and rewrites only
  REQUIRE(setup->op->has_generated());
  const FamilySpace& space = setup->families.cpu;
  REQUIRE(space.params.size() >= 2);
  // The seeds: the generator's defaults first, then points one parameter away from them, all in the space.
  const std::vector<Params> seeds = setup->op->generated_seeds();
  REQUIRE(seeds.size() >= 2);
  CHECK(seeds.size() <= KernelBenchOperator::kGeneratedSeeds);
  CHECK(seeds[0] == space.defaults);
  for (size_t i = 0; i < seeds.size(); ++i) {
    INFO("seed " << i << ": " << params_key(seeds[i]));
    CHECK(in_space(seeds[i], space));
    if (i > 0) CHECK(changed(seeds[i], seeds[0]).size() == 1);
  }
  SearchGraph g;
  Rng rng(3);
  auto add = [&](const Offspring& o, std::vector<uint64_t> parents) {
    NodeRecord n;
    n.id = g.size() + 1;
    n.parents = std::move(parents);
    n.params = o.params;
    n.state = NodeState::scored;
    n.status = EvalStatus::ok;
    n.fitness = 1;
    g.upsert(n);
    return n.id;
  };
  auto seed = setup->op->make({Operation::seed, {}, 0}, g, rng);
  REQUIRE(seed);
  CHECK(seed->params.at("impl") == "generated");
  CHECK(point(seed->params) == space.defaults);
  CHECK(seed->candidate.language == "python");
  CHECK(seed->candidate.provenance.rfind("generated kernel (family softmax, params ", 0) == 0);
  CHECK(seed->candidate.source.find("class ModelNew(_KevolveBase)") != std::string::npos);
  CHECK(seed->candidate.source.find("class Model(") == std::string::npos);
  const uint64_t seed_id = add(*seed, {});
  // Children of the seed until one comes from the generated arm (the rewrites' arm, with no node yet, comes first):
  // that child is a mutation of the seed.
  std::optional<Offspring> mutated;
  for (int i = 0; i < 24 && !mutated; ++i) {
    auto child = setup->op->make({Operation::mutate, {seed_id}, 0}, g, rng);
    REQUIRE(child);
    if (child->params.at("impl") == "generated")
      mutated = *child;
    else
      add(*child, {seed_id});
  }
  REQUIRE(mutated);
  INFO("mutated: " << params_key(mutated->params));
  CHECK(in_space(point(mutated->params), space));
  CHECK(changed(point(mutated->params), space.defaults).size() == 1);
  CHECK(mutated->candidate.provenance.find("family softmax") != std::string::npos);
  // Both evaluate ok through the real CPU evaluator, labelled kernels.
  static python::PythonBackend backend("cpu");
  for (const Offspring* o : {&*seed, &*mutated}) {
    INFO(o->candidate.provenance);
    const EvalResult r = backend.evaluate_source(spec, o->candidate, quick());
    INFO(status_name(r.status) << " [" << r.reason << "] " << r.message << "\n" << r.runner_log);
    if (test::skipped_without_cgroup(status_name(r.status), r.reason, r.sandbox)) return;
    CHECK(r.status == EvalStatus::ok);
    CHECK(r.trials == 5);
    CHECK(r.kind == "kernel");
  }
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
  if (test::skipped_without_cgroup(status_name(r.status), r.reason, r.sandbox)) return;
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
  auto seed = op.make({Operation::seed, {}, 0}, g, rng);
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
  std::set<std::string> seen{params_key(seed->params)};
  for (int i = 0; i < 40; ++i) {
    const uint64_t a = std::uniform_int_distribution<uint64_t>(1, g.size())(rng),
                   b = std::uniform_int_distribution<uint64_t>(1, g.size())(rng);
    auto child =
        op.make(i % 3 == 0 ? Proposal{Operation::crossover, {a, b}, 0} : Proposal{Operation::mutate, {a}, 0}, g, rng);
    if (!child) continue;  // the rewrite space is small: a neighbourhood can run out
    const std::string impl = child->params.at("impl");
    ++arms[impl];
    CHECK(seen.insert(params_key(child->params)).second);  // never a parameter set the graph holds
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
  auto seed = op.make({Operation::seed, {}, 0}, g, rng);
  REQUIRE(seed);
  CHECK(seed->params == e.params);
  CHECK(seed->candidate.source.find("threads=2 vec=8 exp=poly acc=float pass=store") != std::string::npos);
}

namespace {

// An operator over the real rewrite template with a generated arm whose generator is a stand-in: the source names
// the point it was asked for, and one point fails the way a generator error would.
KernelBenchOperator generated_operator(std::vector<Params>* asked = nullptr) {
  auto rewrite = find_template("python", "rewrite", default_knowledge_roots());
  REQUIRE(rewrite);
  rewrite->context["problem_source"] = "class _KevolveBase:\n    pass\n";
  GeneratedFamily gen;
  gen.family = "pointwise";
  gen.backend = "cpu";
  gen.space.params = {{"a", {"1", "2", "3", "4"}, false}, {"b", {"x", "y", "z"}, true}, {"c", {"0"}, false}};
  gen.space.defaults = {{"a", "2"}, {"b", "x"}, {"c", "0"}};
  gen.generate = [asked](const Params& p) -> Expected<std::string> {
    if (asked) asked->push_back(p);
    if (p.at("a") == "3" && p.at("b") == "y") return Expected<std::string>::failure("ValueError: no such kernel");
    return "class ModelNew:  # " + params_key(p) + "\n    pass\n";
  };
  return KernelBenchOperator(*rewrite, std::nullopt, gen);
}

}  // namespace

TEST_CASE(
    "the generated arm seeds at the defaults, mutates one parameter at a time within the space, and never "
    "repeats a point",
    "[kernelbench][generated]") {
  std::vector<Params> asked;
  KernelBenchOperator op = generated_operator(&asked);
  CHECK(op.blocks());  // each kernel is written by a Python process: the operator gets a thread of its own
  const std::vector<Params> seeds = op.generated_seeds();
  // The defaults, then each parameter with another value moved to its first other value (c has none).
  REQUIRE(seeds.size() == 3);
  CHECK(seeds[0] == Params{{"a", "2"}, {"b", "x"}, {"c", "0"}});
  CHECK(seeds[1] == Params{{"a", "1"}, {"b", "x"}, {"c", "0"}});
  CHECK(seeds[2] == Params{{"a", "2"}, {"b", "y"}, {"c", "0"}});
  SearchGraph g;
  Rng rng(5);
  auto seed = op.make({Operation::seed, {}, 0}, g, rng);
  REQUIRE(seed);
  CHECK(seed->params == Params{{"impl", "generated"}, {"a", "2"}, {"b", "x"}, {"c", "0"}});
  CHECK(seed->candidate.provenance == "generated kernel (family pointwise, params a=2 b=x c=0)");
  CHECK(seed->candidate.parameters == seeds[0]);
  CHECK(seed->candidate.language == "python");
  CHECK(seed->candidate.source.find("a=2") != std::string::npos);  // what the generator wrote, unchanged
  auto add = [&](const Params& params, std::vector<uint64_t> parents, bool ok = true) {
    NodeRecord n;
    n.id = g.size() + 1;
    n.parents = std::move(parents);
    n.params = params;
    n.state = NodeState::scored;
    n.status = ok ? EvalStatus::ok : EvalStatus::harness_error;
    n.fitness = std::uniform_real_distribution<double>(0.1, 2.0)(rng);
    g.upsert(n);
  };
  add(seed->params, {});
  std::set<std::string> seen{params_key(seed->params)};
  int generated = 1, framework = 0, mutations = 0, one_moves = 0, from_seeds = 0, errors = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t a = std::uniform_int_distribution<uint64_t>(1, g.size())(rng);
    const NodeRecord* parent = g.find(a);
    auto child = op.make({Operation::mutate, {a}, 0}, g, rng);
    if (!child) {
      if (child.error().find("ValueError") == std::string::npos) continue;  // the rewrites' small space ran out
      // The generator's error names the family and the point. The point goes into the graph (as a node that
      // failed), so that the generator is not asked for it again.
      CHECK(child.error() == "generated kernel (family pointwise, params a=3 b=y c=0): ValueError: no such kernel");
      ++errors;
      add({{"impl", "generated"}, {"a", "3"}, {"b", "y"}, {"c", "0"}}, {a}, false);
      continue;
    }
    CHECK(seen.insert(params_key(child->params)).second);  // never a point the graph holds
    if (child->params.at("impl") == "framework") {
      ++framework;
    } else {
      REQUIRE(child->params.at("impl") == "generated");
      ++generated;
      const Params p = point(child->params);
      CHECK(p.at("c") == "0");  // the only allowed value
      CHECK((p.at("a") == "1" || p.at("a") == "2" || p.at("a") == "3" || p.at("a") == "4"));
      CHECK((p.at("b") == "x" || p.at("b") == "y" || p.at("b") == "z"));
      if (parent->params.at("impl") == "generated") {
        ++mutations;
        // A mutation of a generated parent moves exactly one parameter, while the parent has a free neighbour.
        bool free_neighbour = false;
        for (auto& [k, vals] :
             std::map<std::string, std::vector<std::string>>{{"a", {"1", "2", "3", "4"}}, {"b", {"x", "y", "z"}}})
          for (auto& v : vals) {
            Params q = parent->params;
            q[k] = v;
            free_neighbour |= v != parent->params.at(k) && !g.has_params(q);
          }
        if (free_neighbour) {
          CHECK(changed(p, point(parent->params)).size() == 1);
          ++one_moves;
        }
      } else {
        ++from_seeds;  // from a rewrite's parent: an unused seed point while there is one
        bool seeds_left = false;
        for (Params sd : seeds) {
          sd[KernelBenchOperator::kImpl] = "generated";
          seeds_left |= !g.has_params(sd);
        }
        if (seeds_left) CHECK(std::find(seeds.begin(), seeds.end(), p) != seeds.end());
      }
    }
    add(child->params, {a});
  }
  // The space has 12 points: every one was proposed once (one by a failing generator), then only rewrites.
  CHECK(generated + errors == 12);
  CHECK(errors == 1);
  CHECK(mutations >= 1);
  CHECK(one_moves >= 1);  // the one-parameter check above was made
  CHECK(from_seeds >= 1);
  CHECK(framework >= 5);
  std::set<std::string> points;
  for (auto& p : asked) points.insert(params_key(p));
  CHECK(points.size() == asked.size());  // the generator was never asked for the same point twice
}

TEST_CASE("the generated arm warm-starts from an earlier generated kernel whose point is in the space",
          "[kernelbench][generated]") {
  KernelBenchOperator op = generated_operator();
  Lessons l;
  Exemplar outside;
  outside.params = {{"impl", "generated"}, {"a", "9"}, {"b", "x"}, {"c", "0"}};  // a value outside the space
  Exemplar e;
  e.search = "earlier";
  e.node = 4;
  e.fitness = 2.5;
  e.params = {{"impl", "generated"}, {"a", "3"}, {"b", "x"}, {"c", "0"}};
  l.best = {outside, e};
  const std::string how = op.warm_start(l);
  CHECK(how.find("node 4") != std::string::npos);
  CHECK(how.find("(generated)") != std::string::npos);
  SearchGraph g;
  Rng rng(1);
  auto seed = op.make({Operation::seed, {}, 0}, g, rng);
  REQUIRE(seed);
  CHECK(seed->params == e.params);
}
