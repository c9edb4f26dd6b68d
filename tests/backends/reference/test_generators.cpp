// The trusted evaluators' input generators (backends/reference): segment_sorted at the benchmark size, on the
// CPU, as both evaluators make it. Each segment must come out sorted, the inputs the same for a seed and
// different for another seed, whatever the number of libtorch threads. And every registered reference takes
// its inputs in the spec's order, the order a kernel receives them.
#include <ATen/Parallel.h>

#include <filesystem>

#include "backends/reference/generators.hpp"
#include "backends/reference/references.hpp"
#include "runtime/config/problem_loader.hpp"

// libtorch (c10/util/logging_is_not_google_glog.h) defines a CHECK macro of its own that does nothing on
// success and aborts on failure; Catch's CHECK must be the one in force, so Catch comes after it.
#undef CHECK
#include <catch2/catch.hpp>

using namespace kevolve;

namespace {

ProblemSpec spec_of(const std::string& name) {
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/" + name + "/problem.toml");
  if (!spec) throw std::runtime_error(spec.error());
  return *spec;
}

// Segment bounds from lengths (each clamped at 0) or from offsets, as the generator reads them.
std::vector<int64_t> bounds_of(const at::Tensor& t, bool lengths) {
  const at::Tensor c = t.reshape({-1}).to(at::kLong).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  std::vector<int64_t> b;
  if (!lengths) return std::vector<int64_t>(p, p + c.numel());
  b.push_back(0);
  for (int64_t i = 0; i < c.numel(); ++i) b.push_back(b.back() + std::max<int64_t>(0, p[i]));
  return b;
}

// The first segment that is not sorted, or -1.
template <class T>
int64_t first_unsorted(const at::Tensor& flat, const std::vector<int64_t>& b) {
  const at::Tensor c = flat.contiguous();
  const T* p = c.data_ptr<T>();
  for (size_t i = 0; i + 1 < b.size(); ++i)
    for (int64_t k = b[i] + 1; k < b[i + 1]; ++k)
      if (p[k - 1] > p[k]) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace

TEST_CASE("segment_sorted inputs at the benchmark size are sorted per segment and fixed by the seed", "[reference]") {
  const int threads = at::get_num_threads();
  SECTION("batch_event_truncate: values and timestamps over 262,144 segments given by their lengths") {
    const ProblemSpec spec = spec_of("batch_event_truncate");
    REQUIRE(spec.bench.at("B") == 262144);
    auto a = reference::make_inputs(spec, spec.bench, 7);
    REQUIRE(a);
    const std::vector<int64_t> b = bounds_of((*a)[0], true);
    REQUIRE(b.back() > 0);
    for (int i : {1, 2}) {
      INFO("input " << spec.inputs[i].name);
      CHECK((*a)[i].numel() == b.back());
      CHECK(first_unsorted<int64_t>((*a)[i], b) == -1);
    }
    CHECK((*a)[1].min().item<int64_t>() >= 0);
    CHECK((*a)[1].max().item<int64_t>() < 1000000000);
    // the same seed with one libtorch thread: the same inputs; another seed: others
    at::set_num_threads(1);
    auto again = reference::make_inputs(spec, spec.bench, 7);
    at::set_num_threads(threads);
    REQUIRE(again);
    for (int i : {0, 1, 2}) CHECK(at::equal((*a)[i], (*again)[i]));
    auto other = reference::make_inputs(spec, spec.bench, 8);
    REQUIRE(other);
    CHECK_FALSE(at::equal((*a)[0], (*other)[0]));
  }
  SECTION("merge_bucketized_dense: float boundaries per feature given by offsets") {
    const ProblemSpec spec = spec_of("merge_bucketized_dense");
    auto a = reference::make_inputs(spec, spec.bench, 3);
    REQUIRE(a);
    const std::vector<int64_t> b = bounds_of((*a)[1], false);
    CHECK((*a)[2].numel() == b.back());
    CHECK(first_unsorted<float>((*a)[2], b) == -1);
    CHECK((*a)[2].min().item<float>() >= -3.0f);
    CHECK((*a)[2].max().item<float>() <= 3.0f);
  }
}

// The prompt lists a problem's inputs in the spec's order and shows the reference's code, which indexes
// them as i[0], i[1], ...: the two must agree for every problem, or a model reading "i[1] is boundaries"
// writes a kernel that reads the offsets as boundaries (merge_bucketized_dense, map_id and
// batch_event_truncate took theirs in another order).
TEST_CASE("every problem's reference indexes its inputs in the order the spec lists them", "[reference]") {
  int checked = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(std::string(KEVOLVE_SOURCE_DIR) + "/problems")) {
    if (e.path().filename() != "problem.toml") continue;
    auto spec = load_problem(e.path().string());
    if (!spec) continue;  // KernelBench-format and other specs without a libtorch reference
    const reference::Reference* ref = reference::find_reference(spec->reference);
    if (!ref) continue;
    std::vector<std::string> names;
    for (auto& in : spec->inputs) names.push_back(in.name);
    INFO(e.path().string() << ": reference " << ref->name);
    CHECK(ref->inputs == names);
    ++checked;
  }
  CHECK(checked >= 10);  // every core problem has a reference
}
