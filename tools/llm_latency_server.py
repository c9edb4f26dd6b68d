#!/usr/bin/env python3
"""A local OpenAI-compatible endpoint that answers every request after a latency drawn uniformly from
[MIN, MAX] seconds, each connection on a thread of its own, for measuring how an LLM search scales
(tools/bench_llm_scale.sh). Each reply is a distinct, correct CPU kernel (a fresh comment), so no proposal is
a duplicate. One JSON line per request goes to LOG: {"start": t, "end": t} (Unix seconds).

Usage: tools/llm_latency_server.py PORT MIN_S MAX_S LOG
"""
import json
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, lo, hi, log_path = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
log_lock = threading.Lock()
counter = [0]

KERNEL = """```cpp
// variant {n}
#include "kevolve_kernel.h"
extern "C" int kevolve_kernel(const kv_args* a) {{
  (void)a;
  return 0;
}}
```
A plain kernel, variant {n}."""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        start = time.time()
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with log_lock:
            counter[0] += 1
            n = counter[0]
        time.sleep(random.uniform(lo, hi))
        text = KERNEL.format(n=n)
        out = json.dumps({"id": "bench-%d" % n,
                          "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                       "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": len(body) // 4, "completion_tokens": len(text) // 4}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(out)
        with log_lock, open(log_path, "a") as log:
            log.write(json.dumps({"start": start, "end": time.time()}) + "\n")

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


Server(("127.0.0.1", port), Handler).serve_forever()
