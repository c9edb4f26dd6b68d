#include <catch2/catch.hpp>

#include "runtime/config/problem_loader.hpp"
#include "runtime/records/records_codec.hpp"

using namespace kevolve;

TEST_CASE("an evaluation request survives the worker protocol unchanged", "[codec]") {
  auto spec = load_problem(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core/merge_bucketized_dense/problem.toml");
  REQUIRE(spec);
  EvalRequest q{*spec, "/tmp/x.so", "kevolve_kernel", {}};
  q.options.detectors.set(Detector::poison, false);
  q.options.seed = 42;
  wire::Writer w;
  encode(w, q);
  wire::Reader r(w.bytes());
  EvalRequest back;
  decode(r, back);
  CHECK(r.done());
  CHECK(back.spec.name == spec->name);
  CHECK(back.spec.inputs.size() == spec->inputs.size());
  CHECK(back.spec.inputs[1].generator.names == spec->inputs[1].generator.names);
  CHECK(back.spec.verify == spec->verify);
  CHECK(back.spec.tolerances.size() == spec->tolerances.size());
  CHECK(back.options.seed == 42);
  CHECK_FALSE(back.options.detectors.on(Detector::poison));
  CHECK(back.options.detectors.on(Detector::magnitude));
}

TEST_CASE("a truncated frame is a decode error, not a crash", "[codec]") {
  EvalResult e;
  e.status = EvalStatus::incorrect;
  e.message = "output 'y' ...";
  wire::Writer w;
  encode(w, e);
  auto bytes = w.bytes();
  bytes.resize(bytes.size() / 2);
  wire::Reader r(bytes);
  EvalResult back;
  CHECK_THROWS_AS(decode(r, back), wire::DecodeError);
}
