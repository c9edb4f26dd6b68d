#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "backends/harness/verify.hpp"

using namespace kevolve;
using namespace kevolve::harness;

TEST_CASE("poisoned elements are counted as unwritten, with the first index", "[verify]") {
  std::vector<float> out(100, 1.0f), ref(100, 1.0f);
  poison_fill(out.data() + 40, DType::float32, 3);
  int64_t first;
  CHECK(count_poisoned(out.data(), DType::float32, 100, first) == 3);
  CHECK(first == 40);
  auto r = compare(out.data(), ref.data(), DType::float32, 100, {Tolerance{1e-5, 1e-5}, true, true});
  CHECK_FALSE(r.ok);
  CHECK(r.unwritten == 3);
  CHECK(r.worst == 40);
}

TEST_CASE("int64 poison is not a value a kernel produces by accident and ints compare exactly", "[verify]") {
  std::vector<int64_t> out(10, 5), ref(10, 5);
  poison_fill(out.data(), DType::int64, 1);
  CHECK_FALSE(compare(out.data(), ref.data(), DType::int64, 10, {Tolerance{}, true, true}).ok);
  out[0] = 5;
  CHECK(compare(out.data(), ref.data(), DType::int64, 10, {Tolerance{}, true, true}).ok);
  out[9] = 6;
  auto r = compare(out.data(), ref.data(), DType::int64, 10, {Tolerance{}, true, true});
  CHECK(r.mismatches == 1);
  CHECK(r.worst == 9);
}

TEST_CASE("NaN and Inf never pass, whatever the tolerance", "[verify]") {
  std::vector<float> out{1, NAN, 3}, ref{1, 2, 3};
  auto r = compare(out.data(), ref.data(), DType::float32, 3, {Tolerance{1e9, 1e9}, false, false});
  CHECK_FALSE(r.ok);
  CHECK(r.nonfinite == 1);
  out[1] = INFINITY;
  CHECK_FALSE(compare(out.data(), ref.data(), DType::float32, 3, {Tolerance{1e9, 1e9}, false, false}).ok);
}

TEST_CASE("a constant output within a loose atol fails only the magnitude check", "[verify]") {
  std::vector<float> ref(1000), out(1000, 0.001f);
  for (int i = 0; i < 1000; ++i) ref[i] = 0.002f * float(i % 7) / 6.0f;
  auto plain = compare(out.data(), ref.data(), DType::float32, 1000, {Tolerance{0.05, 0}, true, false});
  CHECK(plain.ok);
  auto strict = compare(out.data(), ref.data(), DType::float32, 1000, {Tolerance{0.05, 0}, true, true});
  CHECK_FALSE(strict.ok);
  CHECK(strict.magnitude_fail);
}

TEST_CASE("rounding-level differences pass every check and report the worst element", "[verify]") {
  std::vector<float> ref(64), out(64);
  for (int i = 0; i < 64; ++i) {
    ref[i] = std::sin(float(i));
    out[i] = ref[i] * (1 + 1e-7f);
  }
  out[17] = ref[17] + 2e-6f;
  auto r = compare(out.data(), ref.data(), DType::float32, 64, {Tolerance{1e-5, 1e-5}, true, true});
  CHECK(r.ok);
  CHECK(r.worst == 17);
  CHECK(r.max_abs == Approx(2e-6).epsilon(0.1));
}

TEST_CASE("a check at drawn positions sees what is at them, and names the worst by its place in the whole output",
          "[verify]") {
  std::vector<float> out(1000, 2.0f), ref(1000, 2.0f);
  out[700] = 2.5f;                                 // a wrong value
  poison_fill(out.data() + 900, DType::float32, 1);  // an element never written
  const CompareOptions how{Tolerance{1e-5, 1e-5}, true, true};
  CHECK(compare_at(out.data(), ref.data(), DType::float32, {1, 50, 699, 701}, how).ok);
  auto wrong = compare_at(out.data(), ref.data(), DType::float32, {1, 50, 700, 999}, how);
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.mismatches == 1);
  CHECK(wrong.worst == 700);
  auto unwritten = compare_at(out.data(), ref.data(), DType::float32, {3, 900}, how);
  CHECK_FALSE(unwritten.ok);
  CHECK(unwritten.unwritten == 1);
  CHECK(unwritten.worst == 900);
}
