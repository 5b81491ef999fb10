// Errors as values at the adapter boundary: every call that can fail returns
// an Errc and keeps the detail in a text the caller may read.
#pragma once

namespace mwperf {

enum class Errc {
  ok,
  timeout,      // nothing arrived within the timeout (or would block, timeout 0)
  closed,       // the peer closed the stream (stream transports)
  too_big,      // a message larger than the receive buffer was dropped
  unsupported,  // an option or size the middleware cannot honour
  io,           // any other failure
};

constexpr const char* to_string(Errc e) {
  switch (e) {
    case Errc::ok:
      return "ok";
    case Errc::timeout:
      return "timeout";
    case Errc::closed:
      return "closed";
    case Errc::too_big:
      return "too big";
    case Errc::unsupported:
      return "unsupported";
    case Errc::io:
      return "io error";
  }
  return "?";
}

}  // namespace mwperf
