// The floor's shared-memory ping-pong (core/floor.h). One anonymous shared
// mapping, made before the fork (so nothing is left in /dev/shm), holds two
// flags and two slots. A message: the sender copies it into its slot and
// publishes its sequence number in its flag; the receiver waits for the flag
// and reads the message where it lies (the peer echoes by copying it into
// the other slot). What a byte-payload middleware must do at least: one copy
// per direction and one wake-up.
//
// --wait block: the receiver sleeps on the flag's futex; the sender wakes it
// only when it said it sleeps (a Dekker pair of sequentially consistent
// stores and loads, so a wake-up is never lost and never made in vain).
// --wait spin: the receiver polls the flag.
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <new>
#include <vector>

#include "core/floor.h"
#include "util/clock.h"

namespace mwperf {

namespace {

struct alignas(64) Flag {
  std::atomic<uint32_t> seq{0};
  std::atomic<uint32_t> sleeping{0};
};
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "a futex word is 32 bits");

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word is shared between two processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

class ShmLink : public PingLink {
 public:
  ~ShmLink() override {
    if (map_ != MAP_FAILED) munmap(map_, map_len_);
  }
  const char* kind() const override { return "shm"; }
  const char* method() const override { return wait_ == WaitMode::spin ? "spin" : "futex"; }

  std::string open(size_t size, WaitMode wait, int64_t timeout_ns) override {
    size_ = size;
    wait_ = wait;
    timeout_ns_ = timeout_ns;
    timeout_ = timespec{time_t(timeout_ns / 1'000'000'000), long(timeout_ns % 1'000'000'000)};
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    slot_len_ = (size + page - 1) / page * page;
    map_len_ = page + 2 * slot_len_;
    map_ = mmap(nullptr, map_len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (map_ == MAP_FAILED) return "mmap of " + std::to_string(map_len_) + " shared bytes: " + std::strerror(errno);
    auto* base = static_cast<uint8_t*>(map_);
    flags_ = new (base) Flag[2];  // [0] to the peer, [1] back
    slot_[0] = base + page;
    slot_[1] = base + page + slot_len_;
    std::memset(slot_[0], 0, 2 * slot_len_);  // touched: no page fault in the timed loop
    out_.assign(size, 0x5a);
    return "";
  }

  void serve() override {
    for (uint32_t seq = 1;; ++seq) {
      while (!wait_for(flags_[0], seq)) {
      }  // the peer waits as long as it takes
      std::memcpy(slot_[1], slot_[0], size_);
      publish(flags_[1], seq);
    }
  }

  std::string ping(uint64_t seq) override {
    std::memcpy(out_.data(), &seq, sizeof seq < size_ ? sizeof seq : size_);
    std::memcpy(slot_[0], out_.data(), size_);
    publish(flags_[0], uint32_t(seq));
    if (!wait_for(flags_[1], uint32_t(seq))) return no_answer(timeout_ns_);
    if (size_ >= sizeof seq && std::memcmp(slot_[1], &seq, sizeof seq) != 0)
      return "answered with another message than the one sent";
    return "";
  }

 private:
  void publish(Flag& f, uint32_t seq) {
    f.seq.store(seq, std::memory_order_seq_cst);
    if (wait_ == WaitMode::block && f.sleeping.load(std::memory_order_seq_cst) != 0)
      futex(&f.seq, FUTEX_WAKE, 1, nullptr);
  }

  // true once f says seq; false after the timeout.
  bool wait_for(Flag& f, uint32_t seq) {
    if (wait_ == WaitMode::spin) {
      uint32_t spins = 0;
      int64_t deadline = 0;
      while (f.seq.load(std::memory_order_acquire) != seq) {
        cpu_relax();
        if ((++spins % kSpinsPerClockRead) != 0) continue;
        const int64_t t = now_ns();
        if (deadline == 0)
          deadline = t + timeout_ns_;
        else if (t > deadline)
          return false;
      }
      return true;
    }
    while (f.seq.load(std::memory_order_acquire) != seq) {
      f.sleeping.store(1, std::memory_order_seq_cst);
      const uint32_t now = f.seq.load(std::memory_order_seq_cst);
      const bool timed_out = now != seq && futex(&f.seq, FUTEX_WAIT, now, &timeout_) != 0 && errno == ETIMEDOUT;
      f.sleeping.store(0, std::memory_order_relaxed);
      if (timed_out) return false;
    }
    return true;
  }

  size_t size_ = 0, slot_len_ = 0, map_len_ = 0;
  WaitMode wait_ = WaitMode::block;
  int64_t timeout_ns_ = 0;
  timespec timeout_{};
  void* map_ = MAP_FAILED;
  Flag* flags_ = nullptr;
  uint8_t* slot_[2] = {nullptr, nullptr};
  std::vector<uint8_t> out_;
};

}  // namespace

std::unique_ptr<PingLink> make_shm_link() { return std::make_unique<ShmLink>(); }

}  // namespace mwperf
