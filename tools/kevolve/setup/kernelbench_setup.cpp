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
  if (kernels) {
    auto m = python::match_family(problem.file);
    if (!m) return R::failure(m.error());
    s.match = *m;
    s.note = "no kernel template family: " + m->how + "; framework rewrites only";
    if (!m->family.empty()) {
      auto t = find_template(device, m->family, roots);
      auto found = find_problem(m->family, default_problem_roots());
      auto core = found ? load_problem(*found) : Expected<ProblemSpec>::failure(found.error());
      auto glue = python::kernel_glue_source();
      if (!t || !core || !glue) {
        s.note = "kernel family " + m->family + ", but " +
                 (!t      ? t.error()
                  : !core ? core.error()
                          : glue.error()) +
                 "; framework rewrites only";
      } else {
        auto hw = load_hardware(fs::path(t->dir).parent_path().parent_path().parent_path().string(), hardware);
        if (!hw) return R::failure("hardware '" + hardware + "': " + hw.error());
        t->hardware = hw->numbers;
        KernelWrap w{*core, *m, device, *source, *glue, kernel_abi_header()};
        auto naive = t->render(t->defaults());
        auto wrapped =
            naive ? wrap_kernel_as_model_new(w, *naive, "check") : Expected<std::string>::failure(naive.error());
        if (!wrapped) {
          s.note = "kernel family " + m->family + ", but " + wrapped.error() + "; framework rewrites only";
        } else {
          s.note = "kernel family " + m->family + " (template " + t->dir + "): " + m->how;
          kernel.emplace(std::move(*t), std::move(w));
        }
      }
    }
  }
  s.op = std::make_shared<KernelBenchOperator>(std::move(*rewrite), std::move(kernel));
  if (directed) s.op->follow_directives();
  return s;
}

}  // namespace kevolve::cli
