#include "backends/reference/generators.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>

#include "runtime/core/expr.hpp"

namespace kevolve::reference {

at::ScalarType to_scalar_type(DType d) {
  switch (d) {
    case DType::float32:
      return at::kFloat;
    case DType::float64:
      return at::kDouble;
    case DType::int32:
      return at::kInt;
    case DType::int64:
      return at::kLong;
    case DType::bfloat16:
      return at::kBFloat16;
    case DType::float16:
      return at::kHalf;
  }
  return at::kFloat;
}

DType dtype_from(at::ScalarType s) {
  for (DType d : {DType::float64, DType::int32, DType::int64, DType::bfloat16, DType::float16})
    if (to_scalar_type(d) == s) return d;
  return DType::float32;
}

namespace {

struct GenError {
  std::string text;
};

const at::Tensor& find_input(const std::vector<at::Tensor>& made, const ProblemSpec& spec, const std::string& name) {
  for (size_t i = 0; i < made.size(); ++i)
    if (spec.inputs[i].name == name) return made[i];
  throw GenError{"generator refers to unknown input '" + name + "'"};
}

// Sorts each segment [bounds[i], bounds[i+1]) of a flat 1-D tensor in place.
template <class T>
void sort_segments(at::Tensor& flat, const std::vector<int64_t>& bounds) {
  T* p = flat.data_ptr<T>();
  for (size_t i = 0; i + 1 < bounds.size(); ++i) std::sort(p + bounds[i], p + bounds[i + 1]);
}

// One input, made on `dev` by `gen` (a generator of that device); segment_sorted uses `cpu_gen`.
at::Tensor generate(const ProblemSpec& spec, const TensorSpec& in, const ShapeBinding& shape,
                    const std::vector<at::Tensor>& made, at::Generator& gen, at::Generator& cpu_gen, at::Device dev) {
  const auto opts = [&](at::ScalarType t) { return at::TensorOptions().dtype(t).device(dev); };
  const auto& g = in.generator;
  const auto num = [&](const char* k) { return g.numbers.at(k); };
  const auto st = to_scalar_type(in.dtype);
  std::vector<int64_t> dims;
  bool dynamic = false;
  for (auto& d : in.shape) {
    if (d == "*") {
      dynamic = true;
      dims.push_back(-1);
      continue;
    }
    std::string err;
    auto v = eval_expr(d, shape, err);
    if (!v) throw GenError{"shape '" + d + "': " + err};
    dims.push_back(static_cast<int64_t>(*v));
  }
  if (dynamic && g.kind != "segment_sorted")
    throw GenError{"shape \"*\" is only allowed with the segment_sorted generator"};

  if (g.kind == "normal") return at::normal(num("mean"), num("std"), dims, gen, opts(at::kFloat)).to(st);
  if (g.kind == "uniform") return at::empty(dims, opts(at::kDouble)).uniform_(num("low"), num("high"), gen).to(st);
  if (g.kind == "randint")
    return at::randint(static_cast<int64_t>(num("low")), static_cast<int64_t>(num("high")), dims, gen, opts(at::kLong))
        .to(st);
  if (g.kind == "sorted_unique") {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    const double span = num("high") - num("low");
    const int64_t max_gap = std::max<int64_t>(1, static_cast<int64_t>(2 * span / std::max<int64_t>(n, 1)));
    auto gaps = at::randint(1, max_gap + 1, {n}, gen, opts(at::kLong));
    return (gaps.cumsum(0) + static_cast<int64_t>(num("low")) - 1).reshape(dims).to(st);
  }
  if (g.kind == "ids_from") {
    const at::Tensor keys = find_input(made, spec, g.names.at("keys")).reshape({-1}).to(at::kLong);
    auto hit = at::empty(dims, opts(at::kDouble)).uniform_(0, 1, gen) < num("hit_rate");
    auto pick = at::randint(0, keys.numel(), dims, gen, opts(at::kLong));
    auto miss =
        at::randint(static_cast<int64_t>(num("low")), static_cast<int64_t>(num("high")), dims, gen, opts(at::kLong));
    return at::where(hit, keys.index_select(0, pick.reshape({-1})).reshape(dims), miss).to(st);
  }
  if (g.kind == "offsets") {
    if (dims.size() != 1 || dims[0] < 1) throw GenError{"offsets needs a 1-D shape such as [\"F+1\"]"};
    auto len = at::randint(static_cast<int64_t>(num("min_len")), static_cast<int64_t>(num("max_len")) + 1,
                           {dims[0] - 1}, gen, opts(at::kLong));
    return at::cat({at::zeros({1}, opts(at::kLong)), len.cumsum(0)}).to(st);
  }
  if (g.kind == "segment_sorted") {
    std::vector<int64_t> bounds{0};
    if (g.names.count("lengths")) {
      const at::Tensor l = find_input(made, spec, g.names.at("lengths")).reshape({-1}).to(at::kLong).cpu().contiguous();
      const int64_t* len = l.data_ptr<int64_t>();
      bounds.reserve(static_cast<size_t>(l.numel()) + 1);
      for (int64_t i = 0; i < l.numel(); ++i) bounds.push_back(bounds.back() + std::max<int64_t>(0, len[i]));
    } else {
      const at::Tensor o = find_input(made, spec, g.names.at("offsets")).reshape({-1}).to(at::kLong).cpu().contiguous();
      bounds.assign(o.data_ptr<int64_t>(), o.data_ptr<int64_t>() + o.numel());
    }
    const int64_t total = bounds.back();
    at::Tensor flat = dtype_is_integer(in.dtype)
                          ? at::randint(static_cast<int64_t>(num("low")), static_cast<int64_t>(num("high")), {total},
                                        cpu_gen, at::TensorOptions().dtype(at::kLong))
                          : at::empty({total}, at::kDouble).uniform_(num("low"), num("high"), cpu_gen);
    if (flat.scalar_type() == at::kLong)
      sort_segments<int64_t>(flat, bounds);
    else
      sort_segments<double>(flat, bounds);
    return flat.to(st).to(dev);
  }
  throw GenError{"unknown generator kind '" + g.kind + "'"};
}

}  // namespace

Expected<std::vector<at::Tensor>> make_inputs(const ProblemSpec& spec, const ShapeBinding& shape, uint64_t seed,
                                              at::Device device) {
  auto cpu_gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  at::Generator gen = cpu_gen;
  if (!device.is_cpu()) {  // a generator of its own, never the device's default one (a reference may draw from it)
    gen = at::globalContext().defaultGenerator(device).clone();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(seed);
  }
  std::vector<at::Tensor> made;
  for (auto& in : spec.inputs) {
    try {
      made.push_back(generate(spec, in, shape, made, gen, cpu_gen, device).contiguous());
    } catch (const GenError& e) {
      return Expected<std::vector<at::Tensor>>::failure(spec.file + ": input '" + in.name + "': " + e.text);
    } catch (const std::exception& e) {
      return Expected<std::vector<at::Tensor>>::failure(spec.file + ": input '" + in.name + "': " + e.what());
    }
  }
  return made;
}

}  // namespace kevolve::reference
