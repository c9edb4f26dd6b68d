#include "backends/harness/verify.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

namespace kevolve::harness {
namespace {

constexpr uint32_t kPoison32 = 0x7FA5A5A5u;  // quiet NaN with a payload no arithmetic produces
constexpr uint64_t kPoison64 = 0x7FF5A5A5A5A5A5A5ull;
constexpr uint16_t kPoison16 = 0x7DA5u;  // NaN for fp16 / bf16 bit layouts alike
constexpr uint64_t kPoisonI64 = 0x5A5A5A5A5A5A5A5Aull;
constexpr uint32_t kPoisonI32 = 0x5A5A5A5Au;

double load(const void* p, DType d, int64_t i) {
  switch (d) {
    case DType::float32:
      return static_cast<const float*>(p)[i];
    case DType::float64:
      return static_cast<const double*>(p)[i];
    case DType::int32:
      return static_cast<const int32_t*>(p)[i];
    case DType::int64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::bfloat16: {
      uint32_t bits = uint32_t(static_cast<const uint16_t*>(p)[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case DType::float16: {
      const uint16_t h = static_cast<const uint16_t*>(p)[i];
      const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
      const double s = (h & 0x8000) ? -1 : 1;
      if (e == 0) return s * std::ldexp(m, -24);
      if (e == 31) return m ? NAN : s * INFINITY;
      return s * std::ldexp(1024 + m, e - 25);
    }
  }
  return 0;
}

}  // namespace

uint64_t poison_pattern(DType d) {
  switch (dtype_size(d)) {
    case 8:
      return dtype_is_integer(d) ? kPoisonI64 : kPoison64;
    case 4:
      return dtype_is_integer(d) ? kPoisonI32 : kPoison32;
    default:
      return kPoison16;
  }
}

void poison_fill(void* p, DType d, int64_t n) {
  switch (dtype_size(d)) {
    case 8: {
      const uint64_t v = dtype_is_integer(d) ? kPoisonI64 : kPoison64;
      auto* q = static_cast<uint64_t*>(p);
      for (int64_t i = 0; i < n; ++i) q[i] = v;
      break;
    }
    case 4: {
      const uint32_t v = dtype_is_integer(d) ? kPoisonI32 : kPoison32;
      auto* q = static_cast<uint32_t*>(p);
      for (int64_t i = 0; i < n; ++i) q[i] = v;
      break;
    }
    case 2: {
      auto* q = static_cast<uint16_t*>(p);
      for (int64_t i = 0; i < n; ++i) q[i] = kPoison16;
      break;
    }
  }
}

int64_t count_poisoned(const void* p, DType d, int64_t n, int64_t& first) {
  first = -1;
  int64_t c = 0;
  auto hit = [&](int64_t i) {
    if (first < 0) first = i;
    ++c;
  };
  switch (dtype_size(d)) {
    case 8: {
      const uint64_t v = dtype_is_integer(d) ? kPoisonI64 : kPoison64;
      const auto* q = static_cast<const uint64_t*>(p);
      for (int64_t i = 0; i < n; ++i)
        if (q[i] == v) hit(i);
      break;
    }
    case 4: {
      const uint32_t v = dtype_is_integer(d) ? kPoisonI32 : kPoison32;
      const auto* q = static_cast<const uint32_t*>(p);
      for (int64_t i = 0; i < n; ++i)
        if (q[i] == v) hit(i);
      break;
    }
    case 2: {
      const auto* q = static_cast<const uint16_t*>(p);
      for (int64_t i = 0; i < n; ++i)
        if (q[i] == kPoison16) hit(i);
      break;
    }
  }
  return c;
}

double magnitude_bound(const Tolerance& t) { return std::max(10 * t.rtol, 1e-5); }

namespace {

template <class T>
struct Direct {
  const T* p;
  double operator()(int64_t i) const { return static_cast<double>(p[i]); }
};

struct Generic {
  const void* p;
  DType d;
  double operator()(int64_t i) const { return load(p, d, i); }
};

// The floating-point comparison loop, instantiated per element loader so float32/float64 (the common
// cases) run without a type switch per element.
template <class L>
void compare_floats(CompareReport& r, L out, L ref, int64_t n, const CompareOptions& o) {
  double err2 = 0, ref2 = 0, worst_score = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double a = out(i), b = ref(i);
    if (!std::isfinite(a) && std::isfinite(b)) {
      if (r.nonfinite++ == 0 && r.mismatches == 0) {
        r.worst = i;
        r.worst_out = a;
        r.worst_ref = b;
      }
      continue;
    }
    if (!std::isfinite(b)) {  // reference NaN/Inf: the candidate must agree exactly in kind
      if (!(std::isnan(a) && std::isnan(b)) && a != b) {
        if (r.mismatches++ == 0) {
          r.worst = i;
          r.worst_out = a;
          r.worst_ref = b;
        }
      }
      continue;
    }
    const double e = std::fabs(a - b);
    r.max_abs = std::max(r.max_abs, e);
    if (e > 0) r.max_rel = std::max(r.max_rel, e / std::max(std::fabs(b), 1e-30));
    err2 += e * e;
    ref2 += b * b;
    if (e > o.tol.atol + o.tol.rtol * std::fabs(b)) {
      if (r.mismatches++ == 0) {
        r.worst = i;
        r.worst_out = a;
        r.worst_ref = b;
        worst_score = 1e300;
      }
    } else if (r.mismatches == 0 && r.nonfinite == 0 && e > worst_score) {
      worst_score = e;
      r.worst = i;
      r.worst_out = a;
      r.worst_ref = b;
    }
  }
  r.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 > 0 ? INFINITY : 0);
}

template <class T>
void compare_ints(CompareReport& r, const T* out, const T* ref, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (out[i] == ref[i]) continue;  // exact, on the raw values (doubles lose int64 precision above 2^53)
    if (r.mismatches++ == 0) {
      r.worst = i;
      r.worst_out = static_cast<double>(out[i]);
      r.worst_ref = static_cast<double>(ref[i]);
    }
    r.max_abs = std::max(r.max_abs, std::fabs(static_cast<double>(out[i]) - static_cast<double>(ref[i])));
  }
}

}  // namespace

CompareReport compare_at(const void* out, const void* ref, DType d, const std::vector<int64_t>& at,
                         const CompareOptions& o) {
  const size_t es = static_cast<size_t>(dtype_size(d));
  std::vector<char> o_at(at.size() * es), r_at(at.size() * es);
  for (size_t k = 0; k < at.size(); ++k) {
    std::memcpy(o_at.data() + k * es, static_cast<const char*>(out) + static_cast<size_t>(at[k]) * es, es);
    std::memcpy(r_at.data() + k * es, static_cast<const char*>(ref) + static_cast<size_t>(at[k]) * es, es);
  }
  CompareReport r = compare(o_at.data(), r_at.data(), d, static_cast<int64_t>(at.size()), o);
  if (r.worst >= 0) r.worst = at[static_cast<size_t>(r.worst)];
  return r;
}

CompareReport compare(const void* out, const void* ref, DType d, int64_t n, const CompareOptions& o) {
  CompareReport r;
  if (o.check_poison) {
    int64_t first;
    r.unwritten = count_poisoned(out, d, n, first);
    if (r.unwritten) {
      r.ok = false;
      r.worst = first;
      r.worst_ref = load(ref, d, first);
      r.worst_out = NAN;
      return r;
    }
  }
  switch (d) {
    case DType::int64:
      compare_ints(r, static_cast<const int64_t*>(out), static_cast<const int64_t*>(ref), n);
      break;
    case DType::int32:
      compare_ints(r, static_cast<const int32_t*>(out), static_cast<const int32_t*>(ref), n);
      break;
    case DType::float32:
      compare_floats(r, Direct<float>{static_cast<const float*>(out)}, Direct<float>{static_cast<const float*>(ref)}, n,
                     o);
      break;
    case DType::float64:
      compare_floats(r, Direct<double>{static_cast<const double*>(out)},
                     Direct<double>{static_cast<const double*>(ref)}, n, o);
      break;
    default:
      compare_floats(r, Generic{out, d}, Generic{ref, d}, n, o);
      break;
  }
  if (r.mismatches || r.nonfinite)
    r.ok = false;
  else if (!dtype_is_integer(d) && o.magnitude && r.rel_l2 > magnitude_bound(o.tol)) {
    r.ok = false;
    r.magnitude_fail = true;
  }
  return r;
}

bool matches(const void* out, const void* ref, DType d, int64_t n, const Tolerance& t) {
  CompareOptions o{t, true, true};
  return compare(out, ref, d, n, o).ok;
}

std::string describe(const CompareReport& r, const std::string& output_name, const std::string& index) {
  std::ostringstream os;
  os.precision(6);
  if (r.unwritten) {
    os << "output '" << output_name << "': " << r.unwritten << " element(s) never written (still poisoned), first at "
       << index;
  } else if (r.nonfinite) {
    os << "output '" << output_name << "': " << r.nonfinite
       << " NaN/Inf element(s) where the reference is finite, first at " << index << " (expected " << r.worst_ref
       << ")";
  } else if (r.mismatches) {
    os << "output '" << output_name << "': " << r.mismatches << " element(s) outside tolerance, first at " << index
       << ": got " << r.worst_out << ", expected " << r.worst_ref << " (max abs err " << r.max_abs << ")";
  } else if (r.magnitude_fail) {
    os << "output '" << output_name << "': every element within the elementwise tolerance, but the relative L2 error "
       << r.rel_l2
       << " is far above what a correct kernel gives (the output does not follow the reference's magnitude)";
  } else {
    os << "output '" << output_name << "': ok (max abs err " << r.max_abs << ", at " << index << ")";
  }
  return os.str();
}

}  // namespace kevolve::harness
