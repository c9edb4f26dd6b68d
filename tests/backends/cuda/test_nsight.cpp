// Reading Nsight Compute's CSV into the summary stored with the best kernel (no GPU needed).
#include <catch2/catch.hpp>

#include "backends/cuda/profile/nsight.hpp"

TEST_CASE("ncu CSV becomes DRAM throughput, occupancy and the top stalls", "[cuda][nsight]") {
  const std::string csv =
      "==PROF== Connected to process 1974\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block "
      "Size\",\"Grid Size\",\"Device\",\"CC\","
      "\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"1974\",\"kevolve-cuda-runner\",\"127.0.0.1\",\"rms\",\"1\",\"13\",\"(256, 1, 1)\",\"(4096, 1, "
      "1)\",\"0\",\"9.0\",\"Command line profiler "
      "metrics\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"91.35\"\n"
      "\"0\",\"1974\",\"kevolve-cuda-runner\",\"127.0.0.1\",\"rms\",\"1\",\"13\",\"(256, 1, 1)\",\"(4096, 1, "
      "1)\",\"0\",\"9.0\",\"Command line profiler "
      "metrics\",\"gpu__time_duration.sum\",\"us\",\"131,42\"\n"
      "\"0\",\"1974\",\"kevolve-cuda-runner\",\"127.0.0.1\",\"rms\",\"1\",\"13\",\"(256, 1, 1)\",\"(4096, 1, "
      "1)\",\"0\",\"9.0\",\"Command line profiler "
      "metrics\",\"sm__warps_active.avg.pct_of_peak_sustained_active\",\"%\",\"78.2\"\n"
      "\"0\",\"1974\",\"kevolve-cuda-runner\",\"127.0.0.1\",\"rms\",\"1\",\"13\",\"(256, 1, 1)\",\"(4096, 1, "
      "1)\",\"0\",\"9.0\",\"Command line profiler "
      "metrics\",\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\",\"ratio\",\"12.5\"\n"
      "\"0\",\"1974\",\"kevolve-cuda-runner\",\"127.0.0.1\",\"rms\",\"1\",\"13\",\"(256, 1, 1)\",\"(4096, 1, "
      "1)\",\"0\",\"9.0\",\"Command line profiler "
      "metrics\",\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\",\"ratio\",\"0.4\"\n";
  const std::string s = kevolve::cuda::summarize_ncu_csv(csv);
  CHECK(s.find("(rms,") != std::string::npos);
  CHECK(s.find("DRAM throughput 91.35 % of peak") != std::string::npos);
  CHECK(s.find("achieved occupancy 78.2 %") != std::string::npos);
  CHECK(s.find("top warp stalls (cycles per issued instruction): long_scoreboard 12.5, barrier 0.4") !=
        std::string::npos);
  CHECK(kevolve::cuda::summarize_ncu_csv("==ERROR== the profiler could not be loaded\n").empty());
}
