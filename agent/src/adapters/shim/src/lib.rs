//! mwperf_shim: one Rust staticlib with a C ABI serving the zenoh and iceoryx2 adapters
//! (their crates: src/adapters/zenoh/rust, src/adapters/iceoryx2/rust; what they share: api/).
//! It only moves bytes: no clocks, no statistics. See include/mwperf_shim.h.
#![allow(clippy::missing_safety_doc)]

use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use mwperf_shim_api::*;

pub const MWS_MW_ZENOH: i32 = 1;
pub const MWS_MW_ICEORYX2: i32 = 2;

/// Mirrors `mws_config` in include/mwperf_shim.h (keep in sync; struct_size guards it).
#[repr(C)]
pub struct MwsConfig {
    pub struct_size: u32,
    pub middleware: i32,
    pub role: i32,        // 0 pub (sends "data", receives "echo"), 1 sub (the reverse)
    pub reliable: i32,    // 1 reliable, 0 best effort
    pub congestion: i32,  // 0 block, 1 drop
    pub transport: i32,   // 0 tcp, 1 shm
    pub wait_mode: i32,   // 0 block, 1 spin
    pub express: i32,     // zenoh express (no batching)
    pub send_mode: i32,   // zenoh: 0 copy, 1 borrow
    pub run_id: u32,
    pub max_size: u64,
    pub queue_depth: u32,
    pub listen: *const c_char,
    pub connect: *const c_char,
    pub on_message: OnMessage,
    pub on_message_ctx: *mut c_void,
    pub zenoh_config: *const c_char,
    pub subscribers: u32,
}


pub struct MwsHandle {
    waker: Arc<dyn Waker>,
    inner: std::cell::UnsafeCell<Box<dyn Backend>>,
    info: CString,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::new("").unwrap());
    static STATS: RefCell<CString> = RefCell::new(CString::new("").unwrap());
}
fn set_error(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}
fn ret(r: Res<()>) -> i32 {
    match r {
        Ok(()) => MWS_OK,
        Err(e) => {
            set_error(&e.msg);
            e.code
        }
    }
}
fn guarded(f: impl FnOnce() -> i32) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(c) => c,
        Err(p) => {
            let m = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            set_error(&format!("panic in mwperf_shim: {m}"));
            MWS_IO
        }
    }
}

