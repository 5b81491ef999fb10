//! What the Rust shim (../src/lib.rs, the C ABI) and the crates of the middlewares
//! (src/adapters/<name>/rust) share: the configuration, errors as values, and the
//! trait each middleware's backend implements. Codes mirror include/mwperf_shim.h.
use std::ffi::c_void;

pub const MWS_OK: i32 = 0;
pub const MWS_TIMEOUT: i32 = 1;
pub const MWS_CLOSED: i32 = 2;
pub const MWS_TOO_BIG: i32 = 3;
pub const MWS_UNSUPPORTED: i32 = 4;
pub const MWS_IO: i32 = 5;

pub type OnMessage = Option<unsafe extern "C" fn(ctx: *mut c_void, data: *const u8, len: usize)>;

/// Plain-Rust view of the configuration, validated.
#[derive(Clone, Debug)]
#[allow(dead_code)] // some fields are read by one backend only
pub struct Cfg {
    pub is_pub: bool,
    pub reliable: bool,
    pub block: bool,
    pub shm: bool,
    pub spin: bool,
    pub express: bool,
    pub borrow: bool,
    pub run_id: u32,
    pub max_size: usize,
    pub queue_depth: usize,
    pub listen: Vec<String>,
    pub connect: Vec<String>,
    pub on_message: OnMessage,
    pub ctx: usize, // *mut c_void carried as usize so Cfg is Send
    pub zenoh_config: Vec<(String, String)>,
    pub subscribers: usize, // the data stream's subscribers (fan-out), >= 1
}

impl Cfg {
    pub fn out_topic(&self) -> &'static str {
        if self.is_pub { "data" } else { "echo" }
    }
    pub fn in_topic(&self) -> &'static str {
        if self.is_pub { "echo" } else { "data" }
    }
}

#[derive(Debug)]
pub struct Error {
    pub code: i32,
    pub msg: std::borrow::Cow<'static, str>, // static text on hot paths: no allocation
}
pub type Res<T> = Result<T, Error>;
pub fn err<T>(code: i32, msg: impl Into<std::borrow::Cow<'static, str>>) -> Res<T> {
    Err(Error { code, msg: msg.into() })
}
pub fn io<E: std::fmt::Debug>(what: &str) -> impl FnOnce(E) -> Error + '_ {
    move |e| Error { code: MWS_IO, msg: format!("{what}: {e:?}").into() }
}

/// What each backend implements. `wake` lives on a separate Arc'd object so another
/// thread can call it while `recv` holds `&mut self`.
pub trait Backend {
    fn wait_matched(&mut self, timeout_ns: i64) -> Res<()>;
    fn send(&mut self, data: &[u8]) -> Res<()>;
    /// A writable buffer of `from.len()` bytes lent by the middleware, `from` copied in;
    /// held by the backend until send_loaned (or the next loan, or close, drops it).
    fn loan(&mut self, from: &[u8]) -> Res<*mut u8>;
    /// Sends the loan held (`buf`, `len`: what loan returned, checked).
    fn send_loaned(&mut self, buf: *const u8, len: usize) -> Res<()>;
    /// Returns a view valid until the next recv/close.
    fn recv(&mut self, timeout_ns: i64) -> Res<(*const u8, usize)>;
    fn info(&self) -> String;
    /// JSON object: the data path each direction took (shared memory, loan, copy), read
    /// from the middleware's own counters at the time of the call.
    fn data_path(&self) -> String;
}
pub trait Waker: Send + Sync {
    fn wake(&self);
}
