//! iceoryx2's domain for a run (its files, its nodes, their clean-up) and the services of
//! one point (data and echo streams, each with an event service), for lib.rs.
use mwperf_shim_api::*;
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::{event as evpf, publish_subscribe as pspf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub(crate) type S = ipc::Service;

/// Root of all iceoryx2 files of mwperf (instead of /tmp/iceoryx2).
pub const ROOT: &str = "/tmp/mwperf-iceoryx2/";

/// One iceoryx2 "domain" per run: prefix mwp<run>_ in /dev/shm and ROOT, so a run's
/// leftovers can be found and removed without touching other iceoryx2 users.
/// Config::default() also avoids the "No config file was loaded" warning of global_config().
///
/// No dead-node clean-up on a node's creation, a service's opening or a node's end: iceoryx2
/// tells a dead node by its monitor file's fcntl lock (F_GETLK), and fcntl locks belong to
/// the process: looked at from inside a process that holds two nodes (every agent: its
/// inbound side has its own), a sibling's lock reads as absent, and closing the monitor file
/// after the look drops the process's lock on it. Dead nodes are cleaned by the last handle
/// of a process (DomainCleanup) and by the controller between runs, where no live node of
/// the looking process is left to misjudge.
pub fn domain_config(run_id: u32) -> Config {
    let mut c = Config::default();
    c.global.prefix = FileName::new(format!("mwp{run_id}_").as_bytes()).expect("prefix");
    c.global.set_root_path(&Path::new(ROOT.as_bytes()).expect("root path"));
    c.global.node.cleanup_dead_nodes_on_creation = false;
    c.global.node.cleanup_dead_nodes_on_destruction = false;
    c.global.service.cleanup_dead_nodes_on_open = false;
    c
}

/// iceoryx2 handles open in this process (several readers of one process each have one).
static OPEN_HANDLES: AtomicU64 = AtomicU64::new(0);

pub(crate) fn node(cfg: &Cfg) -> Res<Node<S>> {
    // Disabled: the C++ agent owns SIGINT/SIGTERM.
    NodeBuilder::new()
        .config(&domain_config(cfg.run_id))
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<S>()
        .map_err(io("iceoryx2 node"))
}

/// Dropped last (declared last in Iox): when it was the process's last iceoryx2 handle (no
/// live node of this process left to misjudge, see domain_config), removes dead nodes'
/// resources and, when no node of the domain is alive any more, the persistent global
/// management segment and empty dirs.
pub(crate) struct DomainCleanup(u32);
impl DomainCleanup {
    pub(crate) fn new(run_id: u32) -> Self {
        OPEN_HANDLES.fetch_add(1, Ordering::AcqRel);
        DomainCleanup(run_id)
    }
}
impl Drop for DomainCleanup {
    fn drop(&mut self) {
        if OPEN_HANDLES.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _ = cleanup_domain(self.0);
        }
    }
}

/// Returns (alive nodes, dead nodes cleaned).
pub fn cleanup_domain(run_id: u32) -> (i64, i64) {
    let config = domain_config(run_id);
    let (mut alive, mut cleaned) = (0i64, 0i64);
    let _ = Node::<S>::list(&config, |state| {
        match state {
            NodeState::Dead(view) => {
                if view.try_remove_stale_resources().is_ok() {
                    cleaned += 1;
                }
            }
            _ => alive += 1,
        }
        CallbackProgression::Continue
    });
    if alive == 0 {
        // SAFETY: no node of this domain (prefix mwp<run>_) is alive.
        let _ = unsafe { iceoryx2::testing::remove_global_mgmt_segment::<S>(&config) };
        let dir = format!("{ROOT}");
        for sub in ["services", "nodes", ""] {
            let _ = std::fs::remove_dir(format!("{dir}{sub}")); // only when empty
        }
    }
    (alive, cleaned)
}

pub(crate) fn svc_name(s: &str) -> Res<ServiceName> {
    s.try_into().map_err(io("iceoryx2 service name"))
}

/// Ports of one stream: the data stream has one publisher and `cfg.subscribers` subscribers,
/// the echo stream the reverse (every subscriber process can answer). Every process asks for
/// the same, so whoever creates the service, the others can open it. A publisher's data
/// segment holds a buffer for each subscriber it may serve: sized to the fan-out, not beyond.
pub(crate) fn ports(name: &str, cfg: &Cfg) -> (usize, usize) {
    if name.ends_with("/data") { (1, cfg.subscribers) } else { (cfg.subscribers, 1) }
}

pub(crate) fn max_nodes(cfg: &Cfg) -> usize {
    2 * (cfg.subscribers + 1) // two nodes in each process (its inbound side's and the rest's)
}

pub(crate) fn open_pubsub(node: &Node<S>, name: &str, cfg: &Cfg) -> Res<pspf::PortFactory<S, [u8], ()>> {
    let n = svc_name(name)?;
    let (publishers, subscribers) = ports(name, cfg);
    let mut last = None;
    for _ in 0..200 {
        // both processes race to create: retry "is being created" for up to ~2 s
        match node
            .service_builder(&n)
            .publish_subscribe::<[u8]>()
            .max_publishers(publishers)
            .max_subscribers(subscribers)
            .max_nodes(max_nodes(cfg))
            .history_size(0)
            .subscriber_max_buffer_size(cfg.queue_depth)
            .subscriber_max_borrowed_samples(2)
            .enable_safe_overflow(!cfg.reliable)
            .open_or_create()
        {
            Ok(s) => return Ok(s),
            Err(e) => {
                last = Some(format!("{e:?}"));
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    err(MWS_IO, format!("iceoryx2 publish_subscribe '{name}': {}", last.unwrap_or_default()))
}

pub(crate) fn open_event(node: &Node<S>, name: &str, cfg: &Cfg) -> Res<evpf::PortFactory<S>> {
    let n = svc_name(name)?;
    let ends = cfg.subscribers + 1; // data/ev: the publisher notifies every subscriber; echo/ev the reverse
    let mut last = None;
    for _ in 0..200 {
        match node.service_builder(&n).event().max_notifiers(ends).max_listeners(ends).max_nodes(max_nodes(cfg)).open_or_create() {
            Ok(s) => return Ok(s),
            Err(e) => {
                last = Some(format!("{e:?}"));
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    err(MWS_IO, format!("iceoryx2 event '{name}': {}", last.unwrap_or_default()))
}

pub(crate) fn names(cfg: &Cfg) -> (String, String, String, String) {
    let out = format!("mwperf/{}/{}", cfg.run_id, cfg.out_topic());
    let inn = format!("mwperf/{}/{}", cfg.run_id, cfg.in_topic());
    (out.clone(), format!("{out}/ev"), inn.clone(), format!("{inn}/ev"))
}