unsafe fn split_list(p: *const c_char) -> Vec<String> {
    if p.is_null() {
        return vec![];
    }
    CStr::from_ptr(p)
        .to_string_lossy()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Thread-local text of the last failing call on this thread (never NULL).
#[no_mangle]
pub extern "C" fn mws_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Bit mask of compiled-in middlewares: 1 zenoh, 2 iceoryx2, 4 zenoh shared memory.
#[no_mangle]
pub extern "C" fn mws_features() -> u32 {
    let mut f = 0;
    if cfg!(feature = "zenoh") {
        f |= 1;
    }
    if cfg!(feature = "iceoryx2") {
        f |= 2;
    }
    if cfg!(feature = "zenoh-shm") {
        f |= 4;
    }
    f
}

/// Static version text of a middleware ("" when not compiled in).
#[no_mangle]
pub extern "C" fn mws_version(middleware: i32) -> *const c_char {
    match middleware {
        #[cfg(feature = "zenoh")]
        MWS_MW_ZENOH => c"zenoh 1.10.2".as_ptr(),
        #[cfg(feature = "iceoryx2")]
        MWS_MW_ICEORYX2 => c"iceoryx2 0.10.0".as_ptr(),
        _ => c"".as_ptr(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn mws_open(cfg: *const MwsConfig, out: *mut *mut MwsHandle) -> i32 {
    guarded(|| {
        if cfg.is_null() || out.is_null() {
            set_error("mws_open: NULL argument");
            return MWS_IO;
        }
        *out = std::ptr::null_mut();
        let c = &*cfg;
        if c.struct_size as usize != std::mem::size_of::<MwsConfig>() {
            set_error(&format!(
                "mws_open: struct_size {} != {} (header and library out of sync)",
                c.struct_size,
                std::mem::size_of::<MwsConfig>()
            ));
            return MWS_IO;
        }
        let cfg = Cfg {
            is_pub: c.role == 0,
            reliable: c.reliable != 0,
            block: c.congestion == 0,
            shm: c.transport == 1,
            spin: c.wait_mode == 1,
            express: c.express != 0,
            borrow: c.send_mode == 1,
            run_id: c.run_id,
            max_size: c.max_size as usize,
            queue_depth: if c.queue_depth == 0 { 16 } else { c.queue_depth as usize },
            subscribers: c.subscribers.max(1) as usize,
            listen: split_list(c.listen),
            connect: split_list(c.connect),
            on_message: c.on_message,
            ctx: c.on_message_ctx as usize,
            zenoh_config: if c.zenoh_config.is_null() {
                vec![]
            } else {
                CStr::from_ptr(c.zenoh_config)
                    .to_string_lossy()
                    .split(';')
                    .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.trim().to_string(), v.trim().to_string())))
                    .collect()
            },
        };
        let r: Res<(Box<dyn Backend>, Arc<dyn Waker>)> = match c.middleware {
            #[cfg(feature = "zenoh")]
            MWS_MW_ZENOH => mwperf_zenoh::open(cfg),
            #[cfg(feature = "iceoryx2")]
            MWS_MW_ICEORYX2 => mwperf_iceoryx2::open(cfg),
            m => err(MWS_UNSUPPORTED, format!("middleware {m} not compiled into mwperf_shim (features {:#x})", mws_features())),
        };
        match r {
            Ok((b, w)) => {
                let info = CString::new(b.info()).unwrap_or_default();
                *out = Box::into_raw(Box::new(MwsHandle { waker: w, inner: std::cell::UnsafeCell::new(b), info }));
                MWS_OK
            }
            Err(e) => ret(Err(e)),
        }
    })
}

#[inline]
unsafe fn backend<'a>(h: *mut MwsHandle) -> &'a mut dyn Backend {
    // Only the `inner` cell is borrowed mutably; `waker` stays reachable for mws_wake.
    &mut **(*std::ptr::addr_of!((*h).inner)).get()
}

#[no_mangle]
pub unsafe extern "C" fn mws_wait_matched(h: *mut MwsHandle, timeout_ns: i64) -> i32 {
    guarded(|| ret(backend(h).wait_matched(timeout_ns)))
}

#[no_mangle]
pub unsafe extern "C" fn mws_send(h: *mut MwsHandle, data: *const u8, len: usize) -> i32 {
    let s = if len == 0 { &[][..] } else { std::slice::from_raw_parts(data, len) };
    guarded(|| ret(backend(h).send(s)))
}

#[no_mangle]
pub unsafe extern "C" fn mws_loan(h: *mut MwsHandle, from: *const u8, len: usize, out: *mut *mut u8) -> i32 {
    let s = if len == 0 { &[][..] } else { std::slice::from_raw_parts(from, len) };
    guarded(|| match backend(h).loan(s) {
        Ok(p) => {
            *out = p;
            MWS_OK
        }
        Err(e) => ret(Err(e)),
    })
}

#[no_mangle]
pub unsafe extern "C" fn mws_send_loaned(h: *mut MwsHandle, buf: *mut u8, len: usize) -> i32 {
    guarded(|| ret(backend(h).send_loaned(buf, len)))
}

#[no_mangle]
pub unsafe extern "C" fn mws_recv(h: *mut MwsHandle, data: *mut *const u8, len: *mut usize, timeout_ns: i64) -> i32 {
    guarded(|| match backend(h).recv(timeout_ns) {
        Ok((p, l)) => {
            *data = p;
            *len = l;
            MWS_OK
        }
        Err(e) if e.code == MWS_TIMEOUT => MWS_TIMEOUT, // hot path (polling): no error text
        Err(e) => ret(Err(e)),
    })
}

/// Thread-safe; may come before the wait (it is remembered once).
#[no_mangle]
pub unsafe extern "C" fn mws_wake(h: *mut MwsHandle) {
    let w: &Arc<dyn Waker> = &*std::ptr::addr_of!((*h).waker);
    w.wake();
}

/// JSON text of the effective configuration, valid until mws_close.
#[no_mangle]
pub unsafe extern "C" fn mws_info(h: *mut MwsHandle) -> *const c_char {
    (*h).info.as_ptr()
}

/// Counters as JSON (zenoh: non-contiguous payloads, borrow waits), into a thread-local buffer.
#[no_mangle]
pub unsafe extern "C" fn mws_stats(h: *mut MwsHandle) -> *const c_char {
    let s = CString::new(backend(h).info()).unwrap_or_default();
    STATS.with(|e| {
        *e.borrow_mut() = s;
        e.borrow().as_ptr()
    })
}

/// The data path each direction took so far (JSON, read live), into a thread-local buffer.
#[no_mangle]
pub unsafe extern "C" fn mws_data_path(h: *mut MwsHandle) -> *const c_char {
    let s = CString::new(backend(h).data_path()).unwrap_or_default();
    STATS.with(|e| {
        *e.borrow_mut() = s;
        e.borrow().as_ptr()
    })
}

#[no_mangle]
pub unsafe extern "C" fn mws_close(h: *mut MwsHandle) {
    if h.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(h))));
}

