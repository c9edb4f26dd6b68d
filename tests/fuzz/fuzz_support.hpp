// Bounded, reproducible fuzzing inside Catch2: a corpus of valid inputs (tests/fuzz/corpus/<target>/, one
// file per input, committed) and a seeded mutator that damages them the ways stored and transmitted bytes
// get damaged — bit flips, byte changes, truncations, splices of two corpus entries, huge length fields,
// deleted and repeated ranges — plus, for TOML, random keys and values.
//
// Each target runs `iterations()` mutated inputs from the fixed seed `seed()`; KEVOLVE_FUZZ_ITERATIONS and
// KEVOLVE_FUZZ_SEED change them for a longer run by hand. An input that broke a property is written to
// `$TMPDIR/kevolve-fuzz-<target>-<iteration>` (the test's message says so) so it can be kept in the corpus.
// A crash is reproduced by the same seed and the iteration number printed with KEVOLVE_FUZZ_TRACE=1.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/records/field_codec.hpp"

namespace kevolve::fuzz {

inline uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}
inline uint64_t seed() { return env_number("KEVOLVE_FUZZ_SEED", 20251201); }
inline uint64_t iterations(uint64_t fallback) { return env_number("KEVOLVE_FUZZ_ITERATIONS", fallback); }
inline bool trace() { return env_number("KEVOLVE_FUZZ_TRACE", 0) != 0; }

