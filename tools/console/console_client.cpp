#include "tools/console/console_client.hpp"

#include <chrono>

#include "runtime/net/cluster_frames.hpp"

namespace kevolve::console {

Expected<std::unique_ptr<ConsoleClient>> ConsoleClient::open(const net::ConnectOptions& o, net::ConnectError* why,
                                                              std::function<void(const std::string&)> on_lost) {
  using R = Expected<std::unique_ptr<ConsoleClient>>;
  std::unique_ptr<ConsoleClient> c(new ConsoleClient());
  std::weak_ptr<Shared> weak = c->shared_;
  net::LinkHandlers h;
  h.on_frame = [weak](uint8_t kind, std::string payload) {
    auto s = weak.lock();
    if (!s) return;
    auto f = kind == cluster::kAnswer ? cluster::decode_answer(payload)
                                      : Expected<cluster::AnswerFrame>::failure("the node sent frame kind " +
                                                                                 std::to_string(kind));
    std::lock_guard<std::mutex> lock(s->m);
    if (!f) {
      s->closed = true;
      s->why = f.error();
    } else {
      s->answers[f->id] = std::move(f->text);
    }
    s->cv.notify_all();
  };
  h.on_close = [weak, on_lost](const std::string& why) {
    auto s = weak.lock();
    if (!s) return;
    {
      std::lock_guard<std::mutex> lock(s->m);
      s->closed = true;
      s->why = why;
      s->cv.notify_all();
    }
    if (on_lost) on_lost(why);
  };
  auto link = net::connect(o, std::move(h), why);
  if (!link) return R::failure(link.status());
  c->link_ = std::move(*link);
  return c;
}

ConsoleClient::~ConsoleClient() {
  if (link_) link_->close("the console is leaving");
}

Expected<std::string> ConsoleClient::ask(const std::vector<std::string>& words, double timeout_s) {
  using R = Expected<std::string>;
  const uint64_t id = next_++;
  if (!link_->send(cluster::kAsk, cluster::encode(cluster::AskFrame{id, words})))
    return R::failure("the connection to the node has ended (" + lost_reason() + ")");
  std::unique_lock<std::mutex> lock(shared_->m);
  const bool got = shared_->cv.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                        [&] { return shared_->answers.count(id) || shared_->closed; });
  if (auto it = shared_->answers.find(id); it != shared_->answers.end()) {
    std::string text = std::move(it->second);
    shared_->answers.erase(it);
    return text;
  }
  if (!got) return R::failure("no answer within " + std::to_string(static_cast<int>(timeout_s)) + " s");
  return R::failure("the connection to the node ended (" + shared_->why + ")");
}

bool ConsoleClient::lost() const {
  std::lock_guard<std::mutex> lock(shared_->m);
  return shared_->closed;
}

std::string ConsoleClient::lost_reason() const {
  std::lock_guard<std::mutex> lock(shared_->m);
  return shared_->why;
}

}  // namespace kevolve::console
