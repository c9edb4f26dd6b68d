// The LLM journal read back: every request the client sent and what came back ([llm] journal, one JSON
// line per request, written by LlmClient), for `kevolve inspect --journal`. Lines of other searches are
// skipped; a line that is not a journal entry is an error naming its line number. The operator's outcome
// lines ({"ref", "outcome"}) are joined to the reply they judge.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/expected.hpp"

namespace kevolve::llm {

struct JournalEntry {
  int64_t time = 0;                // seconds since the epoch, when the answer came
  std::string search, model, cls;  // cls: the error class of the answer ("ok" for a reply)
  int attempt = 0;                 // 1 = the first attempt of a request, 2.. = retries after a transient error
  int status = 0;                  // HTTP status (0 = no answer: timeout, connection failure)
  std::string request_id, finish_reason, error, text;
  std::string ref;  // the reply's journal ref (LlmClient), which the outcome lines name
  int64_t input_tokens = 0, output_tokens = 0, cache_creation_tokens = 0, cache_read_tokens = 0;
  int64_t estimated_tokens = 0;  // counted for a request sent without a usage report
  bool truncated = false, tool_call = false;
  bool has_reply = false;  // the provider answered with a completion (tokens and text above are its)
  std::string outcome;     // what the operator made of the reply ("used: ...", "not used: <why>"); "" = not told
};

// The entries of `search` ("" = every entry) in the journal at `path`, in the order they were written.
// A missing file is not_found; a malformed line is corrupt, with its number.
Expected<std::vector<JournalEntry>> read_journal(const std::string& path, const std::string& search);

// One entry as a person reads it: a header line (time, model, attempt, status, class, request id, finish
// reason, tokens), the operator's outcome, and the reply text or the error, indented.
std::string format_journal_entry(const JournalEntry& e);

}  // namespace kevolve::llm
