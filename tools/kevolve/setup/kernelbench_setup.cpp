#include "tools/kevolve/setup/kernelbench_setup.hpp"

#include <filesystem>

#include "backends/backend.hpp"
#include "backends/python/python_backend.hpp"
#include "knowledge/hardware_profile.hpp"
#include "knowledge/template_library.hpp"
#include "runtime/config/problem_loader.hpp"

namespace kevolve::cli {

namespace fs = std::filesystem;

Expected<KernelBenchSetup> kernelbench_operator(const ProblemSpec& problem, const std::string& device,
                                                const std::string& hardware, bool kernels, bool directed) {
  using R = Expected<KernelBenchSetup>;
  const auto roots = default_knowledge_roots();
  auto rewrite = find_template("python", "rewrite", roots);
  if (!rewrite) return R::failure(rewrite.error());
  auto source = python::renamed_problem_source(problem.file);
  if (!source) return R::failure(source.error());
  rewrite->context["problem_source"] = *source;  // the rewrites wrap the module itself, renamed
  KernelBenchSetup s;
  std::optional<std::pair<KernelTemplate, KernelWrap>> kernel;
  s.note = "framework rewrites only";
  std::optional<GeneratedFamily> generated;
  if (kernels) {
    auto fa = python::analyse_families(problem.file);
    if (!fa) return R::failure(fa.error());
    s.families = *fa;
    const FamilySpace& space = fa->space(device);
    if (fa->family.empty()) {
      s.family_note = "no family: " + fa->reason;
    } else if (space.params.empty()) {
      s.family_note = "family " + fa->family + " (" + fa->reason + "), but no search space for " + device;
    } else {
      s.family_note = "family " + fa->family + " (" + fa->reason + "): generated " + device + " kernels";
      const std::string file = problem.file;
      generated = GeneratedFamily{fa->family, device, space, [file, device, space](const Params& p) {
                                    auto k = python::generate_family_kernel(file, device, p, space);
                                    return k ? Expected<std::string>(std::move(k->source))
                                             : Expected<std::string>::failure(k.error());
                                  }};
    }
    auto m = python::match_family(problem.file, device);
    if (!m) return R::failure(m.error());
    s.match = *m;
    s.note = "no kernel template family: " + m->how;
    if (!m->family.empty()) {
      auto t = find_template(device, m->family, roots);
      auto found = find_problem(m->family, default_problem_roots());
      auto core = found ? load_problem(*found) : Expected<ProblemSpec>::failure(found.error());
      auto glue = python::kernel_glue_source();
      if (!t || !core || !glue) {
        s.note = "kernel template family " + m->family + ", but " +
                 (!t      ? t.error()
                  : !core ? core.error()
                          : glue.error());
      } else {
        auto hw = load_hardware(fs::path(t->dir).parent_path().parent_path().parent_path().string(), hardware);
        if (!hw) return R::failure("hardware '" + hardware + "': " + hw.error());
        t->hardware = hw->numbers;
        KernelWrap w{*core, *m, device, *source, *glue, kernel_abi_header()};
        auto naive = t->render(t->defaults());
        auto wrapped =
            naive ? wrap_kernel_as_model_new(w, *naive, "check") : Expected<std::string>::failure(naive.error());
        if (!wrapped) {
          s.note = "kernel template family " + m->family + ", but " + wrapped.error();
        } else {
          s.note = "kernel template family " + m->family + " (template " + t->dir + "): " + m->how;
          kernel.emplace(std::move(*t), std::move(w));
        }
      }
    }
  }
  if (kernels)
    s.note = s.family_note + "; " + s.note +
             (generated || kernel ? std::string("; and framework rewrites") : std::string("; framework rewrites only"));
  s.op = std::make_shared<KernelBenchOperator>(std::move(*rewrite), std::move(kernel), std::move(generated));
  if (directed) s.op->follow_directives();
  return s;
}

}  // namespace kevolve::cli
