// What travels on a cluster link (runtime/net/cluster_link.hpp), frame kind by frame kind, and its bytes.
// Plain records only, written field by field (runtime/records/field_codec.hpp): nothing on a link is an
// object to deserialise, and a damaged or hostile frame decodes to an error, never to an allocation the
// frame's bytes cannot fill.
//
//   evaluator -> node   register   index, DeviceInfo          one per device
//                       result     index, job id, EvalResult  only for a job the node gave that device
//   node -> evaluator   registered index, reason ("" = joined)
//                       spec       index, problem, encoded spec
//                       eval       index, job id, EvalJob
//                       finished   (the node has finished; the evaluator leaves unless --stay)
//   console -> node     ask        request id, words
//   node -> console     answer     request id, text
// A frame of a kind its connection's role may not send closes that connection.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/records/device_info.hpp"
#include "runtime/records/eval_job.hpp"
#include "runtime/core/expected.hpp"

namespace kevolve::cluster {

enum FrameKind : uint8_t {
  kRegister = 1,
  kRegistered = 2,
  kSpec = 3,
  kEval = 4,
  kResult = 5,
  kFinished = 6,
  kAsk = 7,
  kAnswer = 8,
};

struct RegisterFrame {
  uint32_t index = 0;
  DeviceInfo info;
};
struct RegisteredFrame {
  uint32_t index = 0;
  std::string reason;
};
struct SpecFrame {
  uint32_t index = 0;
  std::string problem, spec;
};
struct EvalFrame {
  uint32_t index = 0;
  uint64_t job = 0;
  EvalJob eval;
};
struct ResultFrame {
  uint32_t index = 0;
  uint64_t job = 0;
  EvalResult result;
};
struct AskFrame {
  uint64_t id = 0;
  std::vector<std::string> words;
};
struct AnswerFrame {
  uint64_t id = 0;
  std::string text;
};

std::string encode(const RegisterFrame& f);
std::string encode(const RegisteredFrame& f);
std::string encode(const SpecFrame& f);
std::string encode(const EvalFrame& f);
std::string encode(const ResultFrame& f);
std::string encode(const AskFrame& f);
std::string encode(const AnswerFrame& f);

// Each: the frame, or why its bytes are not one (truncated, trailing bytes, counts beyond the frame).
Expected<RegisterFrame> decode_register(const std::string& bytes);
Expected<RegisteredFrame> decode_registered(const std::string& bytes);
Expected<SpecFrame> decode_spec(const std::string& bytes);
Expected<EvalFrame> decode_eval(const std::string& bytes);
Expected<ResultFrame> decode_result(const std::string& bytes);
Expected<AskFrame> decode_ask(const std::string& bytes);
Expected<AnswerFrame> decode_answer(const std::string& bytes);

}  // namespace kevolve::cluster
