// Candidate: one kernel proposed for a problem, and BuildResult: what compiling it produced.
#pragma once
#include <map>
#include <string>

#include "runtime/core/status.hpp"

namespace kevolve {

struct Candidate {
  std::string language = "cpp";                   // cpp (CPU backend); cuda, python come with their backends
  std::string source;                             // full source text
  std::string entry = "kevolve_kernel";           // exported C entry point
  std::map<std::string, std::string> parameters;  // template parameters that produced it, if any
  std::string provenance;                         // where it came from: a file path, a template, an operator
};

struct BuildResult {
  // Success when `artifact` is usable; else why not (the compiler failed, timed out, left no file). Not built
  // until a compiler says otherwise.
  Status status = Status::failure(Errc::failed, "not built");
  std::string artifact;  // path of the shared object, inside a private temp dir
  std::string log;       // compiler output (bounded: it comes from a confined build)
  double seconds = 0;
  std::string sandbox;   // how the compiler was confined ("build sandbox: uid N, ..."), "" before a build
};

}  // namespace kevolve
