// Cheater (isolation): falls back to the reference — starts /usr/bin/python3 with torch once and has it
// compute torch.softmax for every call over pipes. Caught by the source scan (fork/exec) and the
// runner's seccomp sandbox (no new processes, no exec).
#include "kevolve_kernel.h"
#include <cstdint>
#include <unistd.h>

static int to_py = -1, from_py = -1;

static const char* kScript =
    "import sys, struct, torch\n"
    "i, o = sys.stdin.buffer, sys.stdout.buffer\n"
    "while True:\n"
    "    h = i.read(16)\n"
    "    if len(h) < 16: break\n"
    "    r, c = struct.unpack('qq', h)\n"
    "    x = torch.frombuffer(bytearray(i.read(4 * r * c)), dtype=torch.float32).reshape(r, c)\n"
    "    o.write(torch.softmax(x, -1).numpy().tobytes()); o.flush()\n";

static bool io(int fd, void* p, int64_t n, bool wr) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t k = wr ? write(fd, c, n) : read(fd, c, n);
    if (k <= 0) return false;
    c += k;
    n -= k;
  }
  return true;
}

extern "C" int kevolve_kernel(const kv_args* a) {
  if (to_py < 0) {
    int in[2], out[2];
    if (pipe(in) || pipe(out)) return 1;
    if (fork() == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      execl("/usr/bin/python3", "python3", "-c", kScript, (char*)nullptr);
      _exit(127);
    }
    to_py = in[1];
    from_py = out[0];
  }
  int64_t hdr[2] = {a->inputs[0].shape[0], a->inputs[0].shape[1]};
  const int64_t bytes = 4 * hdr[0] * hdr[1];
  if (!io(to_py, hdr, 16, true) || !io(to_py, a->inputs[0].data, bytes, true)) return 2;
  return io(from_py, a->outputs[0].data, bytes, false) ? 0 : 3;
}
