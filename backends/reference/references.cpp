#include "backends/reference/references.hpp"

#include <torch/csrc/autograd/autograd.h>
#include <torch/version.h>
#include <torch/csrc/autograd/generated/variable_factories.h>

namespace kevolve::reference {
namespace {

using Tensors = std::vector<at::Tensor>;
using Params = std::vector<double>;

BoundReference simple(std::function<Tensors(const Tensors&, const Params&)> f, const Tensors& in, const Params& p) {
  return [f, in, p] { return f(in, p); };
}

// Fused RMSNorm where this torch has it (2.4+: what F.rms_norm runs), else the plain composition (1.13).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
constexpr const char* kRmsFormula = "torch.nn.functional.rms_norm(x, [H], weight, eps)";
at::Tensor rmsnorm(const at::Tensor& x, const at::Tensor& w, double eps) {
  return at::rms_norm(x, {x.size(-1)}, w, eps);
}
#else
constexpr const char* kRmsFormula =
    "x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight (torch < 2.4 has no fused RMSNorm)";
at::Tensor rmsnorm(const at::Tensor& x, const at::Tensor& w, double eps) {
  return x * at::rsqrt(x.pow(2).mean(-1, true) + eps) * w;
}
#endif

// The references longer than a line, each with the formula its registry entry states.
Tensors map_id(const Tensors& i, const Params&) {
  const auto& keys = i[0];
  const auto& ids = i[1];
  auto idx = at::searchsorted(keys, ids).clamp_max(keys.numel() - 1);
  return Tensors{at::where(keys.index_select(0, idx.reshape({-1})).reshape(ids.sizes()) == ids, idx,
                           at::full({}, -1, ids.options()))};
}

Tensors merge_bucketized_dense(const Tensors& i, const Params&) {
  const auto& x = i[0];
  const auto off = i[1].cpu().contiguous();  // the offsets drive a host loop, as in eager PyTorch
  const auto& b = i[2];
  const int64_t F = x.size(1);
  const int64_t* o = off.data_ptr<int64_t>();
  Tensors cols;
  int64_t base = 0;
  for (int64_t f = 0; f < F; ++f) {
    auto seg = b.slice(0, o[f], o[f + 1]);
    cols.push_back(at::bucketize(x.select(1, f), seg) + base);
    base += (o[f + 1] - o[f]) + 1;
  }
  return Tensors{at::stack(cols, 1)};
}

Tensors batch_event_truncate(const Tensors& i, const Params& q) {
  const auto& lengths = i[0];
  const auto& values = i[1];
  const int64_t K = static_cast<int64_t>(q[0]);
  const int64_t B = lengths.numel();
  auto seg = at::repeat_interleave(at::arange(B, lengths.options()), lengths);
  auto starts = lengths.cumsum(0) - lengths;
  auto pos = at::arange(values.numel(), lengths.options()) - starts.index_select(0, seg);
  auto keep = pos >= (lengths.index_select(0, seg) - K);
  return Tensors{values.masked_select(keep), lengths.clamp_max(K)};
}

Tensors fm_interaction(const Tensors& i, const Params&) {
  const auto& e = i[0];
  auto s = e.sum(1);
  return Tensors{0.5 * (s * s - (e * e).sum(1)).sum(-1)};
}

std::vector<Reference> make_registry() {
  std::vector<Reference> r;
  r.push_back({"rmsnorm_fwd", kRmsFormula, {"x", "weight"}, [](const Tensors& in, const Params& p) {
                 return simple([](const Tensors& i, const Params& q) { return Tensors{rmsnorm(i[0], i[1], q[0])}; }, in,
                               p);
               }});
  r.push_back({"rmsnorm_bwd",
               "autograd backward of the rmsnorm_fwd reference (graph built once, backward timed)",
               {"x", "weight", "dy"},
               [](const Tensors& in, const Params& p) -> BoundReference {
                 auto x = in[0].detach().clone().set_requires_grad(true);
                 auto w = in[1].detach().clone().set_requires_grad(true);
                 auto y = rmsnorm(x, w, p[0]);
                 auto dy = in[2];
                 return [x, w, y, dy] {
                   auto g = torch::autograd::grad({y}, {x, w}, {dy}, /*retain_graph=*/true);
                   return Tensors{g[0], g[1]};
                 };
               }});
  r.push_back({"layernorm_fwd",
               "torch.nn.functional.layer_norm(x, [H], weight, bias, eps)",
               {"x", "weight", "bias"},
               [](const Tensors& in, const Params& p) {
                 return simple(
                     [](const Tensors& i, const Params& q) {
                       return Tensors{at::layer_norm(i[0], {i[0].size(-1)}, i[1], i[2], q[0])};
                     },
                     in, p);
               }});
  r.push_back({"softmax_rows", "torch.softmax(x, -1)", {"x"}, [](const Tensors& in, const Params& p) {
                 return simple([](const Tensors& i, const Params&) { return Tensors{at::softmax(i[0], -1)}; }, in, p);
               }});
  r.push_back({"gelu", "torch.nn.functional.gelu(x) (exact, erf)", {"x"}, [](const Tensors& in, const Params& p) {
                 return simple([](const Tensors& i, const Params&) { return Tensors{at::gelu(i[0])}; }, in, p);
               }});
  r.push_back({"map_id",
               "idx = torch.searchsorted(keys, ids).clamp(max=K-1); torch.where(keys[idx] == ids, idx, -1)",
               {"keys", "ids"},
               [](const Tensors& in, const Params& p) { return simple(map_id, in, p); }});
  r.push_back({"merge_bucketized_dense",
               "torch.stack([torch.bucketize(x[:, f], boundaries[off[f]:off[f+1]]) + base_f for f in range(F)], 1)",
               {"x", "offsets", "boundaries"},
               [](const Tensors& in, const Params& p) { return simple(merge_bucketized_dense, in, p); }});
  r.push_back(
      {"batch_event_truncate",
       "seg = repeat_interleave(arange(B), lengths); pos = arange(N) - starts[seg]; keep = pos >= lengths[seg] - K; "
       "(values[keep], lengths.clamp(max=K))",
       {"lengths", "values", "timestamps"},
       [](const Tensors& in, const Params& p) { return simple(batch_event_truncate, in, p); }});
  r.push_back({"fm_interaction",
               "s = e.sum(1); 0.5 * (s * s - (e * e).sum(1)).sum(-1)",
               {"e"},
               [](const Tensors& in, const Params& p) { return simple(fm_interaction, in, p); }});
  return r;
}

const std::vector<Reference>& registry() {
  static const std::vector<Reference> r = make_registry();
  return r;
}

}  // namespace

const Reference* find_reference(const std::string& name) {
  for (auto& r : registry())
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<std::string> reference_names() {
  std::vector<std::string> n;
  for (auto& r : registry()) n.push_back(r.name);
  return n;
}

}  // namespace kevolve::reference
