#include "runtime/llm/journal.hpp"

#include <simdjson.h>

#include <ctime>
#include <fstream>
#include <sstream>

namespace kevolve::llm {

namespace {

std::string str(simdjson::dom::element o, const char* key) {
  std::string_view v;
  return o[key].get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
}

int64_t num(simdjson::dom::element o, const char* key) {
  int64_t v = 0;
  return o[key].get(v) == simdjson::SUCCESS ? v : 0;
}

bool flag(simdjson::dom::element o, const char* key) {
  bool v = false;
  return o[key].get(v) == simdjson::SUCCESS && v;
}

}  // namespace

Expected<std::vector<JournalEntry>> read_journal(const std::string& path, const std::string& search) {
  using R = Expected<std::vector<JournalEntry>>;
  std::ifstream in(path);
  if (!in)
    return R::failure(Errc::not_found,
                      path + ": no LLM journal (no request was sent, or [llm] journal names another file)");
  std::vector<JournalEntry> out;
  simdjson::dom::parser parser;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    simdjson::dom::element o;
    if (parser.parse(line).get(o) != simdjson::SUCCESS || !o.is_object() ||
        (o["model"].error() && o["outcome"].error()))
      return R::failure(Errc::corrupt, path + ": line " + std::to_string(number) + " is not a journal entry");
    JournalEntry e;
    e.search = str(o, "search");
    if (!search.empty() && e.search != search) continue;
    if (!o["outcome"].error()) {  // the operator's word on an earlier reply
      const std::string ref = str(o, "ref");
      for (auto it = out.rbegin(); it != out.rend(); ++it)
        if (!ref.empty() && it->ref == ref) {
          it->outcome = str(o, "outcome");
          break;
        }
      continue;
    }
    e.ref = str(o, "ref");
    e.time = num(o, "time");
    e.model = str(o, "model");
    e.cls = str(o, "class");
    e.attempt = static_cast<int>(num(o, "attempt"));
    e.status = static_cast<int>(num(o, "status"));
    e.request_id = str(o, "request_id");
    e.finish_reason = str(o, "finish_reason");
    e.error = str(o, "error");
    if (auto body = str(o, "body"); !body.empty()) e.error += ": " + body;
    if (auto b64 = str(o, "body_base64"); !b64.empty()) e.error += " (the body, not UTF-8, as base64: " + b64 + ")";
    e.text = str(o, "text");
    e.has_reply = !o["input_tokens"].error();
    e.input_tokens = num(o, "input_tokens");
    e.output_tokens = num(o, "output_tokens");
    e.cache_creation_tokens = num(o, "cache_creation_tokens");
    e.cache_read_tokens = num(o, "cache_read_tokens");
    e.estimated_tokens = num(o, "estimated_tokens");
    e.truncated = flag(o, "truncated");
    e.tool_call = flag(o, "tool_call");
    out.push_back(std::move(e));
  }
  return out;
}

std::string format_journal_entry(const JournalEntry& e) {
  std::ostringstream o;
  char when[32] = "?";
  const std::time_t t = static_cast<std::time_t>(e.time);
  if (std::tm tm{}; gmtime_r(&t, &tm)) std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  o << "[" << when << " UTC] " << e.model << ", attempt " << e.attempt << ", HTTP " << e.status << ", " << e.cls;
  if (!e.request_id.empty()) o << ", request " << e.request_id;
  if (e.has_reply) {
    o << ", finish " << (e.finish_reason.empty() ? "-" : e.finish_reason) << ", " << e.input_tokens << " input";
    if (e.cache_read_tokens || e.cache_creation_tokens)
      o << " (" << e.cache_read_tokens << " cache read, " << e.cache_creation_tokens << " cache write)";
    o << " + " << e.output_tokens << " output tokens";
    if (e.truncated) o << ", cut at the token limit";
    if (e.tool_call) o << ", a tool call";
  }
  if (e.estimated_tokens) o << ", " << e.estimated_tokens << " tokens estimated (no usage reported)";
  o << "\n";
  if (!e.outcome.empty()) o << "  " << e.outcome << "\n";
  std::istringstream body(e.has_reply ? e.text : e.error);
  for (std::string l; std::getline(body, l);) o << "    " << l << "\n";
  return o.str();
}

}  // namespace kevolve::llm
