#include "runtime/records/candidate.hpp"
#include "runtime/records/evaluation.hpp"
#include "runtime/records/node.hpp"
#include "runtime/records/problem.hpp"

namespace kevolve {

const char* dtype_name(DType d) {
  switch (d) {
    case DType::float32:
      return "float32";
    case DType::float64:
      return "float64";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    case DType::bfloat16:
      return "bfloat16";
    case DType::float16:
      return "float16";
  }
  return "?";
}

bool parse_dtype(const std::string& s, DType& out) {
  for (DType d : {DType::float32, DType::float64, DType::int32, DType::int64, DType::bfloat16, DType::float16})
    if (s == dtype_name(d)) {
      out = d;
      return true;
    }
  return false;
}

int64_t dtype_size(DType d) {
  switch (d) {
    case DType::float32:
    case DType::int32:
      return 4;
    case DType::float64:
    case DType::int64:
      return 8;
    case DType::bfloat16:
    case DType::float16:
      return 2;
  }
  return 0;
}

bool dtype_is_integer(DType d) { return d == DType::int32 || d == DType::int64; }

const char* status_name(EvalStatus s) {
  switch (s) {
    case EvalStatus::ok:
      return "ok";
    case EvalStatus::compile_error:
      return "compile_error";
    case EvalStatus::runtime_error:
      return "runtime_error";
    case EvalStatus::timeout:
      return "timeout";
    case EvalStatus::incorrect:
      return "incorrect";
    case EvalStatus::rejected:
      return "rejected";
    case EvalStatus::harness_error:
      return "harness_error";
  }
  return "?";
}

static const char* const kDetectorNames[] = {"isolation",       "escaped_work", "pointer_reuse", "input_mutation",
                                             "magnitude",       "poison",       "fresh_data",    "timed_outputs",
                                             "impossible_time", "queued_work"};

const char* detector_name(Detector d) {
  const auto i = static_cast<uint32_t>(d);
  return i < static_cast<uint32_t>(Detector::count_) ? kDetectorNames[i] : "?";
}

bool parse_detector(const std::string& s, Detector& out) {
  for (uint32_t i = 0; i < static_cast<uint32_t>(Detector::count_); ++i)
    if (s == kDetectorNames[i]) {
      out = static_cast<Detector>(i);
      return true;
    }
  return false;
}

std::vector<std::string> detector_names() { return {std::begin(kDetectorNames), std::end(kDetectorNames)}; }

std::string params_key(const Params& p) {
  std::string k;
  for (auto& [name, value] : p) {
    k += name;
    k += '=';
    k += value;
    k += ';';
  }
  return k;
}

uint64_t params_hash(const Params& p) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over params_key, then a final mix
  for (unsigned char c : params_key(p)) h = (h ^ c) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h == 0 ? 1 : h;  // 0 marks an empty slot in the index's table
}

}  // namespace kevolve
