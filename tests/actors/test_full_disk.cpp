// A store whose writes start failing in the middle of a search (a full disk, a file-size limit), with the
// free-space reserve turned off so that RocksDB itself meets the failure: `kevolve run` stops with a message
// naming the store and what to do (no abort, no hang), the same command finishes once writes work again,
// the store verifies, and every node evaluated twice was named by the resume. Real processes, real RocksDB.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/test_support/shell.hpp"
#include "tests/test_support/skip.hpp"

namespace fs = std::filesystem;
using kevolve::test::shell;

namespace {

const int kBudget = 700;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A null-backend search whose store lies in <dir>/mnt/store, every evaluation appended to <dir>/ledger.txt.
std::string make_case(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kevolve-full-disk-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "mnt");
  std::ofstream(dir / "run.toml") << "[search]\nproblem = \"gelu\"\nid = \"full\"\nbackend = \"null\"\n"
                                     "operator = \"null\"\nmax_in_flight = 8\nbuild_workers = 1\n"
                                     "[strategy]\nname = \"greedy\"\n[budget]\nevaluations = "
                                  << kBudget
                                  << "\n[store]\npath = \"mnt/store\"\ncheckpoint_seconds = 0\n"
                                     "[null]\ndelay_ms = 0.5\nledger = \"ledger.txt\"\n";
  return dir.string();
}

// Node ids the ledger holds more than once.
std::map<std::string, int> repeated(const std::string& dir) {
  std::map<std::string, int> count;
  std::ifstream in(fs::path(dir) / "ledger.txt");
  std::string search, id;
  while (in >> search >> id) ++count[id];
  std::map<std::string, int> out;
  for (auto& [id, n] : count)
    if (n > 1) out[id] = n;
  return out;
}

// Every node the ledger holds more than once is named by the resume's "evaluated again: nodes ..." line.
void check_repeats_named(const std::string& dir, const std::string& resume_output) {
  for (auto& [id, n] : repeated(dir)) {
    INFO("node " << id << " evaluated " << n << " times");
    const auto at = resume_output.find("evaluated again: nodes ");
    REQUIRE(at != std::string::npos);
    const std::string named = resume_output.substr(at, resume_output.find('\n', at) - at) + ",";
    CHECK(named.find(" " + id + ",") != std::string::npos);
  }
}

// The first run stopped cleanly with a message saying what to do: not 134 (an abort), not 124 (a hang cut
// by the timeout).
void check_clean_stop(int rc, const std::string& out, const std::string& cause) {
  INFO("first run (exit " << rc << "):\n" << out.substr(out.size() > 3000 ? out.size() - 3000 : 0));
  CHECK(rc == 1);
  CHECK(out.find("kevolve: store: store mnt/store: a write failed") != std::string::npos);
  CHECK(out.find(cause) != std::string::npos);
  CHECK(out.find("run the same command") != std::string::npos);
}