/// iceoryx2: removes the resources of dead nodes (a SIGKILLed process) of run `run_id`'s
/// domain, and the domain's global segment when no node is alive. Returns the number of
/// dead nodes cleaned, or -1 when iceoryx2 is not compiled in.
#[no_mangle]
pub extern "C" fn mws_iceoryx2_cleanup(run_id: u32) -> i64 {
    #[cfg(feature = "iceoryx2")]
    {
        match catch_unwind(|| mwperf_iceoryx2::cleanup_dead_nodes(run_id)) {
            Ok(n) => n,
            Err(_) => -1,
        }
    }
    #[cfg(not(feature = "iceoryx2"))]
    {
        let _ = run_id;
        -1
    }
}

/// zenoh SHM: unlinks /dev/shm/*.zenoh segments whose owner process is gone (zenoh keeps a
/// shared advisory lock on each live segment). No-op without feature zenoh-shm.
#[no_mangle]
pub extern "C" fn mws_zenoh_cleanup_orphaned_shm() {
    #[cfg(feature = "zenoh-shm")]
    let _ = catch_unwind(mwperf_zenoh::cleanup_orphaned_shm);
}

/// zenoh's participant of a discovery point (mwperf_zenoh::discovery; include/mwperf_shim.h).
#[cfg(feature = "zenoh")]
pub type MwsDisc = mwperf_zenoh::discovery::Disc;
#[cfg(not(feature = "zenoh"))]
pub struct MwsDisc;

#[no_mangle]
pub unsafe extern "C" fn mws_disc_open(config: *const c_char, run_id: u32, topics: u32, index: u32, out: *mut *mut MwsDisc) -> i32 {
    guarded(|| {
        if config.is_null() || out.is_null() {
            set_error("mws_disc_open: NULL argument");
            return MWS_IO;
        }
        *out = std::ptr::null_mut();
        #[cfg(feature = "zenoh")]
        {
            match mwperf_zenoh::discovery::open(&CStr::from_ptr(config).to_string_lossy(), run_id, topics, index) {
                Ok(d) => {
                    *out = Box::into_raw(d);
                    MWS_OK
                }
                Err(e) => ret(Err(e)),
            }
        }
        #[cfg(not(feature = "zenoh"))]
        {
            let _ = (run_id, topics, index);
            ret(err(MWS_UNSUPPORTED, "zenoh not compiled into mwperf_shim"))
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn mws_disc_matched(d: *mut MwsDisc) -> u64 {
    #[cfg(feature = "zenoh")]
    return catch_unwind(AssertUnwindSafe(|| (*d).matched())).unwrap_or(0);
    #[cfg(not(feature = "zenoh"))]
    {
        let _ = d;
        0
    }
}

#[no_mangle]
pub unsafe extern "C" fn mws_disc_take(d: *mut MwsDisc, seen: extern "C" fn(*mut c_void, u32, u32), ctx: *mut c_void) {
    #[cfg(feature = "zenoh")]
    let _ = catch_unwind(AssertUnwindSafe(|| (*d).take(|t, from| seen(ctx, t, from))));
    #[cfg(not(feature = "zenoh"))]
    let _ = (d, seen, ctx);
}

#[no_mangle]
pub unsafe extern "C" fn mws_disc_close(d: *mut MwsDisc) {
    if !d.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(d))));
    }
}
