// batch_event_truncate, naive: walk the segments in order, copying each one's last min(len, K)
// values element by element.
#include "kevolve_kernel.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const int64_t* lengths = static_cast<const int64_t*>(a->inputs[0].data);
  const int64_t* values = static_cast<const int64_t*>(a->inputs[1].data);
  int64_t* out_values = static_cast<int64_t*>(a->outputs[0].data);
  int64_t* out_lengths = static_cast<int64_t*>(a->outputs[1].data);
  const int64_t B = a->inputs[0].shape[0];
  const int64_t K = int64_t(a->params[0]);
  int64_t in = 0, m = 0;  // start of the current input segment, output write position
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = lengths[b];
    const int64_t keep = len < K ? len : K;
    for (int64_t j = len - keep; j < len; ++j) out_values[m++] = values[in + j];
    out_lengths[b] = keep;
    in += len;
  }
  return 0;
}
