// The one field list of each record that is stored or crosses a process: fields(record, f) calls f with
// every field in order. The store's bytes (storage/store.cpp), the wire between processes
// (records_codec) and CAF's messages (actors/protocol/type_ids.hpp) are all written from these lists, so a
// new field is added in one place. Add fields at the end only: records stored before a field existed
// decode with that field at its default (field_codec.hpp).
#pragma once
#include <concepts>
#include <type_traits>

#include "runtime/records/device_info.hpp"
#include "runtime/records/eval_job.hpp"
#include "runtime/records/eval_request.hpp"
#include "runtime/records/search_status.hpp"
#include "runtime/records/evaluation.hpp"
#include "runtime/records/kb_query.hpp"
#include "runtime/records/node.hpp"
#include "runtime/records/node_context.hpp"
#include "runtime/records/store_batch.hpp"

namespace kevolve {

template <class T, class R>
concept RecordOf = std::same_as<std::remove_const_t<T>, R>;

template <RecordOf<NodeRecord> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.id, x.parents, x.op, x.params, x.island, x.state, x.status, x.reason, x.message, x.fitness, x.candidate_ms,
           x.reference_ms, x.device_class);
}
// NodeRecord fields a stored record must have (device_class came later).
inline constexpr size_t kNodeFieldsRequired = 12;

template <RecordOf<SearchRecord> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.id, x.problem, x.strategy, x.config_text, x.rng_state, x.stop_reason, x.next_node, x.finished, x.submitted,
           x.paused, x.cancelled);
}
inline constexpr size_t kSearchFieldsRequired = 8;

template <RecordOf<Status> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.code, x.message);
}

template <RecordOf<Timing> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.median_ms, x.p10_ms, x.p90_ms, x.samples, x.threads);
}

template <RecordOf<DetectorSet> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.bits);
}

template <RecordOf<EvalOptions> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.threads, x.trials, x.warmup, x.min_reps, x.max_reps, x.min_time_s, x.call_timeout_s, x.memory_limit_mb,
           x.cpu_limit_s, x.seed, x.rotate_bytes, x.arch, x.detectors);
}

template <RecordOf<EvalResult> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.status, x.reason, x.message, x.where, x.max_abs_err, x.max_rel_err, x.trials, x.shapes, x.reference,
           x.candidate, x.speedup, x.candidate_gbps, x.candidate_gflops, x.compile_log, x.runner_log, x.peak_gbps,
           x.device, x.profile, x.compiled, x.compile_speedup, x.kind, x.device_class, x.sandbox, x.detectors, x.sms,
           x.l2_bytes, x.evaluator_peak_rss_mb, x.roofline_bytes, x.roofline_flops, x.peak_gflops);
}

template <RecordOf<Candidate> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.language, x.source, x.entry, x.parameters, x.provenance);
}

template <RecordOf<BuildResult> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.status, x.artifact, x.log, x.seconds, x.sandbox);
}

template <RecordOf<BuildOutcome> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.decided, x.verdict, x.build, x.dir, x.entry);
}

template <RecordOf<EvalJob> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.search, x.node, x.backend, x.problem, x.params, x.build, x.options, x.files, x.target, x.candidate,
           x.device_class);
}

template <RecordOf<DeviceInfo> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.host, x.pid, x.index, x.backend, x.name, x.arch, x.fingerprint, x.device_class, x.memory_bytes,
           x.copy_gbps);
}

template <RecordOf<SearchStatus> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.search, x.evaluated, x.in_flight, x.correct, x.failed, x.best_node, x.best_fitness, x.rate, x.finished,
           x.stop_reason, x.save_error, x.paused);
}

template <RecordOf<NodeContext> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.id, x.source, x.report, x.peak_gbps);
}

template <RecordOf<EvaluatingDevice> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.name, x.sms, x.l2_bytes, x.copy_gbps);
}

template <RecordOf<Artifact> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.node, x.kind, x.text);
}

template <RecordOf<NodeEntry> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.search, x.node, x.params_stored);
}

template <RecordOf<ArtifactEntry> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.search, x.artifact);
}

template <RecordOf<StoreBatch> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.searches, x.nodes, x.artifacts);
}

template <RecordOf<KbQuery> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.text, x.hardware, x.problem, x.limit);
}

template <RecordOf<KbHit> T, class F>
decltype(auto) fields(T& x, F&& f) {
  return f(x.path, x.title, x.score, x.snippet);
}

}  // namespace kevolve
