#include "core/pair.h"

namespace mwperf {

Errc PairAdapter::listen(Receiver* r) {
  {
    std::lock_guard<std::mutex> lk(relay_.mu);
    relay_.to = r;
  }
  if (listening_) return Errc::ok;
  const Errc e = sync(inner_->listen(&relay_));
  listening_ = e == Errc::ok;
  return e;
}

void PairAdapter::detach() {
  std::lock_guard<std::mutex> lk(relay_.mu);  // waits for a delivery inside the receiver
  relay_.to = nullptr;
}

}  // namespace mwperf
