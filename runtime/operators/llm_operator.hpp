// LlmOperator: the universal operator. For every proposal it writes one prompt from the runtime context —
// problem and reference, target hardware and its constraints, the parent's source, the evaluator's report
// on it, a diagnosis with directives, the best k kernels so far with their code, the machine that evaluates
// (as its latest verdict described it), and knowledge-base notes retrieved for the
// situation — using the mustache templates in knowledge/prompts/, asks the LLM, and extracts the kernel
// from the reply (reply_code.hpp). A reply without usable code (no code, a tool call, cut at the token
// limit) is asked again once with the prompt adjusted for it (a larger token limit for a cut reply); the
// operator's circuit breaker stops the search after `[llm] breaker` proposals in a row got no usable reply,
// and a permanent provider error stops it at once (exhausted(), fatal()); when every proposal of that run was
// answered with kernels the search already has, the model has run out of new ideas: the search ends
// (exhausted()) without an error (fatal() stays empty). The prompt and every reply are
// returned so the search stores them with the node.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "runtime/records/backend_kind.hpp"
#include "knowledge/knowledge_base.hpp"
#include "runtime/llm/llm_client.hpp"
#include "runtime/operators/operator.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve {

struct PromptTemplates {
  std::string system, child;
  std::string system_cuda;    // the system prompt for CUDA kernels (prompts/system_cuda.mustache)
  std::string system_python;  // for KernelBench-format problems: a ModelNew file (prompts/system_python.mustache)
  static Expected<PromptTemplates> load(const std::string& knowledge_root);
};

// The kernel in a reply (read_reply in reply_code.hpp: thinking removed, the final block defining the entry
// point with the helper blocks it needs, test main() dropped). A kernel is defined by `kevolve_kernel(const
// kv_args*` (the host entry point), by a `// @kevolve kernel` launch line (a kernel-only CUDA candidate) or,
// for a KernelBench-format problem, by `class ModelNew`. A final diff, or a reply without a kernel, is an
// error that says why.
Expected<std::string> extract_code(const std::string& reply);

// The machine this process runs on, as a kernel engineer states it: CPU model, cores, vector ISA
// (cpu_isa), clock (cpufreq's maximum, else /proc/cpuinfo's cpu MHz), the threads the evaluation gives a
// candidate (0 = all cores), cache sizes.
std::string describe_local_cpu(int eval_threads);

// The vector ISA extensions a /proc/cpuinfo text's first "flags" line lists, of those a kernel can use
// (sse4_2, avx, avx2, fma, f16c, avx512f/dq/bw/vl, avx512_vnni, avx512_bf16, avx512_fp16, avx_vnni, amx_*),
// comma-separated in that order; "" when none.
std::string cpu_isa(const std::string& cpuinfo);

// The machine section of a child prompt: for a GPU backend the device that gave the latest verdict (model,
// SMs, L2, measured copy bandwidth), else `machine` (what the setup knew, e.g. before any verdict); for a
// CPU backend `machine` (describe_local_cpu) with the evaluator's measured copy bandwidth when known.
// A measured bandwidth below `achieved_gbps` (the fastest rate a measured run of the search moved the
// problem's bytes at, by `achieved_by`) was taken on a busy machine: it is not stated as a floor, and the
// section says so and states the achieved rate instead.
std::string describe_machine(const std::string& backend, const std::string& machine, const EvaluatingDevice& device,
                             double achieved_gbps = 0, const std::string& achieved_by = "");

// The target's constraints text as a prompt shows it beside a description of the evaluating machine
// (`machine_known`): without the family's `*_hint` keys (cores_hint, l1d_bytes_hint: the machine line states
// the real ones), and without sm_count / l2_bytes once the device stated its own. Unchanged otherwise.
std::string machine_constraints(const std::string& text, bool machine_known, const EvaluatingDevice& device);

// A knowledge note cut to at most `limit` characters at a section boundary (a heading, else a paragraph,
// else a line), never mid-word; says when something was left out.
std::string cut_note(const std::string& text, size_t limit);

// The characters of knowledge-base notes one prompt carries (the rest of a child prompt is 3-9 KB: the
// parent, its report, the best kernels), the notes asked of the knowledge base besides the problem's own,
// and the least room worth giving a cut note.
constexpr size_t kKnowledgeBudgetChars = 12000;
constexpr size_t kKnowledgeHits = 4;
constexpr size_t kMinNoteChars = 1500;

struct NoteText {
  std::string title, path, text;
};
struct FittedNotes {
  std::vector<NoteText> notes;  // in the given order, whole or cut
  std::string left_out;         // "title (path, N characters); ..." of those that did not fit ("" = none)
};
// Notes (most relevant first: the problem's own note leads) fitted to `budget` characters: each whole while
// it fits, the first that does not cut at a section boundary to the room left when that is at least
// kMinNoteChars, the rest left out and named.
FittedNotes fit_notes(const std::vector<NoteText>& notes, size_t budget);

