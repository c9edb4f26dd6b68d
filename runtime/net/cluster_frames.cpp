#include "runtime/net/cluster_frames.hpp"

#include "runtime/records/field_codec.hpp"

namespace kevolve::cluster {
namespace {

constexpr uint32_t kMaxWords = 256;

std::string bytes_of(const wire::Writer& w) { return std::string(w.bytes().begin(), w.bytes().end()); }

void put_u64(wire::Writer& w, uint64_t v) { w.i64(static_cast<int64_t>(v)); }
uint64_t get_u64(wire::Reader& r) { return static_cast<uint64_t>(r.i64()); }

// Runs `read` over the frame's bytes; every byte must be used.
template <class T, class Read>
Expected<T> decode_with(const std::string& bytes, const char* what, Read read) {
  const std::vector<char> b(bytes.begin(), bytes.end());
  wire::Reader r(b);
  T out;
  try {
    read(r, out);
    if (!r.done()) return Expected<T>::failure(std::string(what) + " frame: bytes left over");
  } catch (const wire::DecodeError& e) {
    return Expected<T>::failure(std::string(what) + " frame: " + e.what());
  }
  return out;
}

}  // namespace

std::string encode(const RegisterFrame& f) {
  wire::Writer w;
  w.u32(f.index);
  field_codec::put(w, f.info);
  return bytes_of(w);
}
std::string encode(const RegisteredFrame& f) {
  wire::Writer w;
  w.u32(f.index);
  w.str(f.reason);
  return bytes_of(w);
}
std::string encode(const SpecFrame& f) {
  wire::Writer w;
  w.u32(f.index);
  w.str(f.problem);
  w.str(f.spec);
  return bytes_of(w);
}
std::string encode(const EvalFrame& f) {
  wire::Writer w;
  w.u32(f.index);
  put_u64(w, f.job);
  field_codec::put(w, f.eval);
  return bytes_of(w);
}
std::string encode(const ResultFrame& f) {
  wire::Writer w;
  w.u32(f.index);
  put_u64(w, f.job);
  field_codec::put(w, f.result);
  return bytes_of(w);
}
std::string encode(const AskFrame& f) {
  wire::Writer w;
  put_u64(w, f.id);
  w.u32(static_cast<uint32_t>(f.words.size()));
  for (auto& s : f.words) w.str(s);
  return bytes_of(w);
}
std::string encode(const AnswerFrame& f) {
  wire::Writer w;
  put_u64(w, f.id);
  w.str(f.text);
  return bytes_of(w);
}

Expected<RegisterFrame> decode_register(const std::string& bytes) {
  return decode_with<RegisterFrame>(bytes, "register", [](wire::Reader& r, RegisterFrame& f) {
    f.index = r.u32();
    field_codec::get(r, f.info);
  });
}
Expected<RegisteredFrame> decode_registered(const std::string& bytes) {
  return decode_with<RegisteredFrame>(bytes, "registered", [](wire::Reader& r, RegisteredFrame& f) {
    f.index = r.u32();
    f.reason = r.str();
  });
}
Expected<SpecFrame> decode_spec(const std::string& bytes) {
  return decode_with<SpecFrame>(bytes, "spec", [](wire::Reader& r, SpecFrame& f) {
    f.index = r.u32();
    f.problem = r.str();
    f.spec = r.str();
  });
}
Expected<EvalFrame> decode_eval(const std::string& bytes) {
  return decode_with<EvalFrame>(bytes, "eval", [](wire::Reader& r, EvalFrame& f) {
    f.index = r.u32();
    f.job = get_u64(r);
    field_codec::get(r, f.eval);
  });
}
Expected<ResultFrame> decode_result(const std::string& bytes) {
  return decode_with<ResultFrame>(bytes, "result", [](wire::Reader& r, ResultFrame& f) {
    f.index = r.u32();
    f.job = get_u64(r);
    field_codec::get(r, f.result);
  });
}
Expected<AskFrame> decode_ask(const std::string& bytes) {
  return decode_with<AskFrame>(bytes, "ask", [](wire::Reader& r, AskFrame& f) {
    f.id = get_u64(r);
    const uint32_t n = r.count(4);
    if (n > kMaxWords) throw wire::DecodeError("more than " + std::to_string(kMaxWords) + " words");
    for (uint32_t i = 0; i < n; ++i) f.words.push_back(r.str());
  });
}
Expected<AnswerFrame> decode_answer(const std::string& bytes) {
  return decode_with<AnswerFrame>(bytes, "answer", [](wire::Reader& r, AnswerFrame& f) {
    f.id = get_u64(r);
    f.text = r.str();
  });
}

}  // namespace kevolve::cluster
