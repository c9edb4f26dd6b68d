// Runs a trusted helper program (g++, nvcc, nvidia-smi, python3 ...) and captures what it prints.
// Shared by every backend's build step and device description; no shell is involved.
#pragma once
#include <string>
#include <vector>

namespace kevolve::process {

// Runs argv (argv[0] looked up on PATH) in a process group of its own with a wall-clock limit,
// capturing stdout+stderr (the first MiB). Returns the exit status; -1 on timeout (the whole group is
// killed), on death by a signal, or when it could not be started.
int run_captured(const std::vector<std::string>& argv, double timeout_s, std::string& output);

}  // namespace kevolve::process
