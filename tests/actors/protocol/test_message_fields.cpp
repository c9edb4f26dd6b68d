// Every message struct of actors/protocol/messages.hpp, and every record that travels inside one, crosses
// CAF's binary serializer and comes back with every field as it was sent. The inspect that CAF uses is
// written from the type's field list (actors/protocol/message_fields.hpp, runtime/records/fields.hpp), so
// these tests also check that each list names every member of its struct.
#include <catch2/catch.hpp>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "actors/protocol/type_ids.hpp"
#include "runtime/records/field_codec.hpp"

using namespace kevolve;

namespace {

using field_codec::HasFields;

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

// Gives every field of a default-made x a value unlike its default and unlike the other fields' (n counts the
// values made): a field the serializer dropped or swapped with another comes back different.
template <class T>
void fill(T& x, int& n) {
  if constexpr (HasFields<T>) {
    fields(x, [&](auto&... m) { (fill(m, n), ...); });
  } else if constexpr (std::is_same_v<T, std::string>) {
    x = "value " + std::to_string(++n);
  } else if constexpr (std::is_same_v<T, bool>) {
    x = !x;
  } else if constexpr (std::is_enum_v<T>) {  // the next value (any value the enum names or not travels alike)
    x = static_cast<T>(static_cast<std::underlying_type_t<T>>(x) + 1);
  } else if constexpr (std::is_arithmetic_v<T>) {
    x = static_cast<T>(x + ++n + (std::is_floating_point_v<T> ? 0.5 : 0));
  } else if constexpr (is_vector<T>::value) {
    x.resize(2);
    for (auto& v : x) fill(v, n);
  } else {  // a map
    typename T::key_type k{};
    typename T::mapped_type v{};
    fill(k, n);
    fill(v, n);
    x.emplace(std::move(k), std::move(v));
  }
}

// The fields of `a` and `b` that differ (Equal = false) or that are the same (Equal = true), named by their
// place ("MakeRequest.5[1].2": the sixth field's second element's third field).
template <bool Equal, class T>
void compare(const T& a, const T& b, const std::string& at, std::vector<std::string>& out) {
  if constexpr (HasFields<T>) {
    fields(a, [&](const auto&... ma) {
      fields(b, [&](const auto&... mb) {
        size_t i = 0;
        (compare<Equal>(ma, mb, at + "." + std::to_string(i++), out), ...);
      });
    });
  } else if constexpr (is_vector<T>::value) {
    if (a.size() != b.size()) {
      if (!Equal) out.push_back(at + " (its size)");
      return;
    }
    for (size_t i = 0; i < a.size(); ++i) compare<Equal>(a[i], b[i], at + "[" + std::to_string(i) + "]", out);
  } else if ((a == b) == Equal) {
    out.push_back(at);
  }
}

// The members of an aggregate: the most initializers T{...} takes (each converts to any member type).
struct any_member {
  template <class U>
  operator U() const;
};
template <class T, class... A>
constexpr size_t member_count() {
  if constexpr (requires { T{std::declval<A>()..., any_member{}}; })
    return member_count<T, A..., any_member>();
  else
    return sizeof...(A);
}

template <class T>
size_t field_count() {
  T x{};
  return fields(x, [](auto&... m) { return sizeof...(m); });
}

// x through CAF's binary serializer and back.
template <class T>
T round_trip(T& x) {
  std::vector<char> bytes;
  caf::binary_serializer sink{nullptr, bytes};
  REQUIRE(!sink(x));
  REQUIRE(!bytes.empty());
  T back{};
  caf::binary_deserializer source{nullptr, bytes};
  REQUIRE(!source(back));
  CHECK(source.remaining() == 0);
  return back;
}

// Fills a T, sends it through CAF's serializer and checks each field came back, and that its field list
// names every member of the struct.
template <class T>
void check_message(const char* name) {
  INFO(name);
  CHECK(field_count<T>() == member_count<T>());
  T sent{};
  int n = 0;
  fill(sent, n);
  std::vector<std::string> unset, lost;
  compare<true>(sent, T{}, name, unset);  // every field was given a value of its own
  for (auto& u : unset) UNSCOPED_INFO("left at its default: " << u);
  CHECK(unset.empty());
  compare<false>(sent, round_trip(sent), name, lost);
  for (auto& l : lost) UNSCOPED_INFO("did not survive: " << l);
  CHECK(lost.empty());
}

}  // namespace

TEST_CASE("every message crosses CAF's serializer with every field", "[protocol]") {
  check_message<MakeRequest>("MakeRequest");
  check_message<MakeReply>("MakeReply");
  check_message<ActionReply>("ActionReply");
  check_message<ScoredNote>("ScoredNote");
  check_message<BuildJob>("BuildJob");
  check_message<Proposal>("Proposal");
}

TEST_CASE("every record inside a message crosses CAF's serializer with every field", "[protocol]") {
  check_message<NodeContext>("NodeContext");
  check_message<EvaluatingDevice>("EvaluatingDevice");
  check_message<StoreBatch>("StoreBatch");
  check_message<NodeEntry>("NodeEntry");
  check_message<ArtifactEntry>("ArtifactEntry");
  check_message<Artifact>("Artifact");
  check_message<KbQuery>("KbQuery");
  check_message<KbHit>("KbHit");
  check_message<SearchStatus>("SearchStatus");
  check_message<EvalJob>("EvalJob");
  check_message<BuildOutcome>("BuildOutcome");
  check_message<DeviceInfo>("DeviceInfo");
  check_message<NodeRecord>("NodeRecord");
  check_message<SearchRecord>("SearchRecord");
  check_message<Candidate>("Candidate");
  check_message<EvalResult>("EvalResult");
  check_message<EvalOptions>("EvalOptions");
}

TEST_CASE("a context request carries the parents and the device as sent", "[protocol]") {
  MakeRequest q;
  q.search = "s1";
  q.proposal = {Operation::crossover, {3, 5}, 0};
  q.parent_contexts = {{3, "kernel three", "slow: memory bound", 812.5}, {5, "kernel five", "", 0}};
  q.best = {{5, "kernel five", "", 0}};
  q.device = {"NVIDIA H200 (sm_90)", 132, 60 << 20, 3891.6};
  MakeRequest back = round_trip(q);
  REQUIRE(back.parent_contexts.size() == 2);
  CHECK(back.parent_contexts[0].id == 3);
  CHECK(back.parent_contexts[0].source == "kernel three");
  CHECK(back.parent_contexts[0].report == "slow: memory bound");
  CHECK(back.parent_contexts[0].peak_gbps == 812.5);
  CHECK(back.parent_contexts[1].id == 5);
  REQUIRE(back.best.size() == 1);
  CHECK(back.best[0].source == "kernel five");
  CHECK(back.device.name == "NVIDIA H200 (sm_90)");
  CHECK(back.device.sms == 132);
  CHECK(back.device.l2_bytes == 60 << 20);
  CHECK(back.device.copy_gbps == 3891.6);
  CHECK(back.proposal.parents == std::vector<uint64_t>{3, 5});
}
