//! [`LiveSource`]: the sessions of one or more relays read as one time-ordered event stream.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctf::merge::TimeMap;
use ctf::trace::StreamFiles;
use ctf::{Message, StreamReader, Trace};
use pipeline::{Diagnostic, Flow, Notice, NoticeKind, Sink, Source, Summary};

use crate::conn::{Conn, NewStreams, Packet, StreamInfo, ViewerIndex};
use crate::{Error, Mirror, Url};
use relay_proto::viewer as v;

/// How a live read behaves.
#[derive(Clone)]
pub struct LiveOptions {
    /// The longest pause between two polls of a relay that had nothing new (the pause starts
    /// short and doubles up to this while nothing comes).
    pub poll: Duration,
    /// How long to wait for a session's first metadata.
    pub metadata_timeout: Duration,
    /// Puts each trace's times on one time line (`--sync`).
    pub time_map: Option<Arc<dyn TimeMap>>,
    /// Writes what is received to local files as well (a viewer reads those).
    pub mirror: Option<Arc<Mirror>>,
    /// Synchronizes the hosts' clocks from the TCP packets they exchanged, as received
    /// (`--sync`; with one host, nothing is done): see [`LiveOptions::sync_delay`].
    pub sync: bool,
    /// With `sync`: an event is given out once every stream has been received through its
    /// synchronized time plus this much (trace time), so that the packets exchanged up to
    /// then have refined the transform it is placed with. The read lags the session by about
    /// this (plus the live timer).
    pub sync_delay: Duration,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            poll: Duration::from_millis(20),
            metadata_timeout: Duration::from_secs(10),
            time_map: None,
            mirror: None,
            sync: false,
            sync_delay: Duration::from_secs(1),
        }
    }
}

/// One relay connection and the relay sessions attached on it.
struct Relay {
    conn: Conn,
    /// Relay session ids, and whether the relay said each is closed.
    sessions: Vec<(u64, bool)>,
}

/// One CTF trace of a session (a domain's buffers: `ust/uid/0/64-bit`…).
struct LiveTrace {
    relay: usize,
    ctf_trace_id: u64,
    metadata_stream: u64,
    metadata: Vec<u8>,
    /// The path on the relay, for messages.
    path: String,
    trace: Arc<Trace>,
}

/// What a stream holds next, in merged order.
#[derive(Clone, Copy)]
enum Item {
    Event,
    Loss(NoticeKind, u64),
}

struct LiveStream {
    relay: usize,
    id: u64,
    trace: usize,
    reader: StreamReader,
    /// Packets received while the reader still had some (with `--sync`, streams are read
    /// ahead of what is given out), and the trace each belongs to.
    queue: VecDeque<(Arc<[u8]>, Arc<Trace>)>,
    /// With `--sync`: a second reader of the packets as they arrive, whose network events
    /// feed the clock sync before the events are ordered.
    scout: Option<StreamReader>,
    /// The next item and its time on the trace's own clock, when the reader has one.
    cur: Option<(i64, Item)>,
    /// The stream holds nothing more at or before this time (ns, the trace's own clock).
    through: i64,
    /// The first time the relay told of the stream (its first packet's beginning, or a quiet
    /// time), on its own clock.
    first: Option<i64>,
    /// An index whose packet the relay asked to fetch again.
    pending: Option<ViewerIndex>,
    ended: bool,
    /// The stream's channel (file) name, its stream class and instance ids once a packet
    /// told them, and its place in the tie order ([`State::rank`]).
    channel: String,
    ids: Option<(u64, Option<u64>)>,
    rank: usize,
    /// An event of it came out after a later one of another stream (said once).
    late_told: bool,
}

/// Live `--sync`: the transforms estimated from the packets received so far.
struct Clock {
    inc: sync::live::Incremental,
    maps: Option<sync::TimeMaps>,
    delay: i64,
    /// The time of the last item given out: later ones never go before it.
    last_out: i64,
    /// Nothing is given out until every stream has been received `delay` past its first time
    /// (own clock): the hosts' first packets can then relate their clocks.
    warming: bool,
    /// Every stream ended and the transforms were remade from all that was received.
    settled: bool,
    /// Items whose synchronized time fell before one already given out (the transform moved
    /// after it), given out at that time instead.
    clamped: u64,
}

