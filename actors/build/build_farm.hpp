// Spawns the compile farm: `workers` detached build actors (compilers block) behind one farm actor.
// Backend "cpu" scans and compiles with g++ (backends/cpu); "null" skips building (engine benchmarks).
#pragma once
#include "actors/protocol/build.hpp"

namespace kevolve {

build_actor spawn_build_farm(caf::actor_system& sys, int workers);

}  // namespace kevolve
