// process::run_confined with real processes: what a confined build sees (only the toolchain and its own
// folder, no stdin, no environment of the caller's, a uid of its own), and that its output, time and
// processes are bounded. A shell stands in for the compiler: it probes what any compiler could read.
#include <catch2/catch.hpp>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "backends/process/confined_build.hpp"
#include "backends/process/identity.hpp"
#include "tests/test_support/shell.hpp"
#include "tests/test_support/skip.hpp"

namespace fs = std::filesystem;
using kevolve::process::ConfinedBuild;
using kevolve::process::run_confined;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/kevolve-test-build-XXXXXX";
    path = mkdtemp(t) ? t : "";
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string marker() {
  std::random_device rd;
  return "KVMARK" + std::to_string(rd()) + std::to_string(rd());
}

kevolve::process::ConfinedResult sh(const std::string& dir, const std::string& script, double timeout_s = 60) {
  ConfinedBuild b;
  b.argv = {"sh", "-c", script};
  b.dir = dir;
  b.timeout_s = timeout_s;
  return run_confined(b);
}

}  // namespace

TEST_CASE("a confined build sees the toolchain and its own folder, nothing of the caller's", "[confined]") {
  TempDir d, secret_dir;
  REQUIRE(!d.path.empty());
  const std::string mark = marker(), secret = secret_dir.path + "/secret.txt";
  std::ofstream(secret) << mark << "\n";
  chmod(secret.c_str(), 0600);
  setenv("KEVOLVE_TEST_CALLER_ONLY", mark.c_str(), 1);
  auto r = sh(d.path,
              "echo uid=$(id -u); cat " + secret + " 2>&1; cat /root/.bashrc 2>&1; ls /dev; cat; env; "
              "echo made > here.txt && echo wrote-own; echo x > /usr/kv-test 2>&1 || echo usr-read-only; pwd");
  unsetenv("KEVOLVE_TEST_CALLER_ONLY");
  INFO(r.output << "\n" << r.sandbox);
  CHECK(r.started);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find(mark) == std::string::npos);  // neither the secret file nor the caller's environment
  CHECK(r.output.find("wrote-own") != std::string::npos);
  CHECK(r.output.find("usr-read-only") != std::string::npos);
  CHECK(r.output.find(fs::canonical(d.path).string()) != std::string::npos);  // its working directory
  CHECK(r.sandbox.rfind("build sandbox: ", 0) == 0);
  CHECK(r.sandbox.find("stdin /dev/null") != std::string::npos);
  if (geteuid() == 0) {
    CHECK(r.output.find("uid=0") == std::string::npos);
    CHECK(r.sandbox.find("(its own), no capabilities") != std::string::npos);
    if (r.sandbox.find("mount namespace with the toolchain only") != std::string::npos) {
      // /dev holds null and urandom alone (no zero, no stdin, no tty)
      CHECK(r.output.find("zero") == std::string::npos);
      CHECK(r.output.find("stdin") == std::string::npos);
    } else {
      WARN("no private filesystem for builds on this machine: " << r.sandbox);
    }
    // Afterwards the folder and what the build wrote are the caller's again.
    struct stat st {};
    REQUIRE(lstat((d.path + "/here.txt").c_str(), &st) == 0);
    CHECK(st.st_uid == 0);
  }
  CHECK_FALSE(fs::exists(d.path + ".root"));
}

TEST_CASE("a confined build's output, time and processes are bounded", "[confined]") {
  TempDir d;
  REQUIRE(!d.path.empty());
  SECTION("diagnostics are cut at the limit, and say so") {
    auto r = sh(d.path, "i=0; while [ $i -lt 20000 ]; do echo 0123456789abcdef0123456789abcdef; i=$((i+1)); done");
    CHECK(r.exit_code == 0);
    CHECK(r.output.size() < (64u << 10) + 200);
    CHECK(r.output.find("[diagnostics cut at 64 KiB]") != std::string::npos);
  }
  SECTION("at the deadline every process of the build is killed, background ones too") {
    const std::string tag = "98" + std::to_string(getpid() % 9000 + 1000) + ".5";
    auto r = sh(d.path, "sleep " + tag + " & sleep " + tag, 1);
    CHECK(r.timed_out);
    CHECK(r.exit_code == -1);
    // [p]: the pattern does not match the shell that runs pgrep
    const auto left = kevolve::test::shell("pgrep -f 'slee[p] " + tag + "'");
    CHECK(left.out.empty());
  }
  SECTION("a program the toolchain lacks is exit status 127") {
    ConfinedBuild b;
    b.argv = {"kevolve-no-such-compiler"};
    b.dir = d.path;
    auto r = run_confined(b);
    CHECK(r.started);
    CHECK(r.exit_code == 127);
    CHECK(r.output.find("not found") != std::string::npos);
  }
}

TEST_CASE("a build started without root is confined in a user namespace, or says it is not", "[confined]") {
  if (geteuid() != 0) {
    kevolve::test::say_skipped("not root: the cases above already ran the build without root");
    return;
  }
  TempDir d;
  REQUIRE(!d.path.empty());
  REQUIRE(chown(d.path.c_str(), kevolve::process::kNobody, kevolve::process::kNobody) == 0);
  const std::string mark = marker();
  int p[2];
  REQUIRE(pipe(p) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // As nobody, a confined run reports what it saw and how it was confined.
    close(p[0]);
    setenv("KEVOLVE_TEST_CALLER_ONLY", mark.c_str(), 1);
    if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
      _exit(2);
    auto r = sh(d.path, "id -u; env; ls /dev; cat");
    const std::string report = r.sandbox + "\n" + r.output + "\nexit " + std::to_string(r.exit_code) + "\n";
    (void)!write(p[1], report.data(), report.size());
    _exit(0);
  }
  close(p[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = read(p[0], buf, sizeof buf)) > 0;) report.append(buf, static_cast<size_t>(n));
  close(p[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  INFO(report);
  REQUIRE(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
  CHECK(report.find("exit 0") != std::string::npos);
  CHECK(report.find(mark) == std::string::npos);
  CHECK(report.find("uid 65534 (the caller's)") != std::string::npos);
  CHECK(report.find("stdin /dev/null") != std::string::npos);
  const bool userns = report.find("mount namespace with the toolchain only") != std::string::npos;
  const bool said = report.find("NO private filesystem") != std::string::npos;
  CHECK(userns != said);  // one or the other, always said
  if (userns) CHECK(report.find("in a user namespace") != std::string::npos);
  else WARN("no user namespace for builds without root here: " << report.substr(0, report.find('\n')));
}
