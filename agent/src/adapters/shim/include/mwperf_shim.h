/* mwperf_shim: C ABI of the Rust staticlib serving the zenoh and iceoryx2 adapters.
 * It only moves bytes; the C++ core does all timing and statistics.
 *
 * Streams: role PUB sends on "mwperf/<run_id>/data" and receives "mwperf/<run_id>/echo";
 *          role SUB the reverse (zenoh key expressions / iceoryx2 service names).
 * Errors are values (MWS_*); the text of the last failure on the calling thread is
 * mws_last_error(). Nothing here throws or aborts (Rust panics are caught -> MWS_IO).
 * Threads: one thread calls send/recv on a handle; mws_wake() may be called from any thread.
 */
#ifndef MWPERF_SHIM_H
#define MWPERF_SHIM_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

enum { MWS_OK = 0, MWS_TIMEOUT = 1, MWS_CLOSED = 2, MWS_TOO_BIG = 3, MWS_UNSUPPORTED = 4, MWS_IO = 5 };
enum { MWS_MW_ZENOH = 1, MWS_MW_ICEORYX2 = 2 };
enum { MWS_ROLE_PUB = 0, MWS_ROLE_SUB = 1 };
enum { MWS_CC_BLOCK = 0, MWS_CC_DROP = 1 };
enum { MWS_TRANSPORT_TCP = 0, MWS_TRANSPORT_SHM = 1 };
enum { MWS_WAIT_BLOCK = 0, MWS_WAIT_SPIN = 1 };
enum { MWS_SEND_COPY = 0, MWS_SEND_BORROW = 1 };
enum { MWS_FEATURE_ZENOH = 1, MWS_FEATURE_ICEORYX2 = 2, MWS_FEATURE_ZENOH_SHM = 4 };

/* Push receive: called on the middleware's own thread (zenoh RX task; iceoryx2: a thread
 * of the shim). `data` is READ-ONLY and valid only during the call: zenoh hands a slice of
 * its shared receive batch (or a scratch copy when the payload arrived fragmented),
 * iceoryx2 the publisher's shared-memory segment, mapped read-only in the subscriber. */
typedef void (*mws_on_message)(void* ctx, const uint8_t* data, size_t len);

typedef struct mws_config {
  uint32_t struct_size;      /* = sizeof(mws_config); checked against the library */
  int32_t middleware;        /* MWS_MW_* */
  int32_t role;              /* MWS_ROLE_* */
  int32_t reliable;          /* 1 reliable, 0 best effort (iceoryx2: safe overflow) */
  int32_t congestion;        /* MWS_CC_* (iceoryx2: backpressure retry / discard) */
  int32_t transport;         /* zenoh: MWS_TRANSPORT_TCP | _SHM (needs MWS_FEATURE_ZENOH_SHM); iceoryx2: ignored */
  int32_t wait_mode;         /* MWS_WAIT_*; iceoryx2 BLOCK creates an event listener (peer notifies) */
  int32_t express;           /* zenoh: 1 = express (no batching) */
  int32_t send_mode;         /* zenoh tcp: MWS_SEND_COPY | MWS_SEND_BORROW (zero-copy, see README) */
  uint32_t run_id;           /* part of every key / service name */
  uint64_t max_size;         /* largest message; iceoryx2 initial_max_slice_len (required) */
  uint32_t queue_depth;      /* receive queue (zenoh channel, iceoryx2 subscriber buffer); 0 = 16 */
  const char* listen;        /* zenoh: comma-separated "tcp/127.0.0.1:PORT"; only 127.x / [::1] accepted */
  const char* connect;       /* zenoh: idem */
  mws_on_message on_message; /* non-NULL: push mode (mws_recv then returns MWS_UNSUPPORTED) */
  void* on_message_ctx;
  /* zenoh: extra "key=json5value;key=json5value" applied before the fixed safety keys (peer
   * mode, scouting off, the endpoints above), e.g. "transport/unicast/lowlatency=true;
   * transport/unicast/qos/enabled=false". NULL/"" = none. */
  const char* zenoh_config;
  /* Subscribers the data stream serves (fan-out), both roles; 0 = 1. The publisher's
   * mws_wait_matched waits until this many are matched; iceoryx2 sizes its services by it
   * (a publisher's data segment holds a buffer for each subscriber it may serve). */
  uint32_t subscribers;
} mws_config;