// Runs `script` in <dir> inside a mount namespace of its own (root and unshare needed). False, after printing
// why, when that cannot be done here: the script exits 90 when its mount fails.
bool in_mount_namespace(const std::string& dir, const std::string& script, const char* what) {
  if (geteuid() != 0 || shell("unshare -m --propagation private true 2>&1").code != 0) {
    kevolve::test::say_skipped(std::string(what) + " needs root and a mount namespace (unshare -m) here");
    return false;
  }
  const auto r = shell("cd " + dir + " && unshare -m --propagation private sh -c '" + script + "' 2>&1");
  if (r.code == 90) {
    kevolve::test::say_skipped(std::string(what) + ": the mount failed here: " + r.out);
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("writes failing mid-search stop it with a message and the same command finishes it", "[durability]") {
  // Every file of the process limited to 512 KiB (SIGXFSZ ignored, so a write past it fails with EFBIG):
  // the write-ahead log meets it after a few hundred evaluations.
  const std::string dir = make_case("fsize");
  const std::string kevolve = std::string(KEVOLVE_BIN_DIR) + "/kevolve";
  const auto first =
      shell("cd " + dir + " && sh -c \"trap '' XFSZ; ulimit -f 512; KEVOLVE_STORE_MIN_FREE_MB=0 timeout 120 " +
            kevolve + " run run.toml 2>&1\"");
  const auto second = shell("cd " + dir + " && timeout 300 " + kevolve + " run run.toml 2>&1");
  check_clean_stop(first.code, first.out, "File too large");
  INFO("the same command again (exit " << second.code << "):\n" << second.out.substr(0, 3000));
  REQUIRE(second.code == 0);
  const auto v = shell("cd " + dir + " && " + kevolve + " store verify mnt/store 2>&1");
  INFO(v.out);
  CHECK(v.code == 0);
  CHECK(v.out.find(std::to_string(kBudget) + " nodes") != std::string::npos);
  check_repeats_named(dir, second.out);
  fs::remove_all(dir);
}

TEST_CASE("a disk that fills mid-search stops it with a message and no abort and the same command finishes it",
          "[durability]") {
  // A real full disk: a 1 MiB tmpfs in a mount namespace of its own (needs root and unshare), grown to
  // 512 MiB for the second run. RocksDB's own info log meets the full disk too (Debian's 7.8.3 aborted on
  // its next line after one failed: the store now logs through a writer that cannot fail).
  const std::string dir = make_case("tmpfs");
  const std::string kevolve = std::string(KEVOLVE_BIN_DIR) + "/kevolve";
  const std::string script =
      "mount -t tmpfs -o size=1024k tmpfs mnt || exit 90; KEVOLVE_STORE_MIN_FREE_MB=0 timeout 120 " + kevolve +
      " run run.toml > out1.txt 2>&1; echo $? > rc1.txt; " + "mount -o remount,size=512m mnt && timeout 300 " +
      kevolve + " run run.toml > out2.txt 2>&1; echo $? > rc2.txt; " + kevolve +
      " store verify mnt/store > verify.txt 2>&1; echo $? > rc3.txt";
  // The tmpfs goes with the namespace, so the verify runs inside it too.
  if (!in_mount_namespace(dir, script, "a real full disk")) {
    fs::remove_all(dir);
    return;
  }
  const fs::path d(dir);
  const std::string verify = read_text(d / "verify.txt");
  INFO("verify: " << verify);
  CHECK(std::atoi(read_text(d / "rc3.txt").c_str()) == 0);
  CHECK(verify.find(std::to_string(kBudget) + " nodes") != std::string::npos);
  const std::string first = read_text(d / "out1.txt"), second = read_text(d / "out2.txt");
  const int rc1 = std::atoi(read_text(d / "rc1.txt").c_str()), rc2 = std::atoi(read_text(d / "rc2.txt").c_str());
  check_clean_stop(rc1, first, "No space left on device");
  INFO("the same command again (exit " << rc2 << "):\n" << second.substr(0, 3000));
  CHECK(rc2 == 0);
  check_repeats_named(dir, second);
  fs::remove_all(dir);
}

TEST_CASE("a store on read-only media refuses to continue with a message and is still reported", "[durability]") {
  const std::string dir = make_case("readonly");
  const std::string kevolve = std::string(KEVOLVE_BIN_DIR) + "/kevolve";
  // A finished search of kBudget nodes, then the same command with a larger budget on the store mounted
  // read-only: the run is refused in our words (RocksDB's were "While renaming a file to .../LOG.old"),
  // the report still reads it.
  REQUIRE(shell("cd " + dir + " && " + kevolve + " run run.toml > /dev/null 2>&1").code == 0);
  shell("cd " + dir + " && sed -i 's/evaluations = " + std::to_string(kBudget) +
        "/evaluations = " + std::to_string(2 * kBudget) + "/' run.toml");
  const std::string script = "mount --bind mnt mnt && mount -o remount,bind,ro mnt || exit 90; " + kevolve +
                             " run run.toml > run.txt 2>&1; echo $? > rc1.txt; " + kevolve +
                             " report run.toml --out rep > report.txt 2>&1; echo $? > rc2.txt";
  if (!in_mount_namespace(dir, script, "a read-only mount")) {
    fs::remove_all(dir);
    return;
  }
  const fs::path d(dir);
  const std::string run = read_text(d / "run.txt"), report = read_text(d / "report.txt");
  INFO("run: " << run << "\nreport: " << report);
  CHECK(std::atoi(read_text(d / "rc1.txt").c_str()) == 1);
  CHECK(run.find("store mnt/store cannot be written: its file system is mounted read-only") != std::string::npos);
  CHECK(std::atoi(read_text(d / "rc2.txt").c_str()) == 0);
  CHECK(report.find(std::to_string(kBudget) + " evaluated") != std::string::npos);
  fs::remove_all(dir);
}
