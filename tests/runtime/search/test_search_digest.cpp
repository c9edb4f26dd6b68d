// The digest of a search: what the report, the dashboard and the console show, gathered in one pass with
// memory bounded by its limits. Checked against the same figures computed over all the nodes at once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>

#include "runtime/search/search_digest.hpp"

using namespace kevolve;

namespace {

// n nodes in id order: a mix of correct (random fitness, ties included), failed and in-flight nodes, two
// device classes, parents pointing back.
std::vector<NodeRecord> make_nodes(uint64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<NodeRecord> nodes;
  for (uint64_t id = 1; id <= n; ++id) {
    NodeRecord r;
    r.id = id;
    if (id > 3) r.parents = {1 + rng() % (id - 1)};
    const int kind = static_cast<int>(rng() % 10);
    r.state = kind == 9 ? NodeState::queued : NodeState::scored;
    r.status = kind < 6 ? EvalStatus::ok : kind < 8 ? EvalStatus::compile_error : EvalStatus::incorrect;
    r.fitness = r.status == EvalStatus::ok ? static_cast<double>(rng() % 5000) / 1000.0 : 0;
    r.device_class = kind % 2 ? "cuda:sm_90 H200" : "cpu:znver3";
    r.candidate_ms = 1.0 + static_cast<double>(id % 7);
    nodes.push_back(r);
  }
  return nodes;
}

bool fitter(const NodeRecord& a, const NodeRecord& b) {
  return a.fitness != b.fitness ? a.fitness > b.fitness : a.id < b.id;
}

}  // namespace

TEST_CASE("a digest of 100,000 nodes gives the counts, best, classes and fittest of the whole search",
          "[search][digest]") {
  const auto nodes = make_nodes(100000, 7);
  DigestLimits l;
  l.keep_all = 5000;
  l.fittest = 300;
  l.latest = 500;
  l.top_records = 12;
  SearchDigest d(l);
  for (auto n : nodes) d.add(n);

  CHECK(d.total() == 100000);
  const NodeCounts c = count_nodes(nodes);
  CHECK(d.counts().evaluated == c.evaluated);
  CHECK(d.counts().correct == c.correct);
  CHECK(d.counts().failed == c.failed);
  CHECK(d.counts().in_flight == c.in_flight);

  std::vector<NodeRecord> correct;
  std::map<std::string, int64_t> by_status;
  for (auto& n : nodes) {
    if (n.correct()) correct.push_back(n);
    if (n.scored()) ++by_status[status_name(n.status)];
  }
  CHECK(d.by_status() == by_status);
  std::sort(correct.begin(), correct.end(), fitter);
  REQUIRE(d.best() == correct.front().id);
  CHECK(d.best_fitness() == correct.front().fitness);

  const auto top = d.top();
  REQUIRE(top.size() == 12);
  for (size_t i = 0; i < top.size(); ++i) CHECK(top[i].id == correct[i].id);
  const auto fit = d.fittest();
  REQUIRE(fit.size() == 300);
  for (size_t i = 0; i < fit.size(); ++i) CHECK(fit[i] == correct[i].id);

  const auto latest = d.latest();
  REQUIRE(latest.size() == 500);
  CHECK(latest.front() == 99501);
  CHECK(latest.back() == 100000);
  CHECK(d.all() == nullptr);  // more nodes than keep_all: none kept

  const auto classes = d.classes();
  const auto expected = scores_by_class(nodes);
  REQUIRE(classes.size() == expected.size());
  for (size_t i = 0; i < classes.size(); ++i) {
    CHECK(classes[i].device_class == expected[i].device_class);
    CHECK(classes[i].evaluated == expected[i].evaluated);
    CHECK(classes[i].correct == expected[i].correct);
    CHECK(classes[i].best == expected[i].best);
    CHECK(classes[i].best_ms == expected[i].best_ms);
  }
}

TEST_CASE("the digest's curve and failure mix cover every scored node in order", "[search][digest]") {
  for (uint64_t n : {1u, 7u, 20u, 21u, 1000u, 77777u}) {
    const auto nodes = make_nodes(n, static_cast<unsigned>(n));
    SearchDigest d;
    for (auto r : nodes) d.add(r);
    // curve: a point at every new best above 0 (index = scored nodes so far), then the closing point
    std::vector<CurvePoint> want;
    double best = 0;
    int64_t scored = 0;
    for (auto& r : nodes) {
      if (!r.scored()) continue;
      ++scored;
      if (r.correct() && r.fitness > best) {
        best = r.fitness;
        want.push_back({scored, best, r.id});
      }
    }
    if (scored > 0) want.push_back({scored, best, 0});
    const auto curve = d.curve();
    REQUIRE(curve.size() == want.size());
    for (size_t i = 0; i < curve.size(); ++i) {
      CHECK(curve[i].index == want[i].index);
      CHECK(curve[i].node == want[i].node);
    }
    // mix: consecutive slices, at most 20, at least 10 once there are more than 20 scored nodes, counts add up
    const auto mix = d.mix();
    CHECK(mix.size() <= 20);
    if (scored > 20) CHECK(mix.size() >= 10);
    if (scored <= 20) CHECK(static_cast<int64_t>(mix.size()) == scored);
    int64_t prev = 0, sum = 0;
    for (auto& s : mix) {
      int64_t in = 0;
      for (auto& [k, v] : s.counts) in += v;
      CHECK(s.upto - prev == in);
      prev = s.upto;
      sum += in;
    }
    CHECK(sum == scored);
    // every node kept while few (the default keep_all is 0: none)
    CHECK((d.all() == nullptr) == (n > 0));
  }
}

TEST_CASE("digest_of keeps every node of a vector, in id order", "[search][digest]") {
  const auto nodes = make_nodes(3000, 3);
  const SearchDigest d = digest_of(nodes, DigestLimits{});
  REQUIRE(d.all() != nullptr);
  REQUIRE(d.all()->size() == nodes.size());
  CHECK(d.all()->front().id == 1);
  CHECK(d.all()->back().id == 3000);
}