typedef struct MwsHandle mws_handle; /* opaque */

uint32_t mws_features(void);
const char* mws_version(int32_t middleware);
const char* mws_last_error(void); /* thread-local, never NULL, valid until the next failing call;
                                    mws_recv's MWS_TIMEOUT leaves it unchanged (hot path) */

int32_t mws_open(const mws_config* cfg, mws_handle** out);
/* zenoh: our publisher has a matching subscriber; iceoryx2: our outbound service has a
 * subscriber and our inbound service a publisher. MWS_TIMEOUT when not within timeout. */
int32_t mws_wait_matched(mws_handle* h, int64_t timeout_ns);
int32_t mws_send(mws_handle* h, const uint8_t* data, size_t len);
/* Zero-copy send in two steps: mws_loan gives a writable buffer of len bytes lent by the
 * middleware (iceoryx2: a slice of the publisher's shared memory; zenoh shm: the SHM
 * provider's buffer; zenoh tcp: the buffer put() takes over), `from` copied in there; the
 * caller may change it, then mws_send_loaned(h, *out, len) sends it. One loan at a time:
 * a loan not sent is dropped by the next mws_loan or mws_close. mws_send is the two in one. */
int32_t mws_loan(mws_handle* h, const uint8_t* from, size_t len, uint8_t** out);
int32_t mws_send_loaned(mws_handle* h, uint8_t* buf, size_t len);
/* Pull receive. timeout_ns == 0 polls once; < 0 waits until a message or mws_wake();
 * > 0 waits at most that long. On MWS_OK (*data, *len) is a view valid until the next
 * mws_recv or mws_close on this handle. A wake makes it return MWS_TIMEOUT. */
int32_t mws_recv(mws_handle* h, const uint8_t** data, size_t* len, int64_t timeout_ns);
void mws_wake(mws_handle* h);         /* thread-safe; remembered if no wait is in progress */
const char* mws_info(mws_handle* h);  /* effective config + counters, JSON, valid until close */
const char* mws_stats(mws_handle* h); /* counters + config, JSON, thread-local buffer */
/* The data path each direction took so far, read live from the middleware's counters:
 * {"send":"shm|loan|copy|shm+copy|none","receive":...,"sent":N,"received":N,...}, JSON,
 * thread-local buffer (as mws_stats). */
const char* mws_data_path(mws_handle* h);
void mws_close(mws_handle* h); /* drops everything; NULL is fine */

/* iceoryx2: each run is its own iceoryx2 domain (files /dev/shm/mwp<run_id>_* and
 * /tmp/mwperf-iceoryx2/). Removes the resources of the domain's dead nodes (e.g. a
 * SIGKILLed agent) and, when no node is alive, its global segment and empty dirs.
 * mws_close does the same. Returns dead nodes cleaned, -1 without iceoryx2. */
int64_t mws_iceoryx2_cleanup(uint32_t run_id);
/* zenoh SHM: unlinks /dev/shm/<id>.zenoh segments of dead processes (safe at any time:
 * live segments hold an advisory lock). No-op without MWS_FEATURE_ZENOH_SHM. */
void mws_zenoh_cleanup_orphaned_shm(void);

/* zenoh's participant of a discovery point (core/discovery.h; adapters/zenoh/rust/src/discovery.rs):
 * a session opened with `config` ("key=json5value;..." applied on zenoh's defaults, in order),
 * one writer and one reader on each of `topics` topics of run `run_id`, the writer's one sample
 * carrying `index`. mws_disc_matched: the writers' liveliness tokens zenoh reports alive on this
 * participant's topics, summed (its own included). mws_disc_take: seen(ctx, topic, index the
 * sample carries) for each sample arrived since the last call. MWS_UNSUPPORTED without zenoh. */
typedef struct MwsDisc mws_disc; /* opaque */
typedef void (*mws_disc_seen)(void* ctx, uint32_t topic, uint32_t from);
int32_t mws_disc_open(const char* config, uint32_t run_id, uint32_t topics, uint32_t index, mws_disc** out);
uint64_t mws_disc_matched(mws_disc* d);
void mws_disc_take(mws_disc* d, mws_disc_seen seen, void* ctx);
void mws_disc_close(mws_disc* d); /* NULL is fine */

#ifdef __cplusplus
}
#endif
#endif
