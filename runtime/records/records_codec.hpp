// Encodes the plain records for the worker protocol (runtime/core/wire.hpp) and decodes them.
#pragma once
#include "runtime/records/eval_request.hpp"
#include "runtime/core/wire.hpp"

namespace kevolve {

void encode(wire::Writer& w, const ProblemSpec& p);
void decode(wire::Reader& r, ProblemSpec& p);
void encode(wire::Writer& w, const EvalOptions& o);
void decode(wire::Reader& r, EvalOptions& o);
void encode(wire::Writer& w, const EvalRequest& q);
void decode(wire::Reader& r, EvalRequest& q);
void encode(wire::Writer& w, const EvalResult& e);
void decode(wire::Reader& r, EvalResult& e);

}  // namespace kevolve
