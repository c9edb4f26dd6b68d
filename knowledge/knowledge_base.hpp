// The knowledge base: markdown documents under knowledge/{hardware,patterns,debugging}/ with a
// front-matter block (title, tags, hardware, problems), indexed in memory with Xapian (BM25) when
// loaded. Retrieval can be filtered by hardware target and by problem; documents marked `any` pass
// every filter.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/expected.hpp"
#include "runtime/records/kb_query.hpp"

namespace kevolve {

struct KbDocument {
  std::string path;  // relative to the knowledge root, e.g. patterns/online-softmax.md
  std::string title;
  std::vector<std::string> tags, hardware, problems;
  std::string body;  // text after the front matter
};

class KnowledgeBase {
 public:
  // Reads every *.md with front matter under root/{hardware,patterns,debugging} and indexes it.
  // Errors name the file and what is wrong with its front matter.
  static Expected<std::shared_ptr<KnowledgeBase>> load(const std::string& root);
  ~KnowledgeBase();

  std::vector<KbHit> search(const KbQuery& q) const;
  const std::vector<KbDocument>& documents() const { return docs_; }

 private:
  KnowledgeBase();
  struct Index;
  std::unique_ptr<Index> index_;
  std::vector<KbDocument> docs_;
};

// Parses a document's front matter into `d`; invalid_argument, saying what is wrong, when it is missing or
// malformed.
Status parse_front_matter(const std::string& text, KbDocument& d);

}  // namespace kevolve
