//! zenoh backend: peer mode, no scouting, explicit tcp/<address>:<port> endpoints only.
pub mod discovery; // the discovery mode's participant
use mwperf_shim_api::*;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::time::{Duration, Instant};
use zenoh::bytes::ZBytes;
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::{Publisher, Subscriber};
use zenoh::qos::{CongestionControl, Reliability};
use zenoh::sample::Sample;
use zenoh::{Config, Session, Wait};

#[cfg(feature = "shm")]
use zenoh::shm::{BlockOn, GarbageCollect, PosixShmProviderBackend, ShmProvider, ShmProviderBuilder, ZShmMut};

/// mws_loan's until mws_send_loaned: the SHM provider's buffer, or (tcp) the Vec put() takes over.
enum Loan {
    None,
    Bytes(Vec<u8>),
    #[cfg(feature = "shm")]
    Shm(ZShmMut),
}
enum Msg {
    S(Sample),
    Wake,
}

struct ZWaker {
    flag: AtomicBool,
    tx: Option<SyncSender<Msg>>,
}
impl Waker for ZWaker {
    fn wake(&self) {
        self.flag.store(true, Ordering::Release);
        if let Some(tx) = &self.tx {
            let _ = tx.try_send(Msg::Wake); // full queue: the receiver is not blocked
        }
    }
}

