#include "knowledge/knowledge_base.hpp"

#include <xapian.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kevolve {

struct KnowledgeBase::Index {
  Xapian::WritableDatabase db{std::string(), Xapian::DB_BACKEND_INMEMORY};
  Xapian::Stem stem{"english"};
};

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> list_value(const std::string& v) {
  std::vector<std::string> out;
  std::string s = trim(v);
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    item = trim(item);
    if (item.size() >= 2 && (item.front() == '"' || item.front() == '\'')) item = item.substr(1, item.size() - 2);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

Status parse_front_matter(const std::string& text, KbDocument& d) {
  if (text.rfind("---\n", 0) != 0) {
    return Status::failure(Errc::invalid_argument, "expected a front-matter block starting with '---' on the first line");
  }
  const auto end = text.find("\n---", 3);
  if (end == std::string::npos) {
    return Status::failure(Errc::invalid_argument, "front matter is not closed by a '---' line");
  }
  std::stringstream fm(text.substr(4, end - 4));
  for (std::string line; std::getline(fm, line);) {
    if (trim(line).empty()) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      return Status::failure(Errc::invalid_argument, "front-matter line without 'key:': " + line);
    }
    const std::string key = trim(line.substr(0, colon));
    std::string value = line.substr(colon + 1);
    if (const auto hash = value.find(" #"); hash != std::string::npos) value = value.substr(0, hash);
    if (key == "title")
      d.title = trim(value);
    else if (key == "tags")
      d.tags = list_value(value);
    else if (key == "hardware")
      d.hardware = list_value(value);
    else if (key == "problems")
      d.problems = list_value(value);
  }
  if (d.title.empty()) {
    return Status::failure(Errc::invalid_argument, "front matter has no title");
  }
  if (d.hardware.empty()) d.hardware = {"any"};
  if (d.problems.empty()) d.problems = {"any"};
  const auto body = text.find('\n', end + 1);
  d.body = body == std::string::npos ? "" : text.substr(body + 1);
  return Status::success();
}

KnowledgeBase::KnowledgeBase() : index_(std::make_unique<Index>()) {}
KnowledgeBase::~KnowledgeBase() = default;

Expected<std::shared_ptr<KnowledgeBase>> KnowledgeBase::load(const std::string& root) {
  using R = Expected<std::shared_ptr<KnowledgeBase>>;
  std::shared_ptr<KnowledgeBase> kb(new KnowledgeBase());
  std::vector<fs::path> files;
  for (const char* part : {"hardware", "patterns", "debugging"}) {
    std::error_code ec;
    const fs::path dir = fs::path(root) / part;
    if (!fs::is_directory(dir, ec)) continue;
    for (auto& e : fs::recursive_directory_iterator(dir, ec))
      if (e.path().extension() == ".md") files.push_back(e.path());
  }
  if (files.empty()) return R::failure(root + ": no knowledge documents under hardware/, patterns/ or debugging/");
  std::sort(files.begin(), files.end());
  Xapian::TermGenerator tg;
  tg.set_stemmer(kb->index_->stem);
  for (auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    KbDocument d;
    d.path = fs::relative(f, root).string();
    if (auto parsed = parse_front_matter(ss.str(), d); !parsed)
      return R::failure(Errc::invalid_argument, f.string() + ": " + parsed.message);
    Xapian::Document doc;
    tg.set_document(doc);
    tg.index_text(d.title, 3);  // title words weigh more
    tg.increase_termpos();
    for (auto& t : d.tags) {
      tg.index_text(t, 2);
      tg.increase_termpos();
    }
    for (auto& p : d.problems) {
      tg.index_text(p, 2);
      tg.increase_termpos();
    }
    tg.index_text(d.body);
    for (auto& h : d.hardware) doc.add_boolean_term("XH" + h);
    for (auto& p : d.problems) doc.add_boolean_term("XP" + p);
    doc.set_data(std::to_string(kb->docs_.size()));
    kb->index_->db.add_document(doc);
    kb->docs_.push_back(std::move(d));
  }
  kb->index_->db.commit();
  return R(kb);
}

std::vector<KbHit> KnowledgeBase::search(const KbQuery& q) const {
  Xapian::QueryParser qp;
  qp.set_stemmer(index_->stem);
  qp.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
  qp.set_default_op(Xapian::Query::OP_OR);
  Xapian::Query query = qp.parse_query(q.text, Xapian::QueryParser::FLAG_DEFAULT | Xapian::QueryParser::FLAG_PARTIAL);
  auto filter = [&](const std::string& prefix, const std::string& value) {
    return Xapian::Query(Xapian::Query::OP_OR, Xapian::Query(prefix + "any"), Xapian::Query(prefix + value));
  };
  if (!q.hardware.empty()) query = Xapian::Query(Xapian::Query::OP_FILTER, query, filter("XH", q.hardware));
  if (!q.problem.empty()) query = Xapian::Query(Xapian::Query::OP_FILTER, query, filter("XP", q.problem));
  Xapian::Enquire enquire(index_->db);
  enquire.set_weighting_scheme(Xapian::BM25Weight());
  enquire.set_query(query);
  std::vector<KbHit> hits;
  const Xapian::MSet matches = enquire.get_mset(0, static_cast<Xapian::doccount>(q.limit));
  for (auto it = matches.begin(); it != matches.end(); ++it) {
    const auto& d = docs_.at(std::stoul(it.get_document().get_data()));
    std::string snippet;  // the first paragraph line that is not a heading
    std::stringstream body(d.body);
    for (std::string line; snippet.empty() && std::getline(body, line);)
      if (!trim(line).empty() && trim(line)[0] != '#') snippet = trim(line).substr(0, 300);
    hits.push_back({d.path, d.title, it.get_weight(), snippet});
  }
  return hits;
}

}  // namespace kevolve