struct State {
    relays: Vec<Relay>,
    traces: Vec<LiveTrace>,
    streams: Vec<LiveStream>,
    /// Relays that flagged new streams.
    new_streams: Vec<bool>,
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
    events_read: u64,
    /// `LiveOptions::time_map`.
    time_map: Option<Arc<dyn TimeMap>>,
    clock: Option<Clock>,
}

/// Sessions read live from relays, as a [`pipeline::Source`].
pub struct LiveSource {
    traces: Vec<Arc<Trace>>,
    options: LiveOptions,
    state: RefCell<State>,
}

impl std::fmt::Debug for LiveSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSource")
            .field("traces", &self.traces.len())
            .finish()
    }
}

impl LiveSource {
    /// Connects to each URL's relay, attaches to every relay session of its host and session
    /// name (one per tracing domain) from its beginning, and reads the traces' metadata. The
    /// traces' indexes follow the URLs' order.
    pub fn connect(urls: &[Url], options: LiveOptions) -> Result<LiveSource, Error> {
        let mut st = State {
            relays: Vec::new(),
            traces: Vec::new(),
            streams: Vec::new(),
            new_streams: Vec::new(),
            errors: Vec::new(),
            warnings: Vec::new(),
            events_read: 0,
            time_map: options.time_map.clone(),
            clock: None,
        };
        for url in urls {
            let Some((host, name)) = &url.session else {
                return Err(Error::Url {
                    url: format!("net://{}:{}", url.relay, url.port),
                    why: "it names no session (/host/HOSTNAME/SESSION)".into(),
                });
            };
            let mut conn = Conn::open(&url.relay, url.port)?;
            let all = conn.list_sessions()?;
            let ids: Vec<u64> = all
                .iter()
                .filter(|s| &s.hostname == host && &s.session_name == name && s.live_timer != 0)
                .map(|s| s.id)
                .collect();
            if ids.is_empty() {
                let list: Vec<String> = all
                    .iter()
                    .map(|s| format!("{}/{}", s.hostname, s.session_name))
                    .collect();
                return Err(Error::NoSession {
                    addr: conn.addr.clone(),
                    host: host.clone(),
                    session: name.clone(),
                    list: if list.is_empty() {
                        "none".into()
                    } else {
                        list.join(", ")
                    },
                });
            }
            conn.create_session()?;
            let relay = st.relays.len();
            let mut streams = Vec::new();
            for &id in &ids {
                streams.extend(conn.attach(id)?);
            }
            st.relays.push(Relay {
                conn,
                sessions: ids.iter().map(|&id| (id, false)).collect(),
            });
            st.new_streams.push(false);
            st.add_streams(relay, streams, &options)?;
        }
        let traces: Vec<Arc<Trace>> = st.traces.iter().map(|t| t.trace.clone()).collect();
        let inc = options
            .sync
            .then(|| sync::live::Incremental::new(&traces))
            .filter(|inc| inc.hosts() > 1);
        // One host: nothing to synchronize, and no reason to hold events back.
        if let Some(inc) = inc {
            st.clock = Some(Clock {
                inc,
                maps: None,
                delay: options.sync_delay.as_nanos().min(i64::MAX as u128) as i64,
                last_out: i64::MIN,
                warming: true,
                settled: false,
                clamped: 0,
            });
            for s in &mut st.streams {
                s.scout = Some(StreamReader::from_bytes(
                    st.traces[s.trace].trace.clone(),
                    s.reader.stream_index(),
                    Vec::new(),
                ));
            }
        }
        Ok(LiveSource {
            traces,
            options,
            state: RefCell::new(st),
        })
    }
}

