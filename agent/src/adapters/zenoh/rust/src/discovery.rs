//! zenoh's participant of a discovery point (core/discovery.h, through the shim's mws_disc_*;
//! the profiles are chosen in ../zenoh_discovery.cpp and arrive here as zenoh config keys).
//! One session; on every topic t of run r, one writer and one reader:
//! - the writer: a publisher on mwperf/disc/<r>/<t>/data that puts its one sample (the
//!   participant's index, 4 bytes), a queryable on mwperf/disc/<r>/<t>/last/<index> that
//!   answers with that sample (zenoh keeps no history for late subscribers by itself), and a
//!   liveliness token mwperf/disc/<r>/<t>/w/<index>, declared last;
//! - the reader: a subscriber on the data key, and a liveliness subscriber (with history) on
//!   mwperf/disc/<r>/<t>/w/*. The writers it has "matched" are the tokens zenoh's liveliness
//!   reports alive there (zenoh counts no matched writers per subscriber; its own token
//!   included, as zenoh reports local tokens too). For each other writer's token it queries
//!   that writer's queryable once: the sample a late reader missed arrives as the reply.
use mwperf_shim_api::*;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::{Publisher, Subscriber};
use zenoh::query::{Query, Queryable, Reply};
use zenoh::sample::{Sample, SampleKind};
use zenoh::{Config, Session, Wait};

#[derive(Default)]
struct Seen {
    alive: Vec<HashSet<u32>>,   // [topic]: the writers whose token is alive
    samples: Vec<(u32, u32)>,   // (topic, index the sample carries), until taken
    to_query: Vec<(u32, u32)>,  // (topic, writer) whose token appeared: query its sample
}

pub struct Disc {
    seen: Arc<Mutex<Seen>>,
    base: String,
    _tokens: Vec<LivelinessToken>,
    _queryables: Vec<Queryable<()>>,
    _subscribers: Vec<Subscriber<()>>,
    _publishers: Vec<Publisher<'static>>,
    session: Session, // dropped last
}

fn index_of(payload: &[u8]) -> u32 {
    if payload.len() == 4 { u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]) } else { u32::MAX }
}

/// `config`: "key=json5;key=json5", applied on zenoh's defaults in that order.
pub fn open(config: &str, run_id: u32, topics: u32, index: u32) -> Res<Box<Disc>> {
    let mut c = Config::default();
    for kv in config.split(';').filter(|kv| !kv.trim().is_empty()) {
        let Some((k, v)) = kv.split_once('=') else {
            return err(MWS_IO, format!("zenoh discovery config: '{kv}' is not key=value"));
        };
        c.insert_json5(k.trim(), v.trim()).map_err(io(&format!("zenoh config {kv}")))?;
    }
    let session = zenoh::open(c).wait().map_err(io("zenoh::open"))?;
    let seen = Arc::new(Mutex::new(Seen { alive: vec![HashSet::new(); topics as usize], ..Default::default() }));
    let base = format!("mwperf/disc/{run_id}");
    let sample = index.to_le_bytes();
    let mut d = Disc {
        seen: seen.clone(),
        base: base.clone(),
        _tokens: vec![],
        _queryables: vec![],
        _subscribers: vec![],
        _publishers: vec![],
        session,
    };
    for t in 0..topics {
        let s = seen.clone();
        let sub = d
            .session
            .declare_subscriber(format!("{base}/{t}/data"))
            .callback(move |x: Sample| s.lock().unwrap().samples.push((t, index_of(&x.payload().to_bytes()))))
            .wait()
            .map_err(io("zenoh declare_subscriber"))?;
        d._subscribers.push(sub);
        let s = seen.clone();
        let prefix = format!("{base}/{t}/w/");
        let live = d
            .session
            .liveliness()
            .declare_subscriber(format!("{prefix}*"))
            .history(true)
            .callback(move |x: Sample| {
                let Some(w) = x.key_expr().as_str().strip_prefix(&prefix).and_then(|i| i.parse::<u32>().ok()) else {
                    return;
                };
                let mut s = s.lock().unwrap();
                if x.kind() == SampleKind::Delete {
                    s.alive[t as usize].remove(&w);
                } else if s.alive[t as usize].insert(w) && w != index {
                    s.to_query.push((t, w));
                }
            })
            .wait()
            .map_err(io("zenoh liveliness subscriber"))?;
        d._subscribers.push(live);
        let last = format!("{base}/{t}/last/{index}");
        let q = d
            .session
            .declare_queryable(last.clone())
            .callback(move |q: Query| {
                let _ = q.reply(q.key_expr().clone(), sample.to_vec()).wait();
            })
            .wait()
            .map_err(io("zenoh declare_queryable"))?;
        d._queryables.push(q);
        let p = d.session.declare_publisher(format!("{base}/{t}/data")).wait().map_err(io("zenoh declare_publisher"))?;
        p.put(sample.to_vec()).wait().map_err(io("zenoh put"))?;
        d._publishers.push(p);
        let token = d.session.liveliness().declare_token(format!("{base}/{t}/w/{index}")).wait();
        d._tokens.push(token.map_err(io("zenoh liveliness token"))?);
    }
    Ok(Box::new(d))
}

impl Disc {
    /// The writers' tokens zenoh's liveliness reports alive on this participant's topics, summed.
    pub fn matched(&self) -> u64 {
        self.seen.lock().unwrap().alive.iter().map(|a| a.len() as u64).sum()
    }

    /// Queries the writers whose token appeared since the last call, then hands over the samples.
    pub fn take(&self, mut seen: impl FnMut(u32, u32)) {
        let (ask, got) = {
            let mut s = self.seen.lock().unwrap();
            (std::mem::take(&mut s.to_query), std::mem::take(&mut s.samples))
        };
        for (t, w) in ask {
            let s = self.seen.clone();
            let _ = self
                .session
                .get(format!("{}/{t}/last/{w}", self.base))
                .callback(move |r: Reply| {
                    if let Ok(x) = r.result() {
                        s.lock().unwrap().samples.push((t, index_of(&x.payload().to_bytes())));
                    }
                })
                .wait();
        }
        for (t, from) in got {
            seen(t, from);
        }
    }
}
