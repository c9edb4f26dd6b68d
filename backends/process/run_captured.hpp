// Runs a trusted helper program (nvidia-smi, rocminfo, `g++ -Q --help=target`, python3 ...) and captures
// what it prints; no shell is involved. Never for a program that reads candidate text or a candidate's
// artifact: those are untrusted steps and run through process::run_confined (confined_build.hpp).
#pragma once
#include <string>
#include <vector>

namespace kevolve::process {

// Runs argv (argv[0] looked up on PATH, stdin /dev/null) in a process group of its own with a wall-clock limit,
// capturing stdout+stderr (the first MiB). Returns the exit status; -1 on timeout (the whole group is
// killed), on death by a signal, or when it could not be started.
int run_captured(const std::vector<std::string>& argv, double timeout_s, std::string& output);

}  // namespace kevolve::process