/// The time of clock value `cycles` of a stream of `trace` that has not told its stream class
/// yet: on the clock of the trace's only stream class, else its first clock.
fn index_ns(trace: &Trace, cycles: u64) -> Option<i64> {
    let clock = if trace.layout.streams.len() == 1 {
        trace.stream_clock(trace.layout.streams.id_at(0))
    } else {
        trace.class.clocks.first()
    }?;
    let ns = clock.cycles_to_ns(cycles);
    Some(ns.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
}

impl State {
    /// Adds the streams of `relay` listed by an attach or GET_NEW_STREAMS: new traces get
    /// their metadata first.
    fn add_streams(
        &mut self,
        relay: usize,
        infos: Vec<StreamInfo>,
        options: &LiveOptions,
    ) -> Result<(), Error> {
        // Metadata streams first: a data stream's trace must exist before it.
        let (meta, data): (Vec<_>, Vec<_>) = infos.into_iter().partition(|s| s.metadata);
        for m in meta {
            if self
                .traces
                .iter()
                .any(|t| t.relay == relay && t.ctf_trace_id == m.ctf_trace_id)
            {
                continue;
            }
            let index = self.traces.len();
            let bytes = self.wait_metadata(relay, m.id, &m.path_name, options)?;
            let trace = Arc::new(
                build_trace(&bytes, index, &m.path_name, Vec::new())
                    .map_err(|source| self.metadata_error(relay, &m.path_name, source))?,
            );
            if let Some(mirror) = &options.mirror {
                mirror.metadata(index, relay, &m.path_name, &bytes, &trace)?;
            }
            if let Some(c) = &mut self.clock {
                if !c.inc.add_trace(&trace) {
                    self.warnings.push(Diagnostic::warning(format!(
                        "--sync: trace {} appeared after the start and is of another host: \
                         its times are not synchronized",
                        m.path_name
                    )));
                }
            }
            self.traces.push(LiveTrace {
                relay,
                ctf_trace_id: m.ctf_trace_id,
                metadata_stream: m.id,
                metadata: bytes,
                path: m.path_name,
                trace,
            });
        }
        for d in data {
            if self
                .streams
                .iter()
                .any(|s| s.relay == relay && s.id == d.id)
            {
                continue;
            }
            let Some(ti) = self
                .traces
                .iter()
                .position(|t| t.relay == relay && t.ctf_trace_id == d.ctf_trace_id)
            else {
                self.warnings.push(Diagnostic::warning(format!(
                    "relay {}: stream {} ({}/{}) has no metadata stream: not read",
                    self.relays[relay].conn.addr, d.id, d.path_name, d.channel_name
                )));
                continue;
            };
            let t = &mut self.traces[ti];
            let mut trace = with_streams(&t.trace, t.trace.streams.clone());
            let pos = trace.streams.len();
            trace
                .streams
                .push(stream_files(&d.path_name, &d.channel_name));
            t.trace = Arc::new(trace);
            let reader = StreamReader::from_bytes(t.trace.clone(), pos, Vec::new());
            let scout = self
                .clock
                .is_some()
                .then(|| StreamReader::from_bytes(t.trace.clone(), pos, Vec::new()));
            if let Some(mirror) = &options.mirror {
                mirror.stream(self.streams.len(), ti, &d.channel_name)?;
            }
            self.streams.push(LiveStream {
                relay,
                id: d.id,
                trace: ti,
                reader,
                queue: VecDeque::new(),
                scout,
                cur: None,
                through: i64::MIN,
                first: None,
                pending: None,
                ended: false,
                channel: d.channel_name.clone(),
                ids: None,
                rank: 0,
                late_told: false,
            });
        }
        self.rank();
        Ok(())
    }

    /// Orders events of the same time as a read of the written trace does (`ctf::Merger`
    /// over `ctf::trace::open_all`): by relay, then trace directory, then stream class and
    /// instance ids (from the packet headers); a stream whose first packet has not come yet
    /// goes first (it holds back events of its time: nothing comes out of order when its
    /// ids turn out larger), then by file name, numbers in names compared as numbers
    /// (`chan_2` before `chan_10`).
    fn rank(&mut self) {
        fn key(name: &str) -> (&str, u64) {
            let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            let (stem, num) = name.split_at(name.len() - digits);
            (stem, num.parse().unwrap_or(0))
        }
        let mut order: Vec<usize> = (0..self.streams.len()).collect();
        let traces = &self.traces;
        order.sort_by(|&a, &b| {
            let (sa, sb) = (&self.streams[a], &self.streams[b]);
            let k = |s: &'_ LiveStream| {
                let t = &traces[s.trace];
                (t.relay, t.path.clone(), s.ids, s.trace)
            };
            (k(sa), key(&sa.channel)).cmp(&(k(sb), key(&sb.channel)))
        });
        for (rank, i) in order.into_iter().enumerate() {
            self.streams[i].rank = rank;
        }
    }

    fn metadata_error(&self, relay: usize, path: &str, source: ctf::Error) -> Error {
        Error::Metadata {
            addr: self.relays[relay].conn.addr.clone(),
            trace: path.to_owned(),
            source,
        }
    }

    /// The metadata of a new trace: fetched until it parses (the relay may not have it all
    /// yet when the trace's streams are announced).
    fn wait_metadata(
        &mut self,
        relay: usize,
        stream: u64,
        path: &str,
        options: &LiveOptions,
    ) -> Result<Vec<u8>, Error> {
        let start = Instant::now();
        let mut bytes = Vec::new();
        loop {
            let conn = &mut self.relays[relay].conn;
            loop {
                let chunk = conn.metadata(stream)?;
                if chunk.is_empty() {
                    break;
                }
                bytes.extend_from_slice(&chunk);
            }
            if !bytes.is_empty() && ctf::metadata::parse(&bytes).is_ok() {
                return Ok(bytes);
            }
            if start.elapsed() > options.metadata_timeout {
                if bytes.is_empty() {
                    return Err(Error::NoMetadata {
                        addr: conn.addr.clone(),
                        trace: path.to_owned(),
                        secs: options.metadata_timeout.as_secs(),
                    });
                }
                let source = match build_trace(&bytes, 0, path, Vec::new()) {
                    Err(e) => e,
                    Ok(_) => unreachable!("parsed above"),
                };
                return Err(self.metadata_error(relay, path, source));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Fetches new metadata of trace `ti` and, when it grew, remakes the trace (its
    /// streams' readers take it with their next packet).
    fn refresh_metadata(&mut self, ti: usize, options: &LiveOptions) -> Result<(), Error> {
        let relay = self.traces[ti].relay;
        let stream = self.traces[ti].metadata_stream;
        let mut grew = false;
        loop {
            let chunk = self.relays[relay].conn.metadata(stream)?;
            if chunk.is_empty() {
                break;
            }
            self.traces[ti].metadata.extend_from_slice(&chunk);
            grew = true;
        }
        if grew {
            let t = &self.traces[ti];
            let trace = build_trace(&t.metadata, ti, &t.path, t.trace.streams.clone())
                .map_err(|source| self.metadata_error(relay, &self.traces[ti].path, source))?;
            self.traces[ti].trace = Arc::new(trace);
            if let Some(mirror) = &options.mirror {
                let t = &self.traces[ti];
                mirror.metadata(ti, relay, &t.path, &t.metadata, &t.trace)?;
            }
        }
        Ok(())
    }

    /// Asks each relay that flagged new streams (or, with `all`, every relay) for them; a
    /// session the relay says is closed is marked so.
    fn poll_new_streams(&mut self, all: bool, options: &LiveOptions) -> Result<(), Error> {
        for r in 0..self.relays.len() {
            if !(all || self.new_streams[r]) {
                continue;
            }
            self.new_streams[r] = false;
            for k in 0..self.relays[r].sessions.len() {
                let (id, closed) = self.relays[r].sessions[k];
                if closed {
                    continue;
                }
                match self.relays[r].conn.new_streams(id)? {
                    NewStreams::Streams(s) => {
                        if !s.is_empty() {
                            self.add_streams(r, s, options)?;
                        }
                    }
                    NewStreams::Hup => self.relays[r].sessions[k].1 = true,
                }
            }
        }
        Ok(())
    }

    /// Moves stream `i`'s reader to its next item, on to its queued packets when it runs out.
    fn advance(&mut self, i: usize) {
        let s = &mut self.streams[i];
        s.cur = None;
        loop {
            match s.reader.next() {
                Some(Ok(Message::Event)) => {
                    self.events_read += 1;
                    let ns = s.reader.event_time_ns().unwrap_or(i64::MIN);
                    s.cur = Some((ns, Item::Event));
                    return;
                }
                Some(Ok(m)) => {
                    let (kind, count) = match m {
                        Message::DiscardedEvents { count, .. } => {
                            (NoticeKind::DiscardedEvents, count)
                        }
                        Message::DiscardedPackets { count, .. } => {
                            (NoticeKind::DiscardedPackets, count)
                        }
                        Message::Event => unreachable!(),
                    };
                    let ns = m.time_ns().unwrap_or(s.through);
                    s.cur = Some((ns, Item::Loss(kind, count)));
                    return;
                }
                Some(Err(e)) => self.errors.push(Diagnostic::from_ctf(&e)),
                None => match s.queue.pop_front() {
                    Some((bytes, trace)) => s.reader.feed(bytes, Some(trace)),
                    None => return,
                },
            }
        }
    }

    /// `ns` of trace `ti`'s own clock on the read's time line.
    fn map(&self, ti: usize, ns: i64) -> i64 {
        if ns == i64::MIN {
            return ns;
        }
        match (&self.clock, &self.time_map) {
            (Some(Clock { maps: Some(m), .. }), _) => m.map(ti, ns),
            (_, Some(m)) => m.map(ti, ns),
            _ => ns,
        }
    }

    /// With `--sync`: the network events of a packet just received feed the clock sync
    /// (read by the stream's second reader), and the transforms are remade when they matched.
    fn observe(&mut self, i: usize, bytes: &Arc<[u8]>, trace: &Arc<Trace>) {
        let Some(clock) = &mut self.clock else { return };
        let s = &mut self.streams[i];
        let Some(scout) = &mut s.scout else { return };
        let ti = s.trace;
        let pos = scout.stream_index();
        scout.feed(bytes.clone(), Some(trace.clone()));
        while let Some(m) = scout.next() {
            if let Ok(Message::Event) = m {
                clock.inc.event(ti, pos, &scout.event());
            }
        }
        if let Some(maps) = clock.inc.time_maps() {
            clock.maps = Some(maps);
        }
    }

    /// One request for stream `i`, which has nothing to give: its next index, and the
    /// packet it points to. Whether anything changed (a packet, a later quiet time, its end).
    fn fetch(&mut self, i: usize, options: &LiveOptions) -> Result<bool, Error> {
        let (relay, id, ti) = {
            let s = &self.streams[i];
            (s.relay, s.id, s.trace)
        };
        let index = match self.streams[i].pending.take() {
            Some(index) => index,
            None => {
                let index = self.relays[relay].conn.next_index(id)?;
                if index.flags & v::FLAG_NEW_STREAM != 0 {
                    self.new_streams[relay] = true;
                }
                if index.flags & v::FLAG_NEW_METADATA != 0 {
                    self.refresh_metadata(ti, options)?;
                }
                index
            }
        };
        let to_ns = |t: &Trace, cycles: u64| index_ns(t, cycles).unwrap_or(i64::MIN);
        match index.status {
            v::INDEX_OK => {
                // A packet needing metadata not fetched yet is asked for again after it.
                for _ in 0..2 {
                    let packet =
                        self.relays[relay]
                            .conn
                            .packet(id, index.offset, index.packet_size / 8)?;
                    match packet {
                        Packet::Data(bytes) => {
                            if let Some(mirror) = &options.mirror {
                                mirror.packet(i, &bytes)?;
                            }
                            let t = self.traces[ti].trace.clone();
                            let end = to_ns(&t, index.timestamp_end);
                            let begin = to_ns(&t, index.timestamp_begin);
                            self.streams[i].first.get_or_insert(begin);
                            let bytes: Arc<[u8]> = bytes.into();
                            self.observe(i, &bytes, &t);
                            let s = &mut self.streams[i];
                            s.through = s.through.max(end);
                            if s.cur.is_none() && s.queue.is_empty() {
                                s.reader.feed(bytes, Some(t));
                                self.advance(i);
                                self.learn_ids(i);
                            } else {
                                s.queue.push_back((bytes, t));
                            }
                            return Ok(true);
                        }
                        Packet::NeedMetadata => self.refresh_metadata(ti, options)?,
                        Packet::Retry => {
                            self.streams[i].pending = Some(index);
                            return Ok(false);
                        }
                        Packet::Eof => {
                            self.streams[i].ended = true;
                            return Ok(true);
                        }
                    }
                }
                self.streams[i].pending = Some(index);
                Ok(false)
            }
            v::INDEX_INACTIVE => {
                let end = to_ns(&self.traces[ti].trace, index.timestamp_end);
                let s = &mut self.streams[i];
                s.first.get_or_insert(end);
                let moved = end > s.through;
                s.through = s.through.max(end);
                Ok(moved)
            }
            v::INDEX_RETRY => Ok(false),
            v::INDEX_HUP | v::INDEX_EOF => {
                self.streams[i].ended = true;
                Ok(true)
            }
            _ => Err(Error::Refused {
                addr: self.relays[relay].conn.addr.clone(),
                what: "GET_NEXT_INDEX",
                why: format!("stream {id}: the relay failed (status {})", index.status),
            }),
        }
    }

    /// Warns (once per stream) that stream `i` gives an item of `ts`, older than one of
    /// `last` already given.
    #[cold]
    fn told_late(&mut self, i: usize, ts: i64, last: i64) {
        let s = &mut self.streams[i];
        if s.late_told {
            return;
        }
        s.late_told = true;
        let t = &self.traces[s.trace];
        self.warnings.push(Diagnostic::warning(format!(
            "relay {}: stream {}/{} gives events older than ones already read ({ts} ns after \
             {last} ns): the relay announced it too late to keep the order",
            self.relays[s.relay].conn.addr, t.path, s.channel
        )));
    }

    /// Takes stream `i`'s class and instance ids from its first event's packet, for the tie
    /// order.
    fn learn_ids(&mut self, i: usize) {
        let s = &self.streams[i];
        if s.ids.is_some() || !matches!(s.cur, Some((_, Item::Event))) {
            return;
        }
        let ev = s.reader.event();
        let instance = ev
            .packet_header()
            .and_then(|h| h.field("stream_instance_id"))
            .and_then(|f| f.as_u64());
        let ids = Some((ev.stream_class_id(), instance));
        self.streams[i].ids = ids;
        self.rank();
    }

    /// Whether every session is closed and every stream read to its end.
    fn all_done(&self) -> bool {
        self.streams
            .iter()
            .all(|s| s.ended && s.cur.is_none() && s.queue.is_empty())
            && self
                .relays
                .iter()
                .all(|r| r.sessions.iter().all(|&(_, closed)| closed))
    }
}

/// A trace of metadata `bytes` at position `index`, named by its path on the relay, with
/// `streams`.
fn build_trace(
    bytes: &[u8],
    index: usize,
    path: &str,
    streams: Vec<StreamFiles>,
) -> Result<Trace, ctf::Error> {
    let mut t = Trace::from_metadata_bytes(bytes, path)?;
    t.streams = streams;
    t.index = index;
    t.path = PathBuf::from(path);
    t.name = t.hostname().unwrap_or_default().to_owned();
    Ok(t)
}

/// `trace` with `streams` instead of its own (class and layout shared).
fn with_streams(trace: &Trace, streams: Vec<StreamFiles>) -> Trace {
    Trace {
        path: trace.path.clone(),
        name: trace.name.clone(),
        class: trace.class.clone(),
        layout: trace.layout.clone(),
        streams,
        index: trace.index,
        errors: Vec::new(),
    }
}

/// A stream's name for messages: its path and channel on the relay.
fn stream_files(path: &str, channel: &str) -> StreamFiles {
    StreamFiles {
        files: vec![PathBuf::from(path).join(channel)],
        stream_class_id: None,
        stream_id: None,
        indexes: Vec::new(),
        packets: None,
    }
}

impl Source for LiveSource {
    fn traces(&self) -> &[Arc<Trace>] {
        &self.traces
    }

    /// Reads until every session is destroyed (or the sink stops); a relay error ends the
    /// read, reported as an error diagnostic.
    fn run<S: Sink + ?Sized>(&self, sink: &mut S) -> Summary {
        let mut st = self.state.borrow_mut();
        let mut summary = Summary::default();
        let notices = sink.wants_notices();
        let idle_min = Duration::from_millis(2);
        // The time of the last item given: a stream the relay announced too late to hold
        // back the others (its events older than ones given) is said, not hidden.
        let mut last_ts = i64::MIN;
        let mut idle = idle_min;
        let outcome: Result<(), Error> = (|| loop {
            let hold = st.clock.as_ref().map_or(0, |c| c.delay);
            let warm_up = |s: &LiveStream| {
                !s.ended && s.first.is_none_or(|f| s.through < f.saturating_add(hold))
            };
            if st.clock.as_ref().is_some_and(|c| !c.settled) {
                let ended = st.streams.iter().all(|s| s.ended);
                let warm = !st.streams.iter().any(warm_up);
                if let Some(c) = &mut st.clock {
                    // Once warm, and once every stream has ended: the transforms of a read
                    // of what was received (the packets came in another order than a read's).
                    if (c.warming && warm) || ended {
                        c.warming = false;
                        c.settled = ended;
                        if let Some(maps) = c.inc.settle() {
                            c.maps = Some(maps);
                        }
                    }
                }
            }
            // Times on the read's time line (without a transform, their own: no call).
            let identity = st.clock.is_none() && st.time_map.is_none();
            let on_line = |ti: usize, ns: i64| if identity { ns } else { st.map(ti, ns) };
            // The earliest item any stream holds, ties in the order of the written trace.
            let cand = st
                .streams
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.cur.map(|(t, _)| (on_line(s.trace, t), s.rank, i)))
                .min();
            let warming = st.clock.as_ref().is_some_and(|c| c.warming);
            // A stream known through the candidate's time may still hold an event of that
            // same time (its packet's end is its last event's time): it goes first if it
            // comes first in the order of ties. With `--sync`, every stream must also be
            // received `hold` past it: the packets exchanged until then refine the transform.
            let blocks = |s: &LiveStream| {
                if warming && warm_up(s) {
                    return true;
                }
                if s.ended {
                    return false;
                }
                let Some((t, rank, _)) = cand else {
                    return s.cur.is_none();
                };
                if s.cur.is_none() {
                    let through = on_line(s.trace, s.through);
                    if through < t || (through == t && s.rank < rank) {
                        return true;
                    }
                }
                hold > 0 && on_line(s.trace, s.through) < t.saturating_add(hold)
            };
            // (Checked without collecting: most events are released at once.)
            let blocked: Vec<usize> = if st.streams.iter().any(blocks) {
                (0..st.streams.len())
                    .filter(|&i| blocks(&st.streams[i]))
                    .collect()
            } else {
                Vec::new()
            };
            if blocked.is_empty() {
                if let Some((ts, _, i)) = cand {
                    let (_, item) = st.streams[i].cur.expect("a candidate");
                    // A transform refined after an item was given out may place the next one
                    // before it: it goes at that item's time, the order kept.
                    let ts = match &mut st.clock {
                        Some(c) => {
                            if ts < c.last_out {
                                c.clamped += 1;
                            }
                            c.last_out = c.last_out.max(ts);
                            c.last_out
                        }
                        None => {
                            if ts < last_ts {
                                st.told_late(i, ts, last_ts);
                            }
                            last_ts = ts;
                            ts
                        }
                    };
                    let flow = match item {
                        Item::Event => sink.event(&st.streams[i].reader.event(), ts),
                        Item::Loss(kind, count) if notices => sink.notice(&Notice {
                            kind,
                            count,
                            ts: Some(ts),
                            trace: st.traces[st.streams[i].trace].trace.index,
                            stream: st.streams[i].reader.stream_index(),
                        }),
                        Item::Loss(..) => Flow::Continue,
                    };
                    if flow == Flow::Stop {
                        summary.stopped = true;
                        return Ok(());
                    }
                    st.advance(i);
                    st.learn_ids(i);
                    continue;
                }
            }
            let mut moved = false;
            for i in blocked {
                moved |= st.fetch(i, &self.options)?;
            }
            if st.new_streams.iter().any(|&n| n) {
                st.poll_new_streams(false, &self.options)?;
                moved = true;
            }
            if moved {
                idle = idle_min;
                continue;
            }
            if sink.caught_up() == Flow::Stop {
                summary.stopped = true;
                return Ok(());
            }
            // Nothing new anywhere: streams may have been added (or the sessions closed)
            // without a flag on an index, as when no stream existed yet.
            st.poll_new_streams(true, &self.options)?;
            if st.all_done() {
                return Ok(());
            }
            std::thread::sleep(idle);
            idle = (idle * 2).min(self.options.poll);
        })();
        if let Err(e) = outcome {
            st.errors.push(Diagnostic {
                kind: pipeline::DiagnosticKind::Io,
                file: None,
                offset: None,
                message: e.to_string(),
            });
        }
        if let Some(c) = &st.clock {
            let w = if c.inc.matches() == 0 {
                Some("--sync: no TCP packet matched between the hosts: their times are their own clocks'".to_string())
            } else if c.clamped > 0 {
                Some(format!(
                    "--sync: {} event(s) given out at an earlier event's time: the transform, \
                     refined by packets received after them, placed them before it",
                    c.clamped
                ))
            } else {
                None
            };
            if let Some(w) = w {
                st.warnings.push(Diagnostic::warning(w));
            }
        }
        summary.events_read = st.events_read;
        summary.errors = std::mem::take(&mut st.errors);
        summary.warnings = std::mem::take(&mut st.warnings);
        for d in summary.errors.iter().chain(&summary.warnings) {
            sink.diagnostic(d);
        }
        sink.finish(&summary);
        summary
    }
}
