// Spawns the compile farm: `workers` build actors behind one farm actor.
// Backend "cpu" scans and compiles with g++ (backends/cpu); "null" skips building (engine benchmarks).
#pragma once
#include "actors/protocol/build.hpp"

namespace kevolve {

// `blocking`: workers compile for real (each gets its own thread); false for the null backend.
build_actor spawn_build_farm(caf::actor_system& sys, int workers, bool blocking);

}  // namespace kevolve
