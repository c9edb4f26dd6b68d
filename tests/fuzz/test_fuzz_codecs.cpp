// Fuzzing the byte codecs: the worker protocol's frames and records (runtime/core/wire,
// runtime/records/records_codec) and the store's node and search records (runtime/records/field_codec
// through storage/store.hpp). Properties: damaged bytes end in a decode error (wire::DecodeError from a
// Reader, a corrupt status from decode_node/decode_search) — never a crash, a hang, an allocation the bytes cannot
// justify or another exception; decode(encode(x)) == x for valid records; what decodes re-encodes stably.
//
// The binary corpus (tests/fuzz/corpus/{eval_request,eval_result,node,search,frames}) is written by the
// hidden test "fuzz corpus: write the codec seeds" (run it by name after changing a record's fields).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>

#include "runtime/config/problem_loader.hpp"
#include "runtime/records/records_codec.hpp"
#include "storage/store.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace kevolve;
using namespace kevolve::fuzz;

namespace {

std::string bytes_of(const wire::Writer& w) { return std::string(w.bytes().begin(), w.bytes().end()); }

template <class T>
std::string encoded(const T& x) {
  wire::Writer w;
  encode(w, x);
  return bytes_of(w);
}

// Decodes `bytes` as a T through a Reader; the re-encoding of what was decoded, or nullopt on a decode
// error. Any other exception escapes to the caller, which fails the test.
template <class T>
std::optional<std::string> decode_wire(const std::string& bytes) {
  std::vector<char> b(bytes.begin(), bytes.end());
  wire::Reader r(b);
  T x;
  try {
    decode(r, x);
  } catch (const wire::DecodeError&) { return std::nullopt; }
  return encoded(x);
}

std::vector<ProblemSpec> core_specs() {
  std::vector<ProblemSpec> out;
  for (auto& e : std::filesystem::directory_iterator(std::string(KEVOLVE_SOURCE_DIR) + "/problems/core")) {
    auto p = load_problem((e.path() / "problem.toml").string());
    if (p) out.push_back(*p);
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

// A random valid evaluation request: a real problem spec and random options.
EvalRequest random_request(Mutator& m, const std::vector<ProblemSpec>& specs) {
  EvalRequest q{specs[m.below(specs.size())], "/tmp/candidate.so", "kevolve_kernel", {}};
  randomize(m, q.options);
  return q;
}

// Runs one target through `check(input, valid)`, which returns "" or what broke: the corpus files (valid
// when `files_valid`: the store must go on reading records it wrote before), the kept crashes, `fresh`
// (valid encodings made now with today's field lists), then `iterations` mutations of all of them.
template <class Check>
void run_target(const std::string& target, uint64_t salt, uint64_t fallback_iterations, bool files_valid, Check check,
                const std::vector<std::string>& fresh = {}) {
  auto corpus = load_corpus(target);
  const auto crashes = load_corpus(target, "", true);
  REQUIRE(corpus.size() >= 2);
  for (auto& f : fresh) {
    const std::string broke = check(f, true);
    if (!broke.empty()) FAIL(target << ": " << broke << ": " << keep_failure(target, 0, f));
  }
  corpus.insert(corpus.end(), fresh.begin(), fresh.end());
  Mutator m(seed() + salt);
  const uint64_t fixed = corpus.size() + crashes.size(), n = fixed + iterations(fallback_iterations);
  for (uint64_t i = 0; i < n; ++i) {
    const auto input = i < corpus.size() ? corpus[i]
                       : i < fixed       ? crashes[i - corpus.size()]
                                         : m.bytes(corpus[m.below(corpus.size())], corpus);
    if (trace()) std::cerr << target << " " << i << "\n";
    std::string broke;
    try {
      broke = check(input, i < corpus.size() && files_valid);
    } catch (const std::exception& e) { broke = std::string("exception escaped: ") + e.what(); }
    if (!broke.empty()) FAIL(target << ": " << broke << ": " << keep_failure(target, i, input));
  }
}

}  // namespace

TEST_CASE("fuzz: valid records survive encode and decode unchanged", "[fuzz]") {
  Mutator m(seed() + 10);
  const auto specs = core_specs();
  REQUIRE(specs.size() >= 3);
  for (uint64_t i = 0; i < iterations(5000); ++i) {
    NodeRecord n;
    randomize(m, n);
    auto n2 = decode_node(encode_node(n));
    REQUIRE(n2);
    REQUIRE(encode_node(*n2) == encode_node(n));
    SearchRecord s;
    randomize(m, s);
    auto s2 = decode_search(encode_search(s));
    REQUIRE(s2);
    REQUIRE(encode_search(*s2) == encode_search(s));
    EvalResult e;
    randomize(m, e);
    auto e2 = decode_wire<EvalResult>(encoded(e));
    REQUIRE(e2);
    REQUIRE(*e2 == encoded(e));
    const auto q = random_request(m, specs);
    auto q2 = decode_wire<EvalRequest>(encoded(q));
    REQUIRE(q2);
    REQUIRE(*q2 == encoded(q));
  }
}

TEST_CASE("fuzz: damaged node and search records are refused, never a crash", "[fuzz]") {
  run_target("node", 20, 20000, true, [](const std::string& in, bool valid) -> std::string {
    const auto n = decode_node(in);
    if (valid && !n) return "a corpus record did not decode";
    if (!n) return "";
    const auto again = decode_node(encode_node(*n));
    if (!again || encode_node(*again) != encode_node(*n))
      return "a decoded record does not re-encode stably";
    return "";
  });
  run_target("search", 21, 15000, true, [](const std::string& in, bool valid) -> std::string {
    const auto s = decode_search(in);
    if (valid && !s) return "a corpus record did not decode";
    if (!s) return "";
    const auto again = decode_search(encode_search(*s));
    if (!again || encode_search(*again) != encode_search(*s))
      return "a decoded record does not re-encode stably";
    return "";
  });
}

TEST_CASE("fuzz: damaged worker-protocol records are decode errors, never a crash", "[fuzz]") {
  // Both ends of a pipe are built from one tree, so the committed files may be from an older field list.
  Mutator m(seed() + 29);
  const auto specs = core_specs();
  std::vector<std::string> requests, results;
  for (int i = 0; i < 4; ++i) {
    requests.push_back(encoded(random_request(m, specs)));
    EvalResult e;
    randomize(m, e);
    results.push_back(encoded(e));
  }
  run_target(
      "eval_request", 30, 15000, false,
      [](const std::string& in, bool valid) -> std::string {
        auto out = decode_wire<EvalRequest>(in);
        if (valid && !out) return "a corpus request did not decode";
        if (out && decode_wire<EvalRequest>(*out) != out) return "a decoded request does not re-encode stably";
        return "";
      },
      requests);
  run_target(
      "eval_result", 31, 15000, false,
      [](const std::string& in, bool valid) -> std::string {
        auto out = decode_wire<EvalResult>(in);
        if (valid && !out) return "a corpus result did not decode";
        if (out && decode_wire<EvalResult>(*out) != out) return "a decoded result does not re-encode stably";
        return "";
      },
      results);
}

TEST_CASE("fuzz: a damaged frame stream ends in refused frames or end of stream", "[fuzz]") {
  // The bytes a worker pipe could carry, read back through read_frame from a file descriptor; every
  // frame that comes out is decoded as a request and as a result.
  run_target("frames", 40, 8000, false, [](const std::string& in, bool valid) -> std::string {
    FILE* f = std::tmpfile();
    if (!f) return "no temporary file";
    std::fwrite(in.data(), 1, in.size(), f);
    std::fflush(f);
    const int fd = fileno(f);
    ::lseek(fd, 0, SEEK_SET);
    int frames = 0;
    std::string broke;
    while (auto frame = wire::read_frame(fd, 1u << 20)) {
      ++frames;
      const std::string payload(frame->begin(), frame->end());
      (void)decode_wire<EvalRequest>(payload);
      (void)decode_wire<EvalResult>(payload);
      if (frames > 100000) {
        broke = "read_frame does not reach the end";
        break;
      }
    }
    std::fclose(f);
    if (valid && frames < 2) return "a corpus stream held fewer than two frames";
    return broke;
  });
}

TEST_CASE("fuzz corpus: write the codec seeds", "[.][fuzz-corpus]") {
  Mutator m(7);
  const auto specs = core_specs();
  auto write = [](const std::string& target, const std::string& name, const std::string& bytes) {
    std::filesystem::create_directories(corpus_dir(target));
    std::ofstream(corpus_dir(target) + "/" + name, std::ios::binary | std::ios::trunc) << bytes;
  };
  auto frame = [](const std::string& payload) {
    wire::Writer w;
    w.u32(static_cast<uint32_t>(payload.size()));
    return bytes_of(w) + payload;
  };
  for (int i = 0; i < 4; ++i) {
    NodeRecord n;
    randomize(m, n);
    n.state = NodeState::scored;
    n.status = EvalStatus::ok;
    write("node", "node-" + std::to_string(i) + ".bin", encode_node(n));
    SearchRecord s;
    randomize(m, s);
    write("search", "search-" + std::to_string(i) + ".bin", encode_search(s));
    EvalResult e;
    randomize(m, e);
    write("eval_result", "result-" + std::to_string(i) + ".bin", encoded(e));
    const auto q = random_request(m, specs);
    write("eval_request", "request-" + std::to_string(i) + ".bin", encoded(q));
    write("frames", "frames-" + std::to_string(i) + ".bin", frame(encoded(q)) + frame(encoded(e)));
  }
  // A node record as stored before device_class existed (12 fields).
  NodeRecord old;
  old.id = 3;
  old.parents = {1};
  old.op = Operation::mutate;
  old.params = {{"UNROLL", "4"}};
  old.state = NodeState::scored;
  const auto full = encode_node(old);
  write("node", "node-without-device-class.bin", full.substr(0, full.size() - 4));
  SearchRecord plain;
  plain.id = "gelu-greedy-s1";
  plain.problem = "gelu";
  plain.strategy = "greedy";
  write("search", "search-plain.bin", encode_search(plain));
}
