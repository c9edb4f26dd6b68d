#include "runtime/config/problem_loader.hpp"

#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "runtime/core/expr.hpp"

namespace fs = std::filesystem;

namespace kevolve {

const std::vector<GeneratorKind>& generator_kinds() {
  static const std::vector<GeneratorKind> kinds = {
      {"normal", {"mean", "std"}, {}},
      {"uniform", {"low", "high"}, {}},
      {"randint", {"low", "high"}, {}},
      {"sorted_unique", {"low", "high"}, {}},
      {"ids_from", {"hit_rate", "low", "high"}, {"keys"}},
      {"offsets", {"min_len", "max_len"}, {}},
      {"segment_sorted", {"low", "high"}, {}},  // plus exactly one of names: lengths | offsets
  };
  return kinds;
}

namespace {

struct SpecError {
  std::string text;
};

class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& expected) const {
    throw SpecError{file_ + ": key '" + key + "': " + expected};
  }

  void only_keys(const toml::table& t, const std::string& where, std::set<std::string> allowed) const {
    for (auto&& [k, v] : t) {
      (void)v;
      if (!allowed.count(std::string(k.str()))) {
        std::string list;
        for (auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(where.empty() ? std::string(k.str()) : where + "." + std::string(k.str()),
             "unknown key (expected one of: " + list + ")");
      }
    }
  }

  std::string str(const toml::table& t, const std::string& key, const std::string& where, bool required) const {
    auto node = t.get(key);
    if (!node) {
      if (required) fail(where + key, "missing (expected a string)");
      return {};
    }
    if (!node->is_string()) fail(where + key, "expected a string");
    return *node->value<std::string>();
  }

  double number(const toml::node* node, const std::string& key) const {
    if (!node || !(node->is_floating_point() || node->is_integer())) fail(key, "expected a number");
    const double v = node->is_integer() ? static_cast<double>(*node->value<int64_t>()) : *node->value<double>();
    if (!std::isfinite(v))
      fail(key, "expected a finite number (got " + std::string(std::isnan(v) ? "nan" : "inf") + ")");
    return v;
  }

  DType dtype(const toml::table& t, const std::string& where) const {
    const std::string s = str(t, "dtype", where, true);
    DType d;
    if (!parse_dtype(s, d))
      fail(where + "dtype",
           "'" + s + "' is not a dtype (expected float32, float64, int32, int64, bfloat16 or float16)");
    return d;
  }

  std::vector<std::string> shape(const toml::table& t, const std::string& where) const {
    auto arr = t.get_as<toml::array>("shape");
    if (!arr) fail(where + "shape", "missing (expected an array of strings such as [\"T\", \"H\"])");
    std::vector<std::string> out;
    for (auto&& e : *arr) {
      if (!e.is_string()) fail(where + "shape", "expected an array of strings (symbols or expressions, or \"*\")");
      out.push_back(*e.value<std::string>());
    }
    if (out.empty() || out.size() > 8) fail(where + "shape", "expected 1 to 8 dimensions");
    return out;
  }

  // Every tensor at every shape binding: an element count that fits (no overflow) and at most
  // kMaxElements, so that a typo (2^63 - 1, an extra zero) is named here, not by the allocator later.
  void check_sizes(const ProblemSpec& p) const {
    constexpr double kMaxElements = double(int64_t{1} << 36);  // 64 Gi elements: 256 GB of float32
    std::vector<std::pair<std::string, const ShapeBinding*>> bindings{{"shapes.bench", &p.bench}};
    if (!p.bench_cuda.empty()) bindings.emplace_back("shapes.bench_cuda", &p.bench_cuda);
    for (size_t i = 0; i < p.verify.size(); ++i)
      bindings.emplace_back("shapes.verify[" + std::to_string(i) + "]", &p.verify[i]);
    for (const auto& [where, b] : bindings)
      for (const auto* list : {&p.inputs, &p.outputs})
        for (const auto& t : *list) {
          double elements = 1;
          for (const auto& dim : t.shape) {
            if (dim == "*") continue;
            std::string err;
            const auto v = eval_expr(dim, *b, err);
            if (v) elements *= *v;
          }
          if (elements > kMaxElements) {
            std::ostringstream os;
            os << "tensor '" << t.name << "' has " << elements
               << " elements at this size (at most 2^36 = " << (int64_t{1} << 36) << " are allowed; "
               << elements * dtype_size(t.dtype) / 1e9 << " GB)";
            fail(where, os.str());
          }
        }
  }

  ShapeBinding binding(const toml::table& t, const std::string& where) const {
    ShapeBinding b;
    for (auto&& [k, v] : t) {
      if (!v.is_integer() || *v.value<int64_t>() <= 0)
        fail(where + "." + std::string(k.str()), "expected a positive integer size");
      b[std::string(k.str())] = *v.value<int64_t>();
    }
    if (b.empty()) fail(where, "expected at least one shape symbol");
    return b;
  }

  // The file's TOML tree; a syntax error is a SpecError naming the line and column.
  toml::table parse_root() const {
    try {
      return toml::parse_file(file_);
    } catch (const toml::parse_error& e) {
      std::ostringstream os;
      os << file_ << ":" << e.source().begin.line << ":" << e.source().begin.column
         << ": TOML syntax error: " << e.description();
      throw SpecError{os.str()};
    }
  }

  // name, description, reference, naive, entry and tags.
  void read_top(const toml::table& root, ProblemSpec& p) const {
    only_keys(root, "",
              {"name", "description", "tags", "reference", "naive", "entry", "params", "inputs", "outputs", "tolerance",
               "shapes", "roofline"});
    p.file = file_;
    p.dir = fs::path(file_).parent_path().string();
    p.name = str(root, "name", "", true);
    p.description = str(root, "description", "", false);
    p.reference = str(root, "reference", "", true);
    p.naive = str(root, "naive", "", false);
    if (auto e = str(root, "entry", "", false); !e.empty()) p.entry = e;
    if (auto tags = root.get_as<toml::array>("tags"))
      for (auto&& t : *tags) {
        if (!t.is_string()) fail("tags", "expected an array of strings");
        p.tags.push_back(*t.value<std::string>());
      }
    std::error_code ec;  // a name the file system refuses (too long, ...) is a file that does not exist
    if (!p.naive.empty() && !fs::exists(fs::path(p.dir) / p.naive, ec))
      fail("naive", "file '" + p.naive + "' does not exist next to the spec");
  }

  // [[params]]: name and value.
  void read_params(const toml::table& root, ProblemSpec& p) const {
    if (auto params = root.get("params")) {
      auto arr = params->as_array();
      if (!arr) fail("params", "expected an array of tables ([[params]] with name and value)");
      for (size_t i = 0; i < arr->size(); ++i) {
        const std::string w = "params[" + std::to_string(i) + "].";
        auto t = arr->get(i)->as_table();
        if (!t) fail("params", "expected an array of tables ([[params]] with name and value)");
        only_keys(*t, "params[" + std::to_string(i) + "]", {"name", "value"});
        p.params.push_back({str(*t, "name", w, true), number(t->get("value"), w + "value")});
      }
    }
  }

  // [shapes]: bench, bench_cuda and the verification shapes, each giving exactly the symbols of bench.
  void read_shapes(const toml::table& root, ProblemSpec& p) const {
    auto shapes = root.get_as<toml::table>("shapes");
    if (!shapes) fail("shapes", "missing (expected [shapes.bench] and at least two [[shapes.verify]])");
    only_keys(*shapes, "shapes", {"bench", "bench_cuda", "verify"});
    auto bench = shapes->get_as<toml::table>("bench");
    if (!bench) fail("shapes.bench", "missing (expected a table of symbol sizes, e.g. T = 4096)");
    p.bench = binding(*bench, "shapes.bench");
    auto verify = shapes->get_as<toml::array>("verify");
    if (!verify || verify->size() < 2)
      fail("shapes.verify", "expected at least two verification shapes ([[shapes.verify]] tables)");
    for (size_t i = 0; i < verify->size(); ++i) {
      const std::string w = "shapes.verify[" + std::to_string(i) + "]";
      auto t = verify->get(i)->as_table();
      if (!t) fail(w, "expected a table of symbol sizes");
      ShapeBinding b = binding(*t, w);
      for (auto& [k, v] : p.bench) {
        (void)v;
        if (!b.count(k)) fail(w + "." + k, "missing (every shape must give the symbols of shapes.bench)");
      }
      for (auto& [k, v] : b) {
        (void)v;
        if (!p.bench.count(k)) fail(w + "." + k, "not a symbol of shapes.bench");
      }
      p.verify.push_back(std::move(b));
    }

    if (auto bc = shapes->get_as<toml::table>("bench_cuda")) {
      p.bench_cuda = binding(*bc, "shapes.bench_cuda");
      for (auto& [k, v] : p.bench) {
        (void)v;
        if (!p.bench_cuda.count(k))
          fail("shapes.bench_cuda." + k, "missing (every shape must give the symbols of shapes.bench)");
      }
      for (auto& [k, v] : p.bench_cuda) {
        (void)v;
        if (!p.bench.count(k)) fail("shapes.bench_cuda." + k, "not a symbol of shapes.bench");
      }
    }
  }

  // [[inputs]] or [[outputs]] (key), each dimension checked against the bench symbols.
  std::vector<TensorSpec> tensors(const toml::table& root, const char* key, bool inputs,
                                  const ShapeBinding& bench) const {
    auto arr = root.get_as<toml::array>(key);
    if (!arr || arr->empty()) fail(key, std::string("expected at least one [[") + key + "]] table");
    std::vector<TensorSpec> out;
    for (size_t i = 0; i < arr->size(); ++i) {
      const std::string w = std::string(key) + "[" + std::to_string(i) + "].";
      auto t = arr->get(i)->as_table();
      if (!t) fail(key, "expected an array of tables");
      if (inputs)
        only_keys(*t, w.substr(0, w.size() - 1), {"name", "dtype", "shape", "generator"});
      else
        only_keys(*t, w.substr(0, w.size() - 1), {"name", "dtype", "shape"});
      TensorSpec ts;
      ts.name = str(*t, "name", w, true);
      ts.dtype = dtype(*t, w);
      ts.shape = shape(*t, w);
      for (auto& dim : ts.shape) {
        if (dim == "*") continue;
        std::string err;
        if (!eval_expr(dim, bench, err)) fail(w + "shape", "dimension '" + dim + "': " + err);
      }
      if (inputs) ts.generator = generator(*t, w, out);
      out.push_back(std::move(ts));
    }
    return out;
  }

  // [tolerance.<dtype>] tables; every floating output needs one, integer outputs match exactly.
  void read_tolerances(const toml::table& root, ProblemSpec& p) const {
    if (auto tol = root.get("tolerance")) {
      auto t = tol->as_table();
      if (!t) fail("tolerance", "expected a table of per-dtype tables ([tolerance.float32] atol/rtol)");
      for (auto&& [k, v] : *t) {
        const std::string w = "tolerance." + std::string(k.str());
        DType d;
        if (!parse_dtype(std::string(k.str()), d)) fail(w, "not a dtype name");
        auto tt = v.as_table();
        if (!tt) fail(w, "expected a table with atol and rtol");
        only_keys(*tt, w, {"atol", "rtol"});
        Tolerance tl{number(tt->get("atol"), w + ".atol"), number(tt->get("rtol"), w + ".rtol")};
        if (tl.atol < 0 || tl.rtol < 0) fail(w, "tolerances must be >= 0");
        if (dtype_is_integer(d) && (tl.atol != 0 || tl.rtol != 0))
          fail(w, "integer outputs must match exactly (expected atol = 0 and rtol = 0)");
        p.tolerances[d] = tl;
      }
    }
    for (auto& o : p.outputs) {
      if (dtype_is_integer(o.dtype)) {
        p.tolerances.try_emplace(o.dtype, Tolerance{0, 0});
        continue;
      }
      if (!p.tolerances.count(o.dtype))
        fail(std::string("tolerance.") + dtype_name(o.dtype),
             "missing (output '" + o.name + "' is " + dtype_name(o.dtype) + "; expected atol and rtol)");
    }
  }

  // [roofline]: bytes and flops expressions over the bench symbols.
  void read_roofline(const toml::table& root, ProblemSpec& p) const {
    auto roof = root.get_as<toml::table>("roofline");
    if (!roof) fail("roofline", "missing (expected bytes and flops expressions over the shape symbols)");
    only_keys(*roof, "roofline", {"bytes", "flops"});
    p.roofline_bytes = str(*roof, "bytes", "roofline.", true);
    p.roofline_flops = str(*roof, "flops", "roofline.", true);
    for (auto [key, e] : {std::pair{"roofline.bytes", &p.roofline_bytes}, {"roofline.flops", &p.roofline_flops}}) {
      std::string err;
      if (!eval_expr(*e, p.bench, err)) fail(key, "'" + *e + "': " + err);
    }
  }

  ProblemSpec load() {
    const toml::table root = parse_root();
    ProblemSpec p;
    read_top(root, p);
    read_params(root, p);
    read_shapes(root, p);  // first: tensor shapes and roofline expressions are checked against the bench symbols
    p.inputs = tensors(root, "inputs", true, p.bench);
    p.outputs = tensors(root, "outputs", false, p.bench);
    read_tolerances(root, p);
    read_roofline(root, p);
    check_sizes(p);
    return p;
  }

  GeneratorSpec generator(const toml::table& t, const std::string& w, const std::vector<TensorSpec>& earlier) const {
    auto g = t.get_as<toml::table>("generator");
    if (!g) fail(w + "generator", "missing (expected e.g. { kind = \"normal\", mean = 0.0, std = 1.0 })");
    GeneratorSpec gs;
    gs.kind = str(*g, "kind", w + "generator.", true);
    const GeneratorKind* kind = nullptr;
    std::string known;
    for (auto& k : generator_kinds()) {
      known += (known.empty() ? "" : ", ") + std::string(k.kind);
      if (gs.kind == k.kind) kind = &k;
    }
    if (!kind) fail(w + "generator.kind", "'" + gs.kind + "' is not a generator (expected one of: " + known + ")");
    std::set<std::string> allowed{"kind"};
    for (auto n : kind->numbers) {
      allowed.insert(n);
      gs.numbers[n] = number(g->get(n), w + "generator." + n);
    }
    std::vector<std::string> refs(kind->names.begin(), kind->names.end());
    if (gs.kind == "segment_sorted") {
      const bool l = g->contains("lengths"), o = g->contains("offsets");
      if (l == o)
        fail(w + "generator", "segment_sorted needs exactly one of lengths = \"INPUT\" or offsets = \"INPUT\"");
      refs.push_back(l ? "lengths" : "offsets");
    }
    for (auto& r : refs) {
      allowed.insert(r);
      gs.names[r] = str(*g, r, w + "generator.", true);
      bool found = false;
      for (auto& e : earlier) found |= e.name == gs.names[r];
      if (!found) fail(w + "generator." + r, "'" + gs.names[r] + "' must name an input listed before this one");
    }
    only_keys(*g, w + "generator", allowed);
    return gs;
  }

 private:
  std::string file_;
};

}  // namespace

Expected<ProblemSpec> load_problem(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Expected<ProblemSpec>::failure(path + ": no such file");
  try {
    return Loader(path).load();
  } catch (const SpecError& e) { return Expected<ProblemSpec>::failure(e.text); }
}

std::vector<std::string> default_problem_roots() {
  std::vector<std::string> roots;
  if (const char* env = std::getenv("KEVOLVE_PROBLEMS")) roots.emplace_back(env);
  roots.emplace_back("problems");
#ifdef KEVOLVE_SOURCE_DIR
  roots.emplace_back(std::string(KEVOLVE_SOURCE_DIR) + "/problems");
#endif
  return roots;
}

Expected<std::string> find_problem(const std::string& name, const std::vector<std::string>& roots) {
  std::string looked;
  for (const auto& root : roots) {
    looked += "\n  " + root;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (auto& suite : fs::directory_iterator(root, ec)) {
      const fs::path spec = suite.path() / name / "problem.toml";
      if (fs::exists(spec, ec)) return spec.string();
    }
  }
  return Expected<std::string>::failure("no problem named '" + name + "' (looked for <suite>/" + name +
                                        "/problem.toml under:" + looked + ")");
}

}  // namespace kevolve
