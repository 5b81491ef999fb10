// --samples-out: the headline latency samples of a point, for the report's
// histogram and time series and for compare's significance test. Written once,
// after the measured phase, never from the hot loop.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/session.h"

namespace mwperf {

void write_samples(JsonObject& j, const Options& o, const LatencyStats& s, int64_t divisor) {
  if (o.samples_out.empty()) return;
  // A new file, never written through a link or another name of an existing
  // file planted in the run directory: what was there is removed first.
  if (::unlink(o.samples_out.c_str()) != 0 && errno != ENOENT) {
    j.str("samples_error", "cannot write " + o.samples_out + ": " + std::strerror(errno));
    return;
  }
  const int fd = ::open(o.samples_out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  std::FILE* f = fd < 0 ? nullptr : ::fdopen(fd, "wb");
  if (f == nullptr) {
    j.str("samples_error", "cannot write " + o.samples_out + ": " + std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return;
  }
  const size_t n = s.write_samples(f, divisor);
  const bool written = std::ferror(f) == 0;
  int error = written ? 0 : errno;
  if (std::fclose(f) != 0 && error == 0) error = errno ? errno : EIO;
  if (error != 0) {  // a full disk: no samples file rather than a truncated one
    ::unlink(o.samples_out.c_str());
    j.str("samples_error", "cannot write " + o.samples_out + ": " + std::strerror(error));
    return;
  }
  j.unum("samples_written", n).boolean("samples_time_ordered", true);
}

}  // namespace mwperf
