// The context memory's lessons: what is kept across searches, and how a template operator starts from it.
#include <catch2/catch.hpp>

#include "knowledge/template_library.hpp"
#include "runtime/memory/lessons.hpp"
#include "runtime/operators/template_operator.hpp"

using namespace kevolve;

namespace {
NodeRecord scored(uint64_t id, EvalStatus s, double fitness, Params p = {}, std::string reason = "") {
  NodeRecord n;
  n.id = id;
  n.state = NodeState::scored;
  n.status = s;
  n.fitness = fitness;
  n.params = std::move(p);
  n.reason = std::move(reason);
  return n;
}
}  // namespace

TEST_CASE("lessons keep the best kernels and how the others ended", "[memory]") {
  Lessons l;
  l.key = lessons_key("gelu", "cpu", "x86-avx2");
  CHECK(l.key == "gelu|cpu|x86-avx2");
  CHECK(l.record("s1", scored(1, EvalStatus::ok, 1.5, {{"vec", "1"}}), "src1"));
  CHECK_FALSE(l.record("s1", scored(2, EvalStatus::compile_error, 0, {}, "compiler"), ""));
  CHECK_FALSE(l.record("s1", scored(3, EvalStatus::incorrect, 0, {}, "mismatch"), ""));
  CHECK(l.record("s1", scored(4, EvalStatus::ok, 3.0, {{"vec", "8"}}), "src4"));
  CHECK(l.record("s2", scored(1, EvalStatus::ok, 2.0, {{"vec", "4"}}), "src-s2"));
  CHECK(l.record("s2", scored(2, EvalStatus::ok, 2.5, {{"vec", "2"}}), "src-s2b"));  // pushes 1.5x out
  REQUIRE(l.best.size() == Lessons::kKeep);
  CHECK(l.best[0].fitness == 3.0);
  CHECK(l.best[0].source == "src4");
  CHECK(l.best[2].fitness == 2.0);
  CHECK_FALSE(l.record("s3", scored(9, EvalStatus::ok, 1.0, {{"vec", "1"}}), "src1"));  // not among the best
  CHECK(l.evaluated() == 7);
  CHECK(l.outcomes.at("ok") == 5);
  CHECK(l.outcomes.at("compile_error/compiler") == 1);
  CHECK(l.outcomes.at("incorrect/mismatch") == 1);
  CHECK(l.searches == std::vector<std::string>{"s1", "s2", "s3"});
  const std::string s = l.summary();
  CHECK(s.find("7 kernels evaluated in 3 searches") != std::string::npos);
  CHECK(s.find("Best: 3.00x (search s1, node 4: vec=8)") != std::string::npos);

  auto back = decode_lessons(encode_lessons(l));
  REQUIRE(back);
  CHECK(back->key == l.key);
  CHECK(back->best.size() == 3);
  CHECK(back->best[1].params == l.best[1].params);
  CHECK(back->outcomes == l.outcomes);
  CHECK(back->searches == l.searches);
  CHECK_FALSE(decode_lessons("garbage"));
}

TEST_CASE("a template operator warm-starts from the best earlier kernel that is a valid point of its template",
          "[memory]") {
  auto t = find_template("cpu", "gelu", {std::string(KEVOLVE_SOURCE_DIR) + "/knowledge"});
  REQUIRE(t);
  TemplateOperator op(*t);
  Lessons l;
  l.key = "gelu|cpu|x86-avx2";
  Params foreign{{"block", "999"}};  // from another template version: ignored
  Params good = t->defaults();
  good[t->params.back().name] = t->params.back().values.back();
  l.best.push_back({"old", 7, foreign, "x", 9.0});
  l.best.push_back({"old", 3, good, "y", 2.0});
  const std::string how = op.warm_start(l);
  CHECK(how.find("search old, node 3, 2.00x") != std::string::npos);
  SearchGraph g;
  Rng rng(1);
  auto seed = op.make(Proposal{Operation::seed, {}, 0}, g, rng);
  REQUIRE(seed);
  CHECK(seed->params == good);
  CHECK(seed->candidate.provenance.find("warm start") != std::string::npos);

  TemplateOperator cold(*t);
  CHECK(cold.warm_start(Lessons{}).empty());
  auto plain = cold.make(Proposal{Operation::seed, {}, 0}, g, rng);
  REQUIRE(plain);
  CHECK(plain->params == t->defaults());
}
