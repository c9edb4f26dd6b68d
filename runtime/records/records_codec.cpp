#include "runtime/records/records_codec.hpp"

#include "runtime/records/field_codec.hpp"

namespace kevolve {
namespace {

void put(wire::Writer& w, const std::vector<std::string>& v) {
  w.u32(static_cast<uint32_t>(v.size()));
  for (auto& s : v) w.str(s);
}
void get(wire::Reader& r, std::vector<std::string>& v) {
  v.resize(r.count());
  for (auto& s : v) s = r.str();
}
void put(wire::Writer& w, const ShapeBinding& b) {
  w.u32(static_cast<uint32_t>(b.size()));
  for (auto& [k, v] : b) {
    w.str(k);
    w.i64(v);
  }
}
void get(wire::Reader& r, ShapeBinding& b) {
  b.clear();
  for (uint32_t n = r.u32(); n > 0; --n) {
    auto k = r.str();
    b[k] = r.i64();
  }
}
void put(wire::Writer& w, const TensorSpec& t) {
  w.str(t.name);
  w.u32(static_cast<uint32_t>(t.dtype));
  put(w, t.shape);
  w.str(t.generator.kind);
  w.u32(static_cast<uint32_t>(t.generator.numbers.size()));
  for (auto& [k, v] : t.generator.numbers) {
    w.str(k);
    w.f64(v);
  }
  w.u32(static_cast<uint32_t>(t.generator.names.size()));
  for (auto& [k, v] : t.generator.names) {
    w.str(k);
    w.str(v);
  }
}
void get(wire::Reader& r, TensorSpec& t) {
  t.name = r.str();
  t.dtype = static_cast<DType>(r.u32());
  get(r, t.shape);
  t.generator.kind = r.str();
  for (uint32_t n = r.u32(); n > 0; --n) {
    auto k = r.str();
    t.generator.numbers[k] = r.f64();
  }
  for (uint32_t n = r.u32(); n > 0; --n) {
    auto k = r.str();
    t.generator.names[k] = r.str();
  }
}
}  // namespace

void encode(wire::Writer& w, const ProblemSpec& p) {
  for (auto* s : {&p.name, &p.description, &p.reference, &p.naive, &p.entry, &p.roofline_bytes, &p.roofline_flops,
                  &p.dir, &p.file})
    w.str(*s);
  put(w, p.tags);
  w.u32(static_cast<uint32_t>(p.params.size()));
  for (auto& x : p.params) {
    w.str(x.name);
    w.f64(x.value);
  }
  for (auto* v : {&p.inputs, &p.outputs}) {
    w.u32(static_cast<uint32_t>(v->size()));
    for (auto& t : *v) put(w, t);
  }
  w.u32(static_cast<uint32_t>(p.tolerances.size()));
  for (auto& [d, t] : p.tolerances) {
    w.u32(static_cast<uint32_t>(d));
    w.f64(t.atol);
    w.f64(t.rtol);
  }
  put(w, p.bench);
  put(w, p.bench_cuda);
  w.u32(static_cast<uint32_t>(p.verify.size()));
  for (auto& b : p.verify) put(w, b);
}

void decode(wire::Reader& r, ProblemSpec& p) {
  for (auto* s : {&p.name, &p.description, &p.reference, &p.naive, &p.entry, &p.roofline_bytes, &p.roofline_flops,
                  &p.dir, &p.file})
    *s = r.str();
  get(r, p.tags);
  p.params.resize(r.count());
  for (auto& x : p.params) {
    x.name = r.str();
    x.value = r.f64();
  }
  for (auto* v : {&p.inputs, &p.outputs}) {
    v->resize(r.count());
    for (auto& t : *v) get(r, t);
  }
  p.tolerances.clear();
  for (uint32_t n = r.u32(); n > 0; --n) {
    const auto d = static_cast<DType>(r.u32());
    const double a = r.f64();
    p.tolerances[d] = Tolerance{a, r.f64()};
  }
  get(r, p.bench);
  get(r, p.bench_cuda);
  p.verify.resize(r.count());
  for (auto& b : p.verify) get(r, b);
}

void encode(wire::Writer& w, const EvalOptions& o) { field_codec::put(w, o); }
void decode(wire::Reader& r, EvalOptions& o) { field_codec::get(r, o); }

void encode(wire::Writer& w, const EvalRequest& q) {
  encode(w, q.spec);
  w.str(q.artifact);
  w.str(q.entry);
  encode(w, q.options);
}

void decode(wire::Reader& r, EvalRequest& q) {
  decode(r, q.spec);
  q.artifact = r.str();
  q.entry = r.str();
  decode(r, q.options);
}

void encode(wire::Writer& w, const EvalResult& e) { field_codec::put(w, e); }
void decode(wire::Reader& r, EvalResult& e) { field_codec::get(r, e); }

}  // namespace kevolve