// Everything an LLM operator is made from.
struct LlmOperatorSetup {
  std::shared_ptr<llm::LlmClient> client;
  PromptTemplates prompts;
  ProblemSpec spec;
  std::string reference_formula;      // the reference as the prompt states it
  std::string hardware;               // the target's name (knowledge/hardware/<name>)
  std::string hardware_constraints;   // its constraints text, quoted in the prompt
  std::shared_ptr<KnowledgeBase> kb;  // may be none: no retrieved notes
  int concurrency = 1;                // LLM requests at once
  std::string backend = "cpu";        // the ABI in the prompts, the benchmark shape, the candidates' language
  int eval_threads = 0;               // threads the evaluation gives each candidate (0 = all cores)
  std::string machine;                // the evaluating machine in words; "" = this machine (CPU backends)
};

class LlmOperator : public Operator {
 public:
  explicit LlmOperator(LlmOperatorSetup setup);
  std::string name() const override { return "llm"; }
  using Operator::make;
  Expected<Offspring> make(const Proposal& p, const SearchGraph& g, Rng& rng, const OperatorContext& ctx) override;
  bool can_repair() const override { return true; }
  bool needs_context() const override { return true; }
  bool blocks() const override { return true; }
  int concurrency() const override { return concurrency_; }
  std::shared_ptr<KnowledgeBase> knowledge_base() const override { return kb_; }
  // The problem, its tags and the parent's diagnosis, for the two most relevant documents of this target.
  KbQuery knowledge_query(const Proposal& p, const SearchGraph& g, const OperatorContext& ctx) const override;
  // A spent budget, a permanent provider error, the open circuit breaker, or a model that only repeats the
  // search's kernels ("" while it can go on).
  std::string exhausted() const override;
  // Why the operator failed rather than finished: a permanent provider error or the open breaker ("" if not).
  std::string fatal() const;
  llm::Usage usage() const { return client_->usage(); }
  llm::LiveState live() const { return client_->live(); }  // for the progress line
  // The output token limit a request to `model` starts at: the config's, or higher once a reply of this
  // operator was cut at the limit (the raised limit sticks, up to [llm] max_tokens_limit).
  int max_tokens_for(const std::string& model) const;
  int64_t unusable_replies() const { return unusable_; }

  // The model for one request: the config's, or one of the ensemble drawn by weight.
  std::string pick_model(Rng& rng) const;

  // For a KernelBench-format problem (backend python or python-cuda): what ModelNew's kernels are written in,
  // cuda | triton | cpp (both load_inline); "" = cuda on the GPU, cpp on the CPU.
  void set_kernel_language(std::string l) { kernel_language_ = std::move(l); }
  bool kernelbench() const { return backend_traits(backend_).kernelbench; }

  // The two prompts for a proposal, system and user (exposed for tests and docs).
  std::pair<std::string, std::string> prompts(const Proposal& p, const SearchGraph& g,
                                              const OperatorContext& ctx) const;

 private:
  std::shared_ptr<llm::LlmClient> client_;
  PromptTemplates t_;
  ProblemSpec spec_;
  std::string reference_, hardware_, constraints_;
  std::shared_ptr<KnowledgeBase> kb_;
  int concurrency_;
  std::string
      backend_;  // cpu | cuda | python | python-cuda: the ABI in the prompts, the benchmark shape, the candidates' language
  std::string kernel_language_;
  int eval_threads_ = 0;
  std::string machine_;
  std::atomic<int64_t> unusable_{0};         // replies that could not be used
  std::atomic<int> failed_in_a_row_{0};      // proposals in a row without a usable reply
  std::atomic<int> duplicates_in_a_row_{0};  // ... of which the latest ones got only kernels the search has
  mutable std::mutex mu_;
  std::string breaker_;       // why the breaker opened ("" = closed)
  std::string no_new_ideas_;  // why the search ends: the breaker's run was all kernels the search already has
  std::map<std::string, std::string> summaries_;  // source hash -> what the reply said it changed
  std::map<std::string, int> raised_max_tokens_;   // model -> the limit a cut reply raised it to
  std::string fence() const { return kernelbench() ? "python" : backend_ == "cuda" ? "cuda" : "cpp"; }
  std::string system_prompt() const;
  std::string entry_words() const;    // what a usable reply must define, for this backend
  std::string missing_words() const;  // what a reply without code lacks, for this backend
  // Counts a proposal without a usable reply (`duplicate`: both replies were kernels the search already has).
  Expected<Offspring> give_up(const std::string& why, bool duplicate = false);
};

}  // namespace kevolve
