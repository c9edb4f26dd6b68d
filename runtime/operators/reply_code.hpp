// Reading an LLM reply for the candidate it proposes. Reasoning is removed first (<think>, <thinking> and
// <reasoning> sections; an unclosed one hides everything after it), then the final answer's code is chosen:
// the last block that defines the entry point (`kevolve_kernel(const kv_args*` / `kv_cuda_args`, a
// `// @kevolve kernel` launch line, or `class ModelNew`), preceded by the earlier helper blocks that define
// names it uses; a block with a test `main()` is dropped (or its main() cut out when it also defines the entry
// point); a diff after the last full source is the final answer and beats that earlier draft.
#pragma once
#include <string>

namespace kevolve {

struct ReplyCode {
  std::string code;         // the chosen source ("" when the reply defines no entry point)
  std::string diff;         // the last diff block (or a bare diff reply)
  bool diff_final = false;  // the diff comes after the last full source: it is the answer
  bool fenced = false;      // the reply had fenced blocks
  int helpers = 0;          // helper blocks joined to the entry block
};

// The reply without its reasoning sections.
std::string strip_thinking(const std::string& reply);

// The code of a reply (already stripped of thinking or not: this strips again).
ReplyCode read_reply(const std::string& reply);

// Whether a source defines a candidate's entry point (not merely calls it).
bool defines_entry(const std::string& source);

}  // namespace kevolve
