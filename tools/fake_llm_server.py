#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions endpoint, for trying `operator = "llm"` offline.

Usage: tools/fake_llm_server.py PORT REPLY_FILE [REPLY_FILE ...]
Each POST to /v1/chat/completions is answered with the next reply file's text (the last one repeats).
The requests it receives are appended to fake_llm_requests.jsonl in the current folder.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

port, files = int(sys.argv[1]), sys.argv[2:]
replies = [open(f).read() for f in files]
served = [0]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open("fake_llm_requests.jsonl", "ab") as log:
            log.write(body + b"\n")
        text = replies[min(served[0], len(replies) - 1)]
        served[0] += 1
        out = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                          "usage": {"prompt_tokens": len(body) // 4, "completion_tokens": len(text) // 4}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", port), Handler).serve_forever()
