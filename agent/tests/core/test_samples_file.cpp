#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/session.h"
#include "util/json.h"

using namespace mwperf;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// A link (or a file) planted where the samples go is replaced by the samples
// file; what it pointed to is never written.
TEST(SamplesFile, NeverWritesThroughALinkPlantedInItsPlace) {
  char dir[] = "/tmp/mwperf-samples-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string victim = std::string(dir) + "/victim", path = std::string(dir) + "/00000.i64";
  std::ofstream(victim) << "precious";
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
  LatencyStats stats(16);
  for (int i = 1; i <= 10; ++i) stats.add(i * 1000);
  Options o;
  o.samples_out = path;
  JsonObject j;
  write_samples(j, o, stats, 1);
  EXPECT_EQ(slurp(victim), "precious");
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(size_t(st.st_size), 10 * sizeof(int64_t));
  EXPECT_EQ(j.done().find("samples_error"), std::string::npos) << j.done();
  ::unlink(path.c_str());
  ::unlink(victim.c_str());
  ::rmdir(dir);
}

// A write that fails part-way (a full disk; here the file size limit, which
// fails writes past 40 bytes as a full disk does) leaves no truncated samples
// file behind, and says why.
TEST(SamplesFile, AFailedWriteLeavesNoTruncatedFile) {
  char dir[] = "/tmp/mwperf-samples-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/00000.i64";
  LatencyStats stats(16384);
  for (int i = 1; i <= 10000; ++i) stats.add(i * 1000);
  Options o;
  o.samples_out = path;
  JsonObject j;
  struct rlimit before {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  auto old = std::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead of the signal
  struct rlimit small = before;
  small.rlim_cur = 40;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  write_samples(j, o, stats, 1);
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old);
  const std::string json = j.done();
  struct stat st {};
  EXPECT_NE(::lstat(path.c_str(), &st), 0) << "a truncated samples file of " << st.st_size << " bytes is left";
  EXPECT_NE(json.find("samples_error"), std::string::npos) << json;
  EXPECT_EQ(json.find("samples_written"), std::string::npos) << json;
  ::unlink(path.c_str());
  ::rmdir(dir);
}
