//! iceoryx2 backend: ipc::Service, slice pub/sub ([u8]) + an event service for blocking waits.
mod iox_services;

use mwperf_shim_api::*;
use std::ffi::c_void;
use std::sync::Arc;
use iceoryx2::port::listener::Listener;
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::port::update_connections::UpdateConnections;
use iceoryx2::port::{BackpressureAction, BackpressureInfo, SendError};
use iceoryx2::prelude::*;
use iceoryx2::sample::Sample;
use iceoryx2::sample_mut::SampleMut;
use iceoryx2::service::port_factory::{event as evpf, publish_subscribe as pspf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::iox_services::*;

struct IWaker {
    flag: AtomicBool,
    efd: i32,
}
impl Waker for IWaker {
    fn wake(&self) {
        self.flag.store(true, Ordering::Release);
        let one: u64 = 1;
        unsafe { libc::write(self.efd, &one as *const u64 as *const c_void, 8) };
    }
}
impl Drop for IWaker {
    fn drop(&mut self) {
        unsafe { libc::close(self.efd) };
    }
}
impl IWaker {
    fn drain(&self) {
        let mut v: u64 = 0;
        unsafe { libc::read(self.efd, &mut v as *mut u64 as *mut c_void, 8) };
    }
}

/// Inbound side: subscriber (+ listener when blocking). Owned by the recv thread
/// (ipc::Service ports are !Send, so push mode builds its own in its thread).
struct Inbound {
    _node: Node<S>,
    _svc: pspf::PortFactory<S, [u8], ()>,
    _ev: Option<evpf::PortFactory<S>>,
    sub: Subscriber<S, [u8], ()>,
    listener: Option<Listener<S>>,
    lfd: i32,
}


fn make_inbound(cfg: &Cfg) -> Res<Inbound> {
    let node = node(cfg)?;
    let (_, _, inn, inn_ev) = names(cfg);
    let svc = open_pubsub(&node, &inn, cfg)?;
    // listener before subscriber: once the peer sees our subscriber, our listener exists
    let (ev, listener, lfd) = if cfg.spin {
        (None, None, -1)
    } else {
        let ev = open_event(&node, &inn_ev, cfg)?;
        let l = ev.listener_builder().create().map_err(io("iceoryx2 listener"))?;
        let fd = unsafe { l.file_descriptor().native_handle() };
        (Some(ev), Some(l), fd)
    };
    let sub = svc.subscriber_builder().buffer_size(cfg.queue_depth).create().map_err(io("iceoryx2 subscriber"))?;
    Ok(Inbound { _node: node, _svc: svc, _ev: ev, sub, listener, lfd })
}

enum Wait {
    Ready,
    Woken,
    TimedOut,
}

/// Waits until the listener fd or the wake eventfd is readable (or the timeout).
///
/// The listener is asked first, without blocking: iceoryx2's event skips the socket write
/// while an earlier notification is still marked pending, and that mark can outlive the
/// datagram it stood for (a notify between the listener's reset of the mark and its emptying
/// of the socket). A ppoll on the socket alone then sleeps through every later sample, while
/// a reliable writer waits for the space this reader never frees (a lost wake-up). try_wait
/// clears the mark (later notifies write again) and reports what came since.
fn block_wait(inb: &Inbound, w: &IWaker, timeout_ns: i64) -> Res<Wait> {
    if let Some(l) = &inb.listener {
        if l.try_wait(|_| {}).map_err(io("iceoryx2 listener try_wait"))? > 0 {
            return Ok(Wait::Ready);
        }
    }
    let mut fds = [
        libc::pollfd { fd: inb.lfd, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: w.efd, events: libc::POLLIN, revents: 0 },
    ];
    let ts;
    let tsp = if timeout_ns < 0 {
        std::ptr::null()
    } else {
        ts = libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as _, tv_nsec: (timeout_ns % 1_000_000_000) as _ };
        &ts as *const libc::timespec
    };
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, tsp, std::ptr::null()) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(Wait::Ready);
        }
        return err(MWS_IO, format!("ppoll: {e}"));
    }
    if r == 0 {
        return Ok(Wait::TimedOut);
    }
    if fds[0].revents != 0 {
        if let Some(l) = &inb.listener {
            l.try_wait(|_| {}).map_err(io("iceoryx2 listener try_wait"))?;
        }
    }
    if fds[1].revents != 0 {
        w.drain();
        return Ok(Wait::Woken);
    }
    Ok(Wait::Ready)
}

