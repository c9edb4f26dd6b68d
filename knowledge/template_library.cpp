#include "knowledge/template_library.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <filesystem>
#include <fstream>
#include <kainjow/mustache.hpp>
#include <sstream>
#include <toml++/toml.h>

#include "runtime/core/expr.hpp"

namespace fs = std::filesystem;

namespace kevolve {

Params KernelTemplate::defaults() const {
  Params p;
  for (auto& d : params) p[d.name] = d.values[d.default_index];
  return p;
}

namespace {

// Evaluates `a OP b`; nullopt when an expression cannot be evaluated (e.g. an unknown symbol).
std::optional<bool> holds(const std::string& c, const std::map<std::string, int64_t>& sym, std::string& error) {
  static const char* const ops[] = {"<=", ">=", "==", "!=", "<", ">"};
  for (const char* op : ops) {
    const auto at = c.find(op);
    if (at == std::string::npos) continue;
    std::string e1, e2;
    auto l = eval_expr(c.substr(0, at), sym, e1), r = eval_expr(c.substr(at + std::strlen(op)), sym, e2);
    if (!l || !r) {
      error = e1 + e2;
      return std::nullopt;
    }
    const std::string o = op;
    return o == "<="   ? *l <= *r
           : o == ">=" ? *l >= *r
           : o == "==" ? *l == *r
           : o == "!=" ? *l != *r
           : o == "<"  ? *l < *r
                       : *l > *r;
  }
  error = "no comparison operator";
  return std::nullopt;
}

}  // namespace

std::string KernelTemplate::violated(const Params& p) const {
  // numeric parameters by name; a string parameter's choice as NAME_VALUE = 1 (its other values 0),
  // so a constraint can depend on it ("threads * batch <= 4096 + 12288 * copy_owner")
  std::map<std::string, int64_t> sym = hardware;
  for (auto& d : params) {
    if (d.numeric) {
      sym[d.name] = std::stoll(p.at(d.name));
    } else {
      for (auto& v : d.values) sym[d.name + "_" + v] = p.at(d.name) == v ? 1 : 0;
    }
  }
  for (auto& c : hardware_constraints) {
    std::string err;
    if (auto ok = holds(c, sym, err); ok && !*ok) return c + " (hardware)";
  }
  for (auto& c : constraints) {
    std::string err;
    const auto ok = holds(c, sym, err);
    if (!ok) return c + " (cannot evaluate: " + err + ")";
    if (!*ok) return c;
  }
  return {};
}

Expected<std::string> KernelTemplate::render(const Params& p) const {
  kainjow::mustache::data ctx;
  for (auto& [k, v] : context) ctx.set(k, v);
  for (auto& d : params) {
    auto it = p.find(d.name);
    if (it == p.end()) return Expected<std::string>::failure("parameter '" + d.name + "' is not set");
    ctx.set(d.name, it->second);
    for (auto& v : d.values) {
      const std::string flag = d.name + (d.numeric ? "_is_" : "_") + v;
      ctx.set(flag,
              v == it->second ? kainjow::mustache::data::type::bool_true : kainjow::mustache::data::type::bool_false);
    }
  }
  kainjow::mustache::mustache tmpl(source);
  if (!tmpl.is_valid()) return Expected<std::string>::failure(dir + ": " + tmpl.error_message());
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  return tmpl.render(ctx);
}

Expected<KernelTemplate> load_template(const std::string& dir) {
  using R = Expected<KernelTemplate>;
  const std::string file = dir + "/template.toml";
  toml::table t;
  try {
    t = toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    return R::failure(file + ": TOML syntax error: " + std::string(e.description()));
  } catch (const std::exception& e) { return R::failure(file + ": " + e.what()); }
  KernelTemplate k;
  k.dir = dir;
  auto str = [&](const char* key, std::string& out) {
    auto v = t[key].value<std::string>();
    if (!v) return false;
    out = *v;
    return true;
  };
  std::string src;
  if (!str("problem", k.problem)) return R::failure(file + ": key 'problem': missing (expected a string)");
  if (!str("backend", k.backend)) return R::failure(file + ": key 'backend': missing (expected a string)");
  if (!str("source", src)) return R::failure(file + ": key 'source': missing (expected the mustache file name)");
  str("description", k.description);
  std::ifstream in(dir + "/" + src);
  if (!in) return R::failure(file + ": key 'source': cannot read " + dir + "/" + src);
  std::stringstream ss;
  ss << in.rdbuf();
  k.source = ss.str();
  // `prelude`: a file (relative to the template's folder) whose text every rendering sees as {{prelude}}
  // (the HIP templates paste kevolve_gpu_portable.h there, so a rendered source is self-contained).
  if (std::string pre; str("prelude", pre)) {
    std::ifstream pin(dir + "/" + pre);
    if (!pin) return R::failure(file + ": key 'prelude': cannot read " + dir + "/" + pre);
    std::stringstream ps;
    ps << pin.rdbuf();
    k.context["prelude"] = ps.str();
  }
  if (auto hs = t["hardware_constraints"].as_array())
    for (auto&& c : *hs) {
      if (!c.is_string()) return R::failure(file + ": key 'hardware_constraints': expected an array of strings");
      k.hardware_constraints.push_back(*c.value<std::string>());
    }
  if (auto cs = t["constraints"].as_array())
    for (auto&& c : *cs) {
      if (!c.is_string()) return R::failure(file + ": key 'constraints': expected an array of strings");
      k.constraints.push_back(*c.value<std::string>());
    }
  auto ps = t["params"].as_array();
  if (!ps || ps->empty()) return R::failure(file + ": key 'params': expected at least one [[params]] table");
  for (size_t i = 0; i < ps->size(); ++i) {
    const std::string w = file + ": key 'params[" + std::to_string(i) + "]";
    auto pt = ps->get(i)->as_table();
    if (!pt) return R::failure(w + "': expected a table");
    ParamDef d;
    auto name = (*pt)["name"].value<std::string>();
    if (!name) return R::failure(w + ".name': missing (expected a string)");
    d.name = *name;
    auto vals = (*pt)["values"].as_array();
    if (!vals || vals->empty()) return R::failure(w + ".values': expected a non-empty array");
    d.numeric = vals->get(0)->is_integer();
    for (auto&& v : *vals) {
      if (d.numeric != v.is_integer() || (!d.numeric && !v.is_string()))
        return R::failure(w + ".values': expected all integers or all strings");
      d.values.push_back(d.numeric ? std::to_string(*v.value<int64_t>()) : *v.value<std::string>());
    }
    auto def = (*pt)["default"];
    const std::string dv = def.is_integer() ? std::to_string(*def.value<int64_t>()) : def.value_or(std::string());
    auto it = std::find(d.values.begin(), d.values.end(), dv);
    if (it == d.values.end()) return R::failure(w + ".default': '" + dv + "' is not one of its values");
    d.default_index = static_cast<size_t>(it - d.values.begin());
    k.params.push_back(std::move(d));
  }
  if (auto v = k.violated(k.defaults()); !v.empty())
    return R::failure(file + ": the default parameters violate the constraint '" + v + "'");
  if (auto r = k.render(k.defaults()); !r) return R::failure(r.error());
  return k;
}

std::vector<std::string> default_knowledge_roots() {
  std::vector<std::string> roots;
  if (const char* env = std::getenv("KEVOLVE_KNOWLEDGE")) roots.emplace_back(env);
  roots.emplace_back("knowledge");
#ifdef KEVOLVE_SOURCE_DIR
  roots.emplace_back(std::string(KEVOLVE_SOURCE_DIR) + "/knowledge");
#endif
  return roots;
}

Expected<KernelTemplate> find_template(const std::string& backend, const std::string& problem,
                                       const std::vector<std::string>& roots) {
  std::string looked;
  for (auto& r : roots) {
    const fs::path dir = fs::path(r) / "templates" / backend / problem;
    looked += "\n  " + dir.string();
    if (fs::exists(dir / "template.toml")) return load_template(dir.string());
  }
  return Expected<KernelTemplate>::failure("no " + backend + " template for problem '" + problem +
                                           "' (looked in:" + looked + ")");
}

}  // namespace kevolve