/// Owner handed to bytes::Bytes::from_owner for the borrow send mode; its drop tells
/// send() that zenoh no longer references the caller's buffer.
struct Borrowed {
    ptr: *const u8,
    len: usize,
    released: Arc<AtomicBool>,
}
unsafe impl Send for Borrowed {}
impl AsRef<[u8]> for Borrowed {
    fn as_ref(&self) -> &[u8] {
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}
impl Drop for Borrowed {
    fn drop(&mut self) {
        self.released.store(true, Ordering::Release);
    }
}

#[derive(Default)]
struct Counters {
    noncontig: AtomicU64,
    borrow_waits: AtomicU64,
    received: AtomicU64,
    shm_rx: AtomicU64, // payloads that arrived as zenoh SHM buffers
    sent: AtomicU64,
    shm_tx: AtomicU64, // payloads put as zenoh SHM buffers
}

pub struct Zen {
    cfg: Cfg,
    publisher: Publisher<'static>,
    _subscriber: Subscriber<()>,
    rx: Option<Receiver<Msg>>,
    waker: Arc<ZWaker>,
    current: Option<Sample>,
    loaned: Loan,
    scratch: Vec<u8>,
    released: Arc<AtomicBool>,
    counters: Arc<Counters>,
    #[cfg(feature = "shm")]
    shm: Option<ShmProvider<PosixShmProviderBackend>>,
    info: String,
    present_key: String,
    _present: Option<LivelinessToken>, // a subscriber's: declared after its subscriber
    session: Session,                  // dropped last
}

fn endpoints_json(v: &[String]) -> Res<String> {
    for e in v {
        // Only an explicit address the caller chose (loopback on one host, a
        // namespace's own veth address across a link): never a wildcard or a name.
        let addr = e.strip_prefix("tcp/").and_then(|a| a.rsplit_once(':')).map(|(h, _)| h);
        let explicit = match addr {
            Some(h) => h.trim_matches(|c| c == '[' || c == ']').parse::<std::net::IpAddr>().map_or(false, |ip| !ip.is_unspecified()),
            None => false,
        };
        if !explicit {
            return err(MWS_UNSUPPORTED, format!("zenoh endpoint '{e}' refused: only tcp/<address>:<port> with an explicit address"));
        }
    }
    Ok(format!("[{}]", v.iter().map(|e| format!("\"{e}\"")).collect::<Vec<_>>().join(",")))
}

fn build_config(cfg: &Cfg) -> Res<Config> {
    let mut c = Config::default();
    // user tuning first (e.g. transport/unicast/lowlatency=true); the safety keys below win
    for (k, v) in &cfg.zenoh_config {
        c.insert_json5(k, v).map_err(io(&format!("zenoh config {k}={v}")))?;
    }
    let listen = endpoints_json(&cfg.listen)?;
    let connect = endpoints_json(&cfg.connect)?;
    let kv: Vec<(&str, String)> = vec![
        ("mode", "\"peer\"".into()),
        ("scouting/multicast/enabled", "false".into()),
        ("scouting/gossip/enabled", "false".into()),
        ("listen/endpoints", listen),
        ("connect/endpoints", connect),
        ("timestamping/enabled", "false".into()),
        ("transport/shared_memory/enabled", if cfg.shm { "true" } else { "false" }.into()),
        // so a 16 MiB payload also fits the implicit SHM pool
        (
            "transport/shared_memory/transport_optimization/pool_size",
            format!("{}", (cfg.max_size * 4).max(16 << 20)),
        ),
    ];
    for (k, v) in kv {
        c.insert_json5(k, &v).map_err(io(&format!("zenoh config {k}={v}")))?;
    }
    Ok(c)
}

pub fn open(cfg: Cfg) -> Res<(Box<dyn Backend>, Arc<dyn Waker>)> {
    if cfg.listen.is_empty() && cfg.connect.is_empty() {
        return err(MWS_IO, "zenoh: give at least one listen or connect endpoint (tcp/127.0.0.1:PORT)");
    }
    #[cfg(not(feature = "shm"))]
    if cfg.shm {
        return err(MWS_UNSUPPORTED, "zenoh transport shm: mwperf_shim built without feature zenoh-shm");
    }
    let config = build_config(&cfg)?;
    let session = zenoh::open(config).wait().map_err(io("zenoh::open"))?;
    let out_key = format!("mwperf/{}/{}", cfg.run_id, cfg.out_topic());
    let in_key = format!("mwperf/{}/{}", cfg.run_id, cfg.in_topic());

    let publisher = session
        .declare_publisher(out_key.clone())
        .congestion_control(if cfg.block { CongestionControl::Block } else { CongestionControl::Drop })
        .express(cfg.express)
        .reliability(if cfg.reliable { Reliability::Reliable } else { Reliability::BestEffort })
        .wait()
        .map_err(io("zenoh declare_publisher"))?;

    let counters = Arc::new(Counters::default());
    let (subscriber, rx, waker) = if let Some(cb) = cfg.on_message {
        // push: callback on zenoh's RX thread; copy into a per-subscriber scratch only
        // when the payload is fragmented (not contiguous).
        let ctx = cfg.ctx;
        let cnt = counters.clone();
        let mut scratch: Vec<u8> = Vec::with_capacity(cfg.max_size);
        let sub = session
            .declare_subscriber(in_key.clone())
            .callback_mut(move |s: Sample| {
                cnt.received.fetch_add(1, Ordering::Relaxed);
                let zb = s.payload();
                let (p, l) = contiguous(zb, &mut scratch, &cnt);
                unsafe { cb(ctx as *mut c_void, p, l) };
            })
            .wait()
            .map_err(io("zenoh declare_subscriber"))?;
        (sub, None, Arc::new(ZWaker { flag: AtomicBool::new(false), tx: None }))
    } else {
        let (tx, rx) = sync_channel::<Msg>(cfg.queue_depth.max(1));
        let tx2 = tx.clone();
        let sub = session
            .declare_subscriber(in_key.clone())
            .callback(move |s: Sample| {
                let _ = tx2.send(Msg::S(s)); // blocks the RX thread when full: backpressure
            })
            .wait()
            .map_err(io("zenoh declare_subscriber"))?;
        (sub, Some(rx), Arc::new(ZWaker { flag: AtomicBool::new(false), tx: Some(tx) }))
    };

    // A subscriber says it is there once its subscriber is declared (declarations reach a
    // peer in order): the publisher counts these tokens, as zenoh's matching status only
    // tells whether there is any subscriber.
    let present_key = format!("mwperf/{}/present", cfg.run_id);
    let present = if cfg.is_pub {
        None
    } else {
        let zid = session.zid();
        Some(session.liveliness().declare_token(format!("{present_key}/{zid}")).wait().map_err(io("zenoh liveliness token"))?)
    };

    #[cfg(feature = "shm")]
    let shm = if cfg.shm {
        let pool = (cfg.max_size * 8).max(32 << 20);
        Some(ShmProviderBuilder::default_backend(pool).wait().map_err(io("zenoh shm provider"))?)
    } else {
        None
    };

    let info = format!(
        "{{\"middleware\":\"zenoh\",\"version\":\"1.10.2\",\"mode\":\"peer\",\"out\":\"{out_key}\",\"in\":\"{in_key}\",\
         \"listen\":{:?},\"connect\":{:?},\"reliability\":\"{}\",\"congestion\":\"{}\",\"express\":{},\
         \"transport\":\"{}\",\"send_mode\":\"{}\",\"receive\":\"{}\",\"queue_depth\":{},\"extra\":{:?}}}",
        cfg.listen,
        cfg.connect,
        if cfg.reliable { "reliable" } else { "best-effort" },
        if cfg.block { "block" } else { "drop" },
        cfg.express,
        if cfg.shm { "shm" } else { "tcp" },
        if cfg.shm { "shm-alloc+copy" } else if cfg.borrow { "borrow" } else { "copy" },
        if cfg.on_message.is_some() { "callback" } else { "channel" },
        cfg.queue_depth,
        cfg.zenoh_config.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(";")
    );
    let b = Zen {
        scratch: Vec::with_capacity(cfg.max_size),
        cfg,
        publisher,
        _subscriber: subscriber,
        rx,
        waker: waker.clone(),
        current: None,
        loaned: Loan::None,
        released: Arc::new(AtomicBool::new(true)),
        counters,
        #[cfg(feature = "shm")]
        shm,
        info,
        present_key,
        _present: present,
        session,
    };
    Ok((Box::new(b), waker))
}

/// Pointer to the payload bytes: the single slice when contiguous, else a copy in scratch.
fn contiguous(zb: &ZBytes, scratch: &mut Vec<u8>, cnt: &Counters) -> (*const u8, usize) {
    #[cfg(feature = "shm")]
    if zb.as_shm().is_some() {
        cnt.shm_rx.fetch_add(1, Ordering::Relaxed);
    }
    let mut it = zb.slices();
    match (it.next(), it.next()) {
        (None, _) => (std::ptr::NonNull::<u8>::dangling().as_ptr(), 0),
        (Some(f), None) => (f.as_ptr(), f.len()),
        _ => {
            cnt.noncontig.fetch_add(1, Ordering::Relaxed);
            scratch.clear();
            for s in zb.slices() {
                scratch.extend_from_slice(s);
            }
            (scratch.as_ptr(), scratch.len())
        }
    }
}

impl Backend for Zen {
    fn wait_matched(&mut self, timeout_ns: i64) -> Res<()> {
        let deadline = Instant::now() + Duration::from_nanos(timeout_ns.max(0) as u64);
        loop {
            let m = self.publisher.matching_status().wait().map_err(io("zenoh matching_status"))?;
            let present = if self.cfg.is_pub && m.matching() { self.present()? } else { 0 };
            if m.matching() && (!self.cfg.is_pub || present >= self.cfg.subscribers) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return if self.cfg.is_pub {
                    err(MWS_TIMEOUT, format!("zenoh: {present} of {} subscriber(s) matched", self.cfg.subscribers))
                } else {
                    err(MWS_TIMEOUT, "zenoh: no matching subscriber")
                };
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn send(&mut self, data: &[u8]) -> Res<()> {
        if !self.cfg.borrow || self.cfg.shm {
            let p = self.loan(data)?;
            return self.send_loaned(p, data.len());
        }
        self.counters.sent.fetch_add(1, Ordering::Relaxed);
        // zero-copy: zenoh serializes into its batch inside put(); we wait until it
        // dropped its last reference so the caller's buffer may be reused at once.
        self.released.store(false, Ordering::Relaxed);
        let owner = Borrowed { ptr: data.as_ptr(), len: data.len(), released: self.released.clone() };
        let r = self.publisher.put(bytes::Bytes::from_owner(owner)).wait();
        let mut spins = 0u64;
        while !self.released.load(Ordering::Acquire) {
            spins += 1;
            if spins > 64 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        if spins > 0 {
            self.counters.borrow_waits.fetch_add(1, Ordering::Relaxed);
        }
        r.map_err(io("zenoh put (borrow)"))
    }

    fn loan(&mut self, from: &[u8]) -> Res<*mut u8> {
        self.loaned = Loan::None;
        #[cfg(feature = "shm")]
        if let (Some(p), false) = (&self.shm, from.is_empty()) {
            let mut buf = p
                .alloc(from.len())
                .with_policy::<BlockOn<GarbageCollect>>()
                .wait()
                .map_err(io("zenoh shm alloc"))?;
            buf[..from.len()].copy_from_slice(from);
            let at = buf.as_mut_ptr();
            self.loaned = Loan::Shm(buf);
            return Ok(at);
        }
        let mut v = from.to_vec();
        let at = v.as_mut_ptr();
        self.loaned = Loan::Bytes(v);
        Ok(at)
    }

    fn send_loaned(&mut self, buf: *const u8, len: usize) -> Res<()> {
        let bytes: ZBytes = match std::mem::replace(&mut self.loaned, Loan::None) {
            Loan::Bytes(v) if v.as_ptr() == buf && v.len() == len => v.into(),
            #[cfg(feature = "shm")]
            Loan::Shm(b) if b.as_ptr() == buf && len > 0 => {
                self.counters.shm_tx.fetch_add(1, Ordering::Relaxed);
                b.into()
            }
            _ => return err(MWS_IO, "zenoh: send_loaned of a buffer that is not the loan held"),
        };
        self.counters.sent.fetch_add(1, Ordering::Relaxed);
        self.publisher.put(bytes).wait().map_err(io("zenoh put"))
    }

    fn recv(&mut self, timeout_ns: i64) -> Res<(*const u8, usize)> {
        let Some(rx) = &self.rx else {
            return err(MWS_UNSUPPORTED, "zenoh: recv() on a handle opened with on_message (push mode)");
        };
        self.current = None;
        let deadline = if timeout_ns > 0 { Some(Instant::now() + Duration::from_nanos(timeout_ns as u64)) } else { None };
        loop {
            if self.waker.flag.swap(false, Ordering::AcqRel) {
                return err(MWS_TIMEOUT, "woken");
            }
            let m = if timeout_ns == 0 {
                match rx.try_recv() {
                    Ok(m) => m,
                    Err(TryRecvError::Empty) => return err(MWS_TIMEOUT, "timeout"),
                    Err(TryRecvError::Disconnected) => return err(MWS_CLOSED, "zenoh subscriber closed"),
                }
            } else if let Some(d) = deadline {
                match rx.recv_timeout(d.saturating_duration_since(Instant::now())) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => return err(MWS_TIMEOUT, "timeout"),
                    Err(RecvTimeoutError::Disconnected) => return err(MWS_CLOSED, "zenoh subscriber closed"),
                }
            } else {
                rx.recv().map_err(|_| Error { code: MWS_CLOSED, msg: "zenoh subscriber closed".into() })?
            };
            match m {
                Msg::Wake => continue, // the flag decides (a stale Wake is ignored)
                Msg::S(s) => {
                    self.counters.received.fetch_add(1, Ordering::Relaxed);
                    let r = contiguous(s.payload(), &mut self.scratch, &self.counters);
                    self.current = Some(s); // keeps the view alive until the next recv
                    return Ok(r);
                }
            }
        }
    }

    /// What each side's payloads went through, from zenoh's own buffers: a payload put from
    /// an SHM provider's buffer, or received as one (`ZBytes::as_shm`), went by shared memory;
    /// anything else was copied (over TCP, or as zenoh's fall-back when a peer cannot map it).
    fn data_path(&self) -> String {
        let c = &self.counters;
        let (sent, shm_tx) = (c.sent.load(Ordering::Relaxed), c.shm_tx.load(Ordering::Relaxed));
        let (received, shm_rx) = (c.received.load(Ordering::Relaxed), c.shm_rx.load(Ordering::Relaxed));
        let path = |shm: u64, all: u64| if all == 0 { "none" } else if shm == all { "shm" } else if shm == 0 { "copy" } else { "shm+copy" };
        format!(
            "{{\"source\":\"zenoh ZBytes::as_shm (received), SHM provider (sent)\",\"send\":\"{}\",\"receive\":\"{}\",\
             \"sent\":{sent},\"sent_shm\":{shm_tx},\"received\":{received},\"received_shm\":{shm_rx}}}",
            path(shm_tx, sent),
            path(shm_rx, received)
        )
    }

    fn info(&self) -> String {
        format!(
            "{{\"received\":{},\"shm_rx\":{},\"noncontiguous\":{},\"borrow_waits\":{},\"config\":{}}}",
            self.counters.received.load(Ordering::Relaxed),
            self.counters.shm_rx.load(Ordering::Relaxed),
            self.counters.noncontig.load(Ordering::Relaxed),
            self.counters.borrow_waits.load(Ordering::Relaxed),
            self.info
        )
    }
}

impl Zen {
    /// Subscribers whose presence token this publisher sees now.
    fn present(&self) -> Res<usize> {
        let replies = self
            .session
            .liveliness()
            .get(format!("{}/*", self.present_key))
            .timeout(Duration::from_millis(200))
            .wait()
            .map_err(io("zenoh liveliness get"))?;
        let mut n = 0;
        while let Ok(reply) = replies.recv() {
            n += usize::from(reply.result().is_ok());
        }
        Ok(n)
    }
}

impl Drop for Zen {
    fn drop(&mut self) {
        (self.current, self.loaned) = (None, Loan::None); // a loan not sent goes back before the provider
        self.rx = None; // a callback blocked on a full queue returns (disconnected)
        // undeclare before closing the session so the RX callback is gone
        let _ = self.session.close().wait();
        // zenoh leaves /dev/shm/<id>.zenoh behind even after a clean exit of both processes.
        // This removes only segments no live process holds; our own and the peer's that we
        // mapped stay locked until we exit, so the controller MUST call
        // mws_zenoh_cleanup_orphaned_shm() from another process after both agents exited.
        #[cfg(feature = "shm")]
        if self.cfg.shm {
            self.shm = None;
            zenoh::shm::cleanup_orphaned_shm_segments();
        }
    }
}

/// Unlinks /dev/shm/*.zenoh segments whose owner process is gone (zenoh keeps a shared
/// advisory lock on each live segment). No-op without feature shm.
pub fn cleanup_orphaned_shm() {
    #[cfg(feature = "shm")]
    zenoh::shm::cleanup_orphaned_shm_segments();
}