inline std::string corpus_dir(const std::string& target) {
  return std::string(KEVOLVE_SOURCE_DIR) + "/tests/fuzz/corpus/" + target;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The files of the target's corpus folder whose name ends with `suffix`, sorted by name: the valid inputs
// mutations start from, or (crashes = true) the inputs named crash-*, kept because they once broke a
// property and checked on every run.
inline std::vector<std::string> load_corpus(const std::string& target, const std::string& suffix = "",
                                            bool crashes = false) {
  std::vector<std::filesystem::path> paths;
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator(corpus_dir(target), ec)) {
    const auto name = e.path().filename().string();
    if (e.is_regular_file() && name.ends_with(suffix) && name.starts_with("crash-") == crashes)
      paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> out;
  for (auto& p : paths) out.push_back(read_file(p));
  return out;
}

// Keeps an input that broke a property where the developer can add it to the corpus; returns the path.
inline std::string keep_failure(const std::string& target, uint64_t iteration, const std::string& bytes) {
  const auto path =
      (std::filesystem::temp_directory_path() / ("kevolve-fuzz-" + target + "-" + std::to_string(iteration))).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  uint64_t below(uint64_t n) { return n == 0 ? 0 : std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
  std::mt19937_64& rng() { return rng_; }

  // One to four byte-level damages of `in`; `others` supplies the second half of splices.
  std::string bytes(std::string in, const std::vector<std::string>& others) {
    for (uint64_t n = 1 + below(4); n > 0; --n) in = one_damage(std::move(in), others);
    return in;
  }

  // Text damages for TOML: byte damages, or a random key = value line inserted at a line start, or a
  // value replaced by a random one.
  std::string toml(std::string in, const std::vector<std::string>& others, const std::vector<std::string>& keys) {
    for (uint64_t n = 1 + below(3); n > 0; --n) {
      switch (below(4)) {
        case 0:
          in = one_damage(std::move(in), others);
          break;
        case 1:
          in.insert(line_start(in), random_line(keys));
          break;
        case 2: {  // replace the value of a random `key = value` line
          const size_t eq = in.find('=', below(in.size() + 1));
          if (eq == std::string::npos) break;
          const size_t end = in.find('\n', eq);
          in.replace(eq + 1, (end == std::string::npos ? in.size() : end) - eq - 1, " " + random_value());
          break;
        }
        default:
          in.insert(line_start(in), "[" + pick(kSections) + "]\n" + random_line(keys));
          break;
      }
    }
    return in;
  }

  std::string random_value() {
    static const std::vector<std::string> values{"0",
                                                 "-1",
                                                 "1",
                                                 "9223372036854775807",
                                                 "-9223372036854775808",
                                                 "99999999999999999999",
                                                 "1e308",
                                                 "-1e308",
                                                 "nan",
                                                 "inf",
                                                 "-inf",
                                                 "0.5",
                                                 "true",
                                                 "false",
                                                 "\"\"",
                                                 "\"x\"",
                                                 "\"gelu\"",
                                                 "\"null\"",
                                                 "\"../../etc\"",
                                                 "\"" + std::string(300, 'a') + "\"",
                                                 "[]",
                                                 "[1, 2, 3]",
                                                 "[\"a\", 1]",
                                                 "{}",
                                                 "{ a = 1 }",
                                                 "[[1], [2]]",
                                                 "\"N\"",
                                                 "\"N*M\"",
                                                 "\"2**62\"",
                                                 "\"(\"",
                                                 "1979-05-27",
                                                 "'''multi\nline'''",
                                                 "\"\\u0000\"",
                                                 "0x7fffffff",
                                                 "[\"N\", \"M\"]",
                                                 "\"float32\"",
                                                 "\"bf16\"",
                                                 "\"uniform\"",
                                                 "{ kind = \"uniform\", low = 1, high = 0 }"};
    return pick(values);
  }

 private:
  inline static const std::vector<std::string> kSections{"search",
                                                         "strategy",
                                                         "budget",
                                                         "store",
                                                         "eval",
                                                         "llm",
                                                         "cluster",
                                                         "dashboard",
                                                         "null",
                                                         "shapes",
                                                         "shapes.bench",
                                                         "roofline",
                                                         "tolerance",
                                                         "tolerance.float32",
                                                         "[inputs]",
                                                         "[outputs]",
                                                         "[params]",
                                                         "inputs.generator",
                                                         "x",
                                                         ""};

  template <class C>
  const typename C::value_type& pick(const C& c) {
    return c[below(c.size())];
  }

  size_t line_start(const std::string& s) {
    const size_t at = below(s.size() + 1);
    const size_t nl = s.rfind('\n', at == 0 ? 0 : at - 1);
    return at == 0 || nl == std::string::npos ? 0 : nl + 1;
  }

  std::string random_line(const std::vector<std::string>& keys) {
    std::string key = chance(80) && !keys.empty() ? pick(keys) : random_word();
    return key + " = " + random_value() + "\n";
  }

  std::string random_word() {
    std::string w;
    for (uint64_t n = 1 + below(12); n > 0; --n) w.push_back(static_cast<char>('a' + below(26)));
    return w;
  }

  std::string one_damage(std::string in, const std::vector<std::string>& others) {
    switch (below(9)) {
      case 0:  // flip a bit
        if (!in.empty()) in[below(in.size())] ^= static_cast<char>(1u << below(8));
        break;
      case 1:  // set a byte
        if (!in.empty()) in[below(in.size())] = static_cast<char>(below(256));
        break;
      case 2:  // truncate
        in.resize(below(in.size() + 1));
        break;
      case 3: {  // splice: this one's head, another's tail
        if (others.empty()) break;
        const auto& o = pick(others);
        in = in.substr(0, below(in.size() + 1)) + o.substr(below(o.size() + 1));
        break;
      }
      case 4: {  // a huge (or just wrong) 32-bit length, little-endian, anywhere
        static const uint32_t lengths[] = {0xffffffffu, 0x80000000u, 0x7fffffffu, 0x10000000u, 0x00ffffffu, 65536u};
        uint32_t v = lengths[below(std::size(lengths))];
        if (chance(30)) v = static_cast<uint32_t>(in.size() + below(16));
        const size_t at = below(in.size() + 1);
        std::string le(reinterpret_cast<const char*>(&v), 4);
        if (at + 4 <= in.size() && chance(70))
          in.replace(at, 4, le);
        else
          in.insert(at, le);
        break;
      }
      case 5: {  // delete a range
        const size_t at = below(in.size() + 1);
        in.erase(at, below(in.size() - at + 1));
        break;
      }
      case 6: {  // repeat a range
        const size_t at = below(in.size() + 1);
        const std::string part = in.substr(at, below(std::min<size_t>(in.size() - at, 64) + 1));
        in.insert(below(in.size() + 1), part);
        break;
      }
      case 7: {  // insert random bytes
        std::string junk;
        for (uint64_t n = 1 + below(16); n > 0; --n) junk.push_back(static_cast<char>(below(256)));
        in.insert(below(in.size() + 1), junk);
        break;
      }
      default: {  // a byte of a boundary value
        static const char special[] = {'\0', '\xff', '\x7f', '\x80', '\n', '"', '\\', '[', ']', '=', '@', '-', '+'};
        if (!in.empty()) in[below(in.size())] = special[below(sizeof special)];
        break;
      }
    }
    return in;
  }

  std::mt19937_64 rng_;
};

// A random valid value of any record with a field list (runtime/records/fields.hpp) and of its parts,
// for decode(encode(x)) == x.
template <class T>
void randomize(Mutator& m, T& x) {
  if constexpr (field_codec::HasFields<T>) {
    fields(x, [&](auto&... f) { (randomize(m, f), ...); });
  } else if constexpr (std::is_same_v<T, Operation>) {
    static const Operation ops[] = {Operation::seed, Operation::mutate, Operation::crossover, Operation::repair,
                                    Operation::migrate};
    x = ops[m.below(std::size(ops))];
  } else if constexpr (std::is_same_v<T, std::string>) {
    x.clear();
    for (uint64_t n = m.below(m.chance(10) ? 300 : 12); n > 0; --n) x.push_back(static_cast<char>(m.below(256)));
  } else if constexpr (std::is_same_v<T, double>) {
    x = std::uniform_real_distribution<double>(-1e12, 1e12)(m.rng());
  } else if constexpr (std::is_same_v<T, bool>) {
    x = m.chance(50);
  } else if constexpr (std::is_enum_v<T>) {
    x = static_cast<T>(m.below(6));
  } else if constexpr (std::is_integral_v<T>) {
    x = static_cast<T>(m.rng()());
  } else if constexpr (requires { x.begin()->first; }) {
    x.clear();
    for (uint64_t n = m.below(4); n > 0; --n) {
      typename T::key_type k;
      randomize(m, k);
      randomize(m, x[k]);
    }
  } else {
    x.resize(m.below(4));
    for (auto& v : x) randomize(m, v);
  }
}

}  // namespace kevolve::fuzz
