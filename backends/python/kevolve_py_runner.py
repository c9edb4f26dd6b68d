#!/usr/bin/env python3
"""kevolve's Python runner: runs ONE candidate (ModelNew) for kevolve_py_eval.py, in a process of its own.

It never sees the reference model's outputs: it receives the constructor arguments and weights (to build
ModelNew under the same seed and copy the matching weights), then inputs, and answers with outputs and
times. Commands are JSON lines on stdin; answers JSON lines on the original stdout (the candidate's own
prints go to stderr). The clock is bound before the candidate is imported, so patching the time module
cannot change what is measured.

Started with "-" for the candidate, it is a standby runner: it imports torch and sets up the device before
it knows its candidate (that start-up is most of a runner's cost), then waits for
{"op": "open", "candidate": PATH, "work": DIR}. Either way one process runs one candidate only.
"""
import importlib.util
import json
import os
import sys
import time

_clock = time.perf_counter_ns  # bound before any candidate code runs


def _die_with_parent():
    """Killed with its evaluator: a candidate stuck in a loop must not outlive the process that watches it."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass


_die_with_parent()
if str(os.getppid()) != os.environ.get("KEVOLVE_RUNNER_PARENT", str(os.getppid())):  # its evaluator is already gone
    sys.exit(1)

_reply = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr

import torch  # noqa: E402

# Bound before any candidate code runs, like the clock: the event and stream functions the timing calls,
# and the DLPack pair the refill check writes through.
_Event = torch.cuda.Event
_EventBase = getattr(torch._C, "_CudaEventBase", None)
_ev_record = getattr(_EventBase, "record", None)
_ev_elapsed = getattr(_EventBase, "elapsed_time", None)
_ev_sync = getattr(_EventBase, "synchronize", None)
_current_stream = torch.cuda.current_stream
from torch.utils.dlpack import from_dlpack as _from_dlpack, to_dlpack as _to_dlpack  # noqa: E402


def _elapsed_ns(b, e):
    """The time between two recorded events, through the functions bound above."""
    if _ev_elapsed is not None:
        _ev_sync(e)
        return int(_ev_elapsed(b, e) * 1e6)
    e.synchronize()
    return int(b.elapsed_time(e) * 1e6)


def _record(ev):
    if _ev_record is not None:
        _ev_record(ev, _current_stream())
    else:
        ev.record()


def answer(**kw):
    _reply.write(json.dumps(kw) + "\n")
    _reply.flush()


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def main():
    path, device, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    torch.set_num_threads(threads)
    dev = torch.device(device)
    if dev.type == "cuda" and torch.cuda.is_available():
        torch.zeros(1, device=dev)  # the device's context, before the candidate's clock starts
    model = None
    kept = None  # the first run's input tensors, for the refill check
    loaded_sets, flush = {}, None  # timing: input sets by file, the L2 flush buffer
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        try:
            if op == "open":  # a standby runner learns its one candidate
                if path != "-":
                    answer(status="harness_error", message="this runner already has its candidate")
                    continue
                path = cmd["candidate"]
                os.chdir(cmd["work"])
                answer(status="ok", message="")
            elif op == "load":
                spec = importlib.util.spec_from_file_location("kevolve_candidate", path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                if not hasattr(mod, "ModelNew"):
                    answer(status="runtime_error", reason="load", message="the candidate defines no ModelNew")
                    continue
                m = torch.load(cmd["model"])
                torch.manual_seed(m["seed"])
                model = mod.ModelNew(*m["init"]).to(dev).eval()
                mine = model.state_dict()
                same = {k: v for k, v in m["state"].items() if k in mine and mine[k].shape == v.shape}
                model.load_state_dict(same, strict=False)  # the reference's weights wherever the names match
                answer(status="ok", copied=len(same), message="")
            elif op in ("run", "refill"):
                inputs = torch.load(cmd["inputs"])
                inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in inputs]
                if op == "refill":  # the same tensor objects as the first run, holding the new data
                    for old, new in zip(kept, inputs):
                        if isinstance(old, torch.Tensor):
                            # Written through a DLPack alias, whose version counter is its own: a result cached by
                            # (address, tensor._version) is caught like one cached by address alone.
                            _from_dlpack(_to_dlpack(old)).copy_(new)
                    inputs = kept
                elif kept is None:
                    kept = inputs
                with torch.no_grad():
                    outs = as_list(model(*inputs))
                if dev.type == "cuda":
                    torch.cuda.synchronize()
                outs = [o.detach().cpu() if isinstance(o, torch.Tensor) else o for o in outs]
                torch.save({"outputs": outs, "inputs_after": [x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs]}, cmd["outputs"])
                answer(status="ok", message="")
            elif op == "time":
                # Exactly as the evaluator times the reference: per call, CUDA events on the current stream
                # with the L2 flushed before (CPU: the wall clock); the input sets stay loaded across passes.
                for p in cmd["inputs"]:
                    if p not in loaded_sets:
                        loaded_sets[p] = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in torch.load(p)]
                sets = [loaded_sets[p] for p in cmd["inputs"]]
                if dev.type == "cuda" and flush is None:
                    flush = torch.empty(int(2 * torch.cuda.get_device_properties(dev).L2_cache_size), dtype=torch.uint8, device=dev)
                ns, kept = [], []
                for s in sets:
                    for k in range(max(1, int(cmd.get("reps", 1)))):
                        if dev.type == "cuda":
                            flush.fill_(1)
                            b, e = _Event(enable_timing=True), _Event(enable_timing=True)
                            _record(b)
                            with torch.no_grad():
                                outs = as_list(model(*s))
                            _record(e)
                            ns.append(_elapsed_ns(b, e))
                        else:
                            t0 = _clock()
                            with torch.no_grad():
                                outs = as_list(model(*s))
                            ns.append(_clock() - t0)
                        if cmd.get("check") and k == 0:
                            kept.append([o.detach().cpu() for o in outs])
                out_path = ""
                if cmd.get("check"):
                    out_path = os.path.join(os.getcwd(), "timed_outputs.pt")
                    torch.save(kept, out_path)
                answer(status="ok", ns=ns, outputs=out_path, message="")
            else:
                answer(status="harness_error", message="unknown command " + op)
        except Exception as e:  # the candidate's failure, reported with its type
            answer(status="runtime_error", reason="exception", message="%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))


if __name__ == "__main__":
    main()
