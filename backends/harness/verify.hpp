// Verification on raw buffers, shared by every backend's trusted evaluator (no torch, no device code):
// poisoning outputs, checking every element was written, comparing against the reference with a
// per-dtype tolerance plus a magnitude-aware (relative L2) bound, and recognising stale answers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/records/problem.hpp"

namespace kevolve::harness {

// Fills n elements with the dtype's poison pattern (a NaN payload for floats, 0x5A.. for integers).
void poison_fill(void* p, DType d, int64_t n);
// The dtype's poison pattern as one element's bits (in the low dtype_size(d) bytes), for device-side fills.
uint64_t poison_pattern(DType d);
// Number of elements still holding the poison pattern; `first` gets the first such index (or -1).
int64_t count_poisoned(const void* p, DType d, int64_t n, int64_t& first);

struct CompareReport {
  bool ok = true;
  int64_t unwritten = 0;        // elements still poisoned (only counted when poison checking is on)
  int64_t nonfinite = 0;        // NaN/Inf where the reference is finite
  int64_t mismatches = 0;       // elements outside atol + rtol*|ref|
  bool magnitude_fail = false;  // elementwise ok, but ||out-ref|| / ||ref|| above the magnitude bound
  double max_abs = 0, max_rel = 0, rel_l2 = 0;
  int64_t worst = -1;  // flat index of the worst element (first bad one if any)
  double worst_out = 0, worst_ref = 0;
};

struct CompareOptions {
  Tolerance tol;
  bool check_poison = true;
  bool magnitude = true;
};

// Relative L2 bound used by the magnitude check: ten times rtol, at least 1e-5.
double magnitude_bound(const Tolerance& t);

// Compares n elements of `out` against `ref`.
CompareReport compare(const void* out, const void* ref, DType d, int64_t n, const CompareOptions& o);

// compare() on the elements at the flat indices `at` only (the report's counts are over those; its worst is
// a flat index into the whole buffer). For checks repeated on every timed run, where a check of every
// element would cost more than the runs: positions drawn afresh each time, unknown to the candidate, catch
// skipped or stale work on any but a vanishing share of the output.
CompareReport compare_at(const void* out, const void* ref, DType d, const std::vector<int64_t>& at,
                         const CompareOptions& o);

// True when `out` equals `ref` within the tolerance — used to recognise a stale answer (the reference
// of an earlier trial or of the data a buffer held before).
bool matches(const void* out, const void* ref, DType d, int64_t n, const Tolerance& t);

// "mismatch at [3, 17] (flat 1553): got 0.12, expected 0.5"
std::string describe(const CompareReport& r, const std::string& output_name, const std::string& index);

}  // namespace kevolve::harness