pub struct Iox {
    cfg: Cfg,
    _node: Node<S>,
    out_svc: pspf::PortFactory<S, [u8], ()>,
    in_svc: pspf::PortFactory<S, [u8], ()>,
    out_ev: evpf::PortFactory<S>,
    publisher: Publisher<S, [u8], ()>,
    notifier: Notifier<S>,
    current: Option<Sample<S, [u8], ()>>,
    loaned: Option<SampleMut<S, [u8], ()>>, // mws_loan's slice until mws_send_loaned
    inbound: Option<Inbound>,
    waker: Arc<IWaker>,
    push: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
    sent: u64,
    received: Arc<AtomicU64>, // samples taken in place (pull and push)
    notified: Arc<AtomicU64>,
    info: String,
    _cleanup: DomainCleanup, // last: runs after every port and the node are gone
}

/// How long a reliable send retries a full reader buffer before it gives up (counted as a send timeout).
const MAX_BLOCKING: Duration = Duration::from_millis(100);

pub fn open(cfg: Cfg) -> Res<(Box<dyn Backend>, Arc<dyn Waker>)> {
    if !cfg.connect.is_empty() || !cfg.listen.is_empty() {
        // endpoints are meaningless for iceoryx2 (shared memory only); accepted and ignored
    }
    if cfg.max_size == 0 {
        return err(MWS_IO, "iceoryx2: max_size must be set (initial_max_slice_len)");
    }
    iceoryx2::prelude::set_log_level_from_env_or(LogLevel::Error);
    let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if efd < 0 {
        return err(MWS_IO, format!("eventfd: {}", std::io::Error::last_os_error()));
    }
    let waker = Arc::new(IWaker { flag: AtomicBool::new(false), efd });
    let run_id = cfg.run_id;
    let node = node(&cfg)?;
    let (out, out_ev_name, inn, _) = names(&cfg);

    // inbound first (listener + subscriber), so the peer's wait_matched implies our listener
    let received = Arc::new(AtomicU64::new(0));
    let (inbound, push) = if let Some(cb) = cfg.on_message {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel::<Result<(), Error>>();
        let (c2, s2, w2, r2) = (cfg.clone(), stop.clone(), waker.clone(), received.clone());
        let th = std::thread::Builder::new()
            .name("mws-iox2-rx".into())
            .spawn(move || {
                let inb = match make_inbound(&c2) {
                    Ok(i) => {
                        let _ = tx.send(Ok(()));
                        i
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                let mut failed = false;
                while !s2.load(Ordering::Acquire) {
                    match inb.sub.receive() {
                        Ok(Some(s)) => unsafe {
                            r2.fetch_add(1, Ordering::Relaxed);
                            let p = s.payload();
                            cb(c2.ctx as *mut c_void, p.as_ptr(), p.len());
                        },
                        Ok(None) => {
                            if c2.spin {
                                std::hint::spin_loop();
                            } else {
                                let _ = block_wait(&inb, &w2, 100_000_000);
                            }
                        }
                        Err(e) => {
                            // Said, not swallowed; and tried again: a reader that stopped for good
                            // would hold a reliable writer until its blocking time, every send.
                            if !failed {
                                eprintln!("mwperf-agent: iceoryx2 receive failed: {e:?} (retrying)");
                                failed = true;
                            }
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                }
            })
            .map_err(io("spawn"))?;
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = th.join();
                return Err(e);
            }
            Err(_) => return err(MWS_IO, "iceoryx2 receive thread died"),
        }
        (None, Some((stop, th)))
    } else {
        (Some(make_inbound(&cfg)?), None)
    };

    let out_svc = open_pubsub(&node, &out, &cfg)?;
    let in_svc = open_pubsub(&node, &inn, &cfg)?;
    let out_ev = open_event(&node, &out_ev_name, &cfg)?;
    let notifier = out_ev.notifier_builder().create().map_err(io("iceoryx2 notifier"))?;
    let mut builder = out_svc
        .publisher_builder()
        .initial_max_slice_len(cfg.max_size)
        .allocation_strategy(AllocationStrategy::Static)
        .max_loaned_samples(1)
        .backpressure_strategy(if cfg.block { BackpressureStrategy::RetryUntilDelivered } else { BackpressureStrategy::DiscardData });
    if cfg.block {
        // Retry, but not for ever: a reader that stopped taking would hold the writer (and
        // the point) for good. Like DDS's max_blocking_time, the send fails after it.
        builder = builder.set_backpressure_handler(|i: &BackpressureInfo| {
            if i.elapsed_time >= MAX_BLOCKING {
                BackpressureAction::DiscardDataAndFail
            } else {
                BackpressureAction::Retry
            }
        });
    }
    let publisher = builder.create().map_err(io("iceoryx2 publisher"))?;

    let info = format!(
        "{{\"middleware\":\"iceoryx2\",\"version\":\"0.10.0\",\"out\":\"{out}\",\"in\":\"{inn}\",\"reliability\":\"{}\",\
         \"backpressure\":\"{}\",\"max_blocking_ms\":{},\"max_slice_len\":{},\"subscriber_buffer\":{},\"max_subscribers\":{},\"wait\":\"{}\",\"receive\":\"{}\"}}",
        if cfg.reliable { "reliable (no safe overflow)" } else { "best-effort (safe overflow)" },
        if cfg.block { "retry-until-delivered" } else { "discard" },
        if cfg.block { MAX_BLOCKING.as_millis() as i64 } else { 0 },
        cfg.max_size,
        cfg.queue_depth,
        cfg.subscribers,
        if cfg.spin { "spin" } else { "event-listener" },
        if cfg.on_message.is_some() { "callback-thread" } else { "pull" },
    );
    let b = Iox {
        cfg,
        _node: node,
        out_svc,
        in_svc,
        out_ev,
        publisher,
        notifier,
        current: None,
        loaned: None,
        inbound,
        waker: waker.clone(),
        push,
        sent: 0,
        received,
        notified: Arc::new(AtomicU64::new(0)),
        info,
        _cleanup: DomainCleanup::new(run_id),
    };
    Ok((Box::new(b), waker))
}

impl Backend for Iox {
    fn wait_matched(&mut self, timeout_ns: i64) -> Res<()> {
        let deadline = Instant::now() + Duration::from_nanos(timeout_ns.max(0) as u64);
        loop {
            let subs = self.out_svc.dynamic_config().number_of_subscribers();
            let pubs = self.in_svc.dynamic_config().number_of_publishers();
            // Connect our ports now: a publisher silently DROPS samples once the buffer of a
            // subscriber that has not connected yet is full (NoConnectedReceiverAndBufferIsFull),
            // whatever the backpressure strategy. receive() would connect too, but too late.
            self.publisher.update_connections().map_err(io("iceoryx2 publisher update_connections"))?;
            if let Some(inb) = &self.inbound {
                inb.sub.update_connections().map_err(io("iceoryx2 subscriber update_connections"))?;
            }
            // a publisher waits for every subscriber it serves; a subscriber for the publisher's echo reader
            let wanted = if self.cfg.is_pub { self.cfg.subscribers } else { 1 };
            if subs >= wanted && pubs >= 1 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return err(MWS_TIMEOUT, format!("iceoryx2: subscribers {subs} of {wanted}, publishers {pubs}"));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn send(&mut self, data: &[u8]) -> Res<()> {
        let s = self.loan_slice(data)?;
        self.deliver(s)
    }

    fn loan(&mut self, from: &[u8]) -> Res<*mut u8> {
        self.loaned = None; // a loan never sent goes back first (max_loaned_samples 1)
        let mut s = self.loan_slice(from)?;
        let p = s.payload_mut().as_mut_ptr();
        self.loaned = Some(s);
        Ok(p)
    }

    fn send_loaned(&mut self, buf: *const u8, len: usize) -> Res<()> {
        match self.loaned.take() {
            Some(s) if s.payload().as_ptr() == buf && s.payload().len() == len => self.deliver(s),
            _ => err(MWS_IO, "iceoryx2: send_loaned of a buffer that is not the loan held"),
        }
    }

    fn recv(&mut self, timeout_ns: i64) -> Res<(*const u8, usize)> {
        self.current = None; // returns the previous sample to the publisher
        let Some(inb) = &self.inbound else {
            return err(MWS_UNSUPPORTED, "iceoryx2: recv() on a handle opened with on_message (push mode)");
        };
        let start = Instant::now();
        loop {
            if self.waker.flag.swap(false, Ordering::AcqRel) {
                self.waker.drain();
                return err(MWS_TIMEOUT, "woken");
            }
            if let Some(s) = inb.sub.receive().map_err(io("iceoryx2 receive"))? {
                let p = s.payload();
                let r = (p.as_ptr(), p.len());
                self.received.fetch_add(1, Ordering::Relaxed);
                self.current = Some(s);
                return Ok(r);
            }
            if timeout_ns == 0 {
                return err(MWS_TIMEOUT, "timeout");
            }
            let left = if timeout_ns < 0 { -1 } else { timeout_ns - start.elapsed().as_nanos() as i64 };
            if timeout_ns > 0 && left <= 0 {
                return err(MWS_TIMEOUT, "timeout");
            }
            if inb.listener.is_some() {
                if let Wait::TimedOut = block_wait(inb, &self.waker, left)? {
                    return err(MWS_TIMEOUT, "timeout");
                }
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// iceoryx2 moves every sample by loan: the writer loans a slice of its shared memory
    /// (the core's bytes are copied in), the reader reads it where the writer put it.
    fn data_path(&self) -> String {
        format!(
            "{{\"source\":\"iceoryx2 Publisher::loan_slice_uninit (sent), Subscriber::receive in place (received)\",\
             \"send\":\"{}\",\"receive\":\"{}\",\"sent\":{},\"received\":{}}}",
            if self.sent > 0 { "loan" } else { "none" },
            if self.received.load(Ordering::Relaxed) > 0 { "loan" } else { "none" },
            self.sent,
            self.received.load(Ordering::Relaxed)
        )
    }

    fn info(&self) -> String {
        format!(
            "{{\"sent\":{},\"notified\":{},\"config\":{}}}",
            self.sent,
            self.notified.load(Ordering::Relaxed),
            self.info
        )
    }
}

impl Iox {
    /// A slice of the publisher's shared memory, `data` copied in (iceoryx2's own write).
    fn loan_slice(&mut self, data: &[u8]) -> Res<SampleMut<S, [u8], ()>> {
        if data.len() > self.cfg.max_size {
            return err(MWS_TOO_BIG, format!("{} B > initial_max_slice_len {}", data.len(), self.cfg.max_size));
        }
        let s = self.publisher.loan_slice_uninit(data.len()).map_err(io("iceoryx2 loan_slice_uninit"))?;
        Ok(s.write_from_slice(data))
    }

    fn deliver(&mut self, s: SampleMut<S, [u8], ()>) -> Res<()> {
        match s.send() {
            Ok(_) => {}
            Err(SendError::UnableToDeliver) => {
                return err(MWS_TIMEOUT, format!("not delivered within {} ms (the reader's buffer stayed full)", MAX_BLOCKING.as_millis()));
            }
            Err(e) => return err(MWS_IO, format!("iceoryx2 send: {e:?}")),
        }
        self.sent += 1;
        // wakes a blocking peer; with no listener (peer spins) it is a no-op
        if self.out_ev.dynamic_config().number_of_listeners() > 0 {
            self.notifier.notify().map_err(io("iceoryx2 notify"))?;
            self.notified.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl Drop for Iox {
    fn drop(&mut self) {
        self.loaned = None;
        self.current = None;
        if let Some((stop, th)) = self.push.take() {
            stop.store(true, Ordering::Release);
            self.waker.wake();
            let _ = th.join();
        }
    }
}

pub fn cleanup_dead_nodes(run_id: u32) -> i64 {
    cleanup_domain(run_id).1
}
