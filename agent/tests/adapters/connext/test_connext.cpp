// What is particular to the connext adapter (the checks every adapter gets
// are in test_adapters.cpp): notices without data, the clean-up of what a
// killed Connext leaves, and the versions it reports.
#ifdef MWPERF_WITH_CONNEXT
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "../pairs.h"
#include "adapters/connext/connext_leftovers.h"

using namespace mwperf;

// A keyed writer that goes away disposes and unregisters its instances: the
// reader gets samples without data (valid_data false), which must never
// reach the core as messages.
TEST(Connext, NoticesWithoutDataAreNotMessages) {
  for (const char* receive : {"waitset", "listener"}) {
    AdapterConfig c;
    c.instances = 3;
    c.receive = receive;
    c.reliability = "reliable";
    Pair p = open_pair("connext", 64, c);
    Collector got;
    if (c.receive == "listener") {
      ASSERT_EQ(p.sub->listen(&got), Errc::ok) << p.sub->last_error();
    }
    for (uint8_t i = 0; i < 3; ++i) {
      const auto m = pattern(64, i);
      ASSERT_EQ(p.pub->send(m.data(), m.size()), Errc::ok) << p.pub->last_error();
    }
    std::vector<uint8_t> in;
    for (uint8_t i = 0; i < 3 && c.receive == "waitset"; ++i) {
      ASSERT_EQ(recv_one(*p.sub, &in), Errc::ok) << receive;
      EXPECT_EQ(in, pattern(64, i));
    }
    if (c.receive == "listener") {
      ASSERT_TRUE(got.wait_for(3));
    }
    p.pub->close();  // disposes and unregisters the 3 instances
    const uint8_t* d = nullptr;
    size_t n = 0;
    if (c.receive == "waitset") {
      EXPECT_EQ(p.sub->recv(&d, &n, 1'000'000'000), Errc::timeout) << receive << ": a message of " << n << " B";
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::lock_guard<std::mutex> lk(got.mu);
      EXPECT_EQ(got.got.size(), 3u) << receive;
    }
    p.sub->close();
  }
}

namespace {
constexpr long kTestPort = 65001;  // an RTPS port of domain 232: no Connext participant of ours uses it
int shm_id(long key) { return shmget(key_t(key), 0, 0); }
int sem_id(long key) { return semget(key_t(key), 0, 0); }
}  // namespace

// What a killed Connext leaves (its SHMEM segment and two semaphores, the
// adapter's XML file) goes; what a live process holds stays.
TEST(Connext, StaleLeftoversGoLiveOnesStay) {
  char dir[] = "/tmp/mwperf-connext-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const long dead_port = kTestPort, live_port = kTestPort + 2;
  const pid_t child = fork();
  if (child == 0) {  // creates, attaches, leaves everything behind as a killed process would
    const int id = shmget(key_t(0x400000 + dead_port), 4096, IPC_CREAT | 0600);
    if (id < 0 || shmat(id, nullptr, 0) == reinterpret_cast<void*>(-1)) _exit(1);
    for (long base : {0x800000L, 0xb00000L})
      if (semget(key_t(base + dead_port), 1, IPC_CREAT | 0600) < 0) _exit(1);
    FILE* f = std::fopen((std::string(dir) + "/mwperf-connext-" + std::to_string(getpid()) + "-1.xml").c_str(), "w");
    if (f == nullptr) _exit(1);
    std::fclose(f);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const int live = shmget(key_t(0x400000 + live_port), 4096, IPC_CREAT | 0600);  // this process: alive
  ASSERT_GE(live, 0);
  const std::string own = connext_xml_path(1, dir);
  std::fclose(std::fopen(own.c_str(), "w"));
  const std::string dead_file = std::string(dir) + "/mwperf-connext-" + std::to_string(child) + "-1.xml";

  const std::vector<std::string> removed = clean_connext_leftovers("/proc/sysvipc", dir);
  auto has = [&](const std::string& what) { return std::find(removed.begin(), removed.end(), what) != removed.end(); };
  EXPECT_TRUE(has("shm 0x0040fde9") && has("sem 0x0080fde9") && has("sem 0x00b0fde9") && has(dead_file))
      << ::testing::PrintToString(removed);
  EXPECT_LT(shm_id(0x400000 + dead_port), 0);
  EXPECT_LT(sem_id(0x800000 + dead_port), 0);
  EXPECT_LT(sem_id(0xb00000 + dead_port), 0);
  EXPECT_EQ(shm_id(0x400000 + live_port), live);
  EXPECT_EQ(access(own.c_str(), F_OK), 0);
  EXPECT_NE(access(dead_file.c_str(), F_OK), 0);
  shmctl(live, IPC_RMID, nullptr);
  unlink(own.c_str());
  rmdir(dir);
}
// A killed agent is a zombie until its parent (init, for an orphan: in a
// container that may take seconds) reaps it; it holds nothing by then, so
// what it left is stale already. The child here stays unreaped while the
// clean-up runs (waitid WNOWAIT: ended, not reaped).
TEST(Connext, LeftoversOfAnUnreapedProcessGo) {
  char dir[] = "/tmp/mwperf-connext-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const long port = kTestPort + 4;
  const pid_t child = fork();
  if (child == 0) {
    const int id = shmget(key_t(0x400000 + port), 4096, IPC_CREAT | 0600);
    if (id < 0 || shmat(id, nullptr, 0) == reinterpret_cast<void*>(-1)) _exit(1);
    for (long base : {0x800000L, 0xb00000L})
      if (semget(key_t(base + port), 1, IPC_CREAT | 0600) < 0) _exit(1);
    FILE* f = std::fopen((std::string(dir) + "/mwperf-connext-" + std::to_string(getpid()) + "-1.xml").c_str(), "w");
    if (f == nullptr) _exit(1);
    std::fclose(f);
    _exit(0);
  }
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT), 0);
  ASSERT_TRUE(info.si_code == CLD_EXITED && info.si_status == 0);
  ASSERT_EQ(kill(child, 0), 0);  // still there: a zombie
  const std::string file = std::string(dir) + "/mwperf-connext-" + std::to_string(child) + "-1.xml";
  const std::vector<std::string> removed = clean_connext_leftovers("/proc/sysvipc", dir);
  auto has = [&](const std::string& what) { return std::find(removed.begin(), removed.end(), what) != removed.end(); };
  EXPECT_TRUE(has("shm 0x0040fded") && has("sem 0x0080fded") && has("sem 0x00b0fded") && has(file))
      << ::testing::PrintToString(removed);
  int status = 0;
  waitpid(child, &status, 0);
  for (long key : {0x400000 + port}) shmctl(shm_id(key), IPC_RMID, nullptr);  // whatever is left
  for (long key : {0x800000 + port, 0xb00000 + port}) semctl(sem_id(key), 0, IPC_RMID);
  unlink(file.c_str());
  rmdir(dir);
}

namespace {

// The build a loaded library's file names ("NDDSC_BUILD_6.1.2.21_<date>..." -> "6.1.2.21"),
// read from the file this process mapped: what `strings` shows, not what the library says.
std::string build_in_file(const std::string& library, const std::string& tag) {
  std::ifstream maps("/proc/self/maps");
  std::string line, path;
  while (path.empty() && std::getline(maps, line))
    if (line.size() > library.size() && line.compare(line.size() - library.size(), library.size(), library) == 0)
      path = line.substr(line.find('/'));
  std::ifstream file(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  const size_t at = bytes.find(tag);
  if (at == std::string::npos) return "not found in '" + path + "'";
  const size_t from = at + tag.size();
  return bytes.substr(from, bytes.find('_', from) - from);
}

}  // namespace

// The record's versions are the loaded libraries': Connext's core (libnddsc)
// and the Connector's, each as its file names its build, and the package.
TEST(Connext, VersionsAreTheLoadedLibraries) {
  const auto ad = make_adapter("connext");
  ASSERT_TRUE(ad);
  const std::string versions = ad->versions();
  const std::string connext = build_in_file("/libnddsc.so", "NDDSC_BUILD_");
  EXPECT_NE(versions.find("\"connext\":\"" + connext + "\""), std::string::npos) << versions << " vs " << connext;
  const std::string connector = build_in_file("/librtiddsconnector.so", "RTICONNECTOR_BUILD_");
  EXPECT_NE(versions.find("\"connector\":\"" + connector + "\""), std::string::npos) << versions << " vs " << connector;
  EXPECT_NE(versions.find("\"package\":\"rticonnextdds-connector 1."), std::string::npos) << versions;
  EXPECT_EQ(ad->version().rfind("Connext DDS " + connext + " (rticonnextdds-connector 1.", 0), 0u) << ad->version();
}
#endif
