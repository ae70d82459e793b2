//! `periodlog` / `periodtop` / `periodstats` / `periodfreq`: user-defined periods (see
//! [`crate::period_expr`] for the language), possibly nested (`NAME(PARENT)`), with captures.
//!
//! The `Engine` is fed events one by one (anything implementing `EventFields`); on each
//! event it first evaluates the end expression of every open period (closing those that
//! match: their open children are dropped), then the begin expression of every definition,
//! parents before children. A definition without a parent may have several instances open at
//! once (one per CPU for the `switch` example); a child opens only inside an open instance of
//! its parent (the most recent one whose begin expression holds), which `$parent.$begin.$evt`
//! designates. Periods still open at the end of the trace are not reported.
//!
//! Output: the text and LAMI tables of lttng-analyses 0.6.1, which fails to parse nested
//! definitions; for those, `--aggregate-by PARENT` adds per-parent statistics of the selected
//! children (a tracekit table, see `DIFFERENCES.md`).

use std::cell::OnceCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use ctf::{FieldValue, FieldView, Trace};

use pipeline::{classes_where, FileSource, Flow, Sink, Source, Wanted};

use crate::driver::{Common, Range};
use crate::lami::{cell, col, colu, Cell, Metadata, Table, TableClass};
use crate::period_expr::{
    parse_captures, parse_period, py_str_repr, CExpr, Captures, PeriodDef, Ref, Scope, SlotResolve,
    Val, What,
};
use crate::stats::{histogram, histogram_f, Stats};
use crate::Error;

/// The LAMI metadata of the period analyses.
pub static METADATA: Metadata = Metadata {
    title: "Period analysis",
    description: "Log, top, statistics and frequency distribution of user-defined periods",
    tags: &["period", "log", "top", "stats", "freq"],
    table_classes: &[
        TableClass {
            name: "log",
            title: "Period log",
            columns: PERIOD_COLS,
        },
        TableClass {
            name: "top",
            title: "Period top",
            columns: PERIOD_COLS,
        },
        TableClass {
            name: "per_period_stats",
            title: "Period statistics",
            columns: &[
                col("Period", "string"),
                col("Count", "number"),
                colu("Minimum duration", "duration", "ns"),
                colu("Average duration", "duration", "ns"),
                colu("Maximum duration", "duration", "ns"),
                colu("Standard deviation", "duration", "ns"),
                colu("Total period duration", "duration", "ns"),
            ],
        },
        TableClass {
            name: "freq_duration",
            title: "Period duration frequency distribution",
            columns: &[
                colu("Lower bound", "duration", "ns"),
                colu("Upper bound", "duration", "ns"),
                col("Period count", "number"),
            ],
        },
        TableClass {
            name: "freq_count",
            title: "Period count frequency distribution",
            columns: &[
                col("Count (lower bound)", "number"),
                col("Count (upper bound)", "number"),
                colu("Period count", "number", "count"),
            ],
        },
        TableClass {
            name: "freq_ratio",
            title: "Period usage ratio frequency distribution",
            columns: &[
                col("Ratio (lower bound)", "number"),
                col("Ratio (upper bound)", "number"),
                colu("Period usage ratio", "number", "%"),
            ],
        },
        TableClass {
            name: "aggregated_stats",
            title: "Per-parent period statistics",
            columns: &[
                col("Parent begin", "timestamp"),
                col("Parent end", "timestamp"),
                col("Parent", "string"),
                col("Period", "string"),
                col("Count", "number"),
                colu("Minimum duration", "duration", "ns"),
                colu("Average duration", "duration", "ns"),
                colu("Maximum duration", "duration", "ns"),
                colu("Total period duration", "duration", "ns"),
                col("Usage ratio of the parent", "ratio"),
            ],
        },
    ],
};

const PERIOD_COLS: &[crate::lami::Column] = &[
    col("Period begin", "timestamp"),
    col("Period end", "timestamp"),
    colu("Period duration", "duration", "ns"),
    col("Period name", "string"),
    col("Begin captures", "string"),
    col("End captures", "string"),
];

/// Which command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeriodCmd {
    /// `periodlog`: every period.
    Log,
    /// `periodtop`: the longest periods.
    Top,
    /// `periodstats`: duration statistics per period name.
    Stats,
    /// `periodfreq`: duration frequency distributions.
    Freq,
}

/// Options of the period commands.
#[derive(Debug, Clone)]
pub struct PeriodOptions {
    /// `--period` definitions.
    pub periods: Vec<String>,
    /// `--period-captures` definitions.
    pub captures: Vec<String>,
    /// `--select`: only report these periods (all by default).
    pub select: Option<Vec<String>>,
    /// `--aggregate-by`: per-instance statistics of the selected children of this period.
    pub aggregate_by: Option<String>,
    /// `--group-by PERIOD.CAPTURE` (several allowed).
    pub group_by: Vec<String>,
    /// `--order-by time|duration` (periodlog).
    pub order_by_duration: bool,
    /// Only periods at least this long, ns (`--min-duration`).
    pub min_duration: Option<i64>,
    /// Only periods at most this long, ns (`--max-duration`).
    pub max_duration: Option<i64>,
    /// Rows of periodtop.
    pub limit: usize,
    /// Bins of periodfreq.
    pub freq_resolution: usize,
    /// `--freq-uniform`: the same bins for the histograms of a kind (see [`PeriodResult::tables`]).
    pub freq_uniform: bool,
    /// `--freq-series`: with `--group-by`, a table of series per period: its histogram in
    /// each group side by side.
    pub freq_series: bool,
    /// The reports that will be asked of the result (empty: any). When they are only
    /// periodstats and periodtop with a `--limit`, without `--group-by` or `--aggregate-by`,
    /// the run keeps running statistics and the top periods instead of every period, so that
    /// its memory does not grow with the trace.
    pub reports: Vec<PeriodCmd>,
}

impl Default for PeriodOptions {
    fn default() -> Self {
        PeriodOptions {
            periods: Vec::new(),
            captures: Vec::new(),
            select: None,
            aggregate_by: None,
            group_by: Vec::new(),
            order_by_duration: false,
            min_duration: None,
            max_duration: None,
            limit: 10,
            freq_resolution: 20,
            freq_uniform: false,
            freq_series: false,
            reports: Vec::new(),
        }
    }
}

/// An event as the engine sees it.
pub(crate) trait EventFields {
    fn name(&self) -> &str;
    fn ts(&self) -> i64;
    fn field(&self, scope: Scope, path: &[String]) -> Option<Val>;

    fn get(&self, w: &What) -> Option<Val> {
        match w {
            What::Name => Some(Val::Str(self.name().into())),
            What::Timestamp => Some(Val::Int(self.ts() as i128)),
            What::Field(s, p) => self.field(*s, p),
        }
    }

    /// A number identifying the event's class (its name), if the implementation has one: the
    /// engine then evaluates the expressions with the event name already compared.
    fn class_key(&self) -> Option<usize> {
        None
    }

    /// [`EventFields::get`] of `w`, which is [`Engine::whats`]`[id]`: an implementation may
    /// have prepared how to read each of them.
    fn get_what(&self, _id: usize, w: &What) -> Option<Val> {
        self.get(w)
    }
}

/// The values of a begin event that later expressions refer to.
#[derive(Debug)]
struct Snap {
    vals: Vec<Option<Val>>,
}

struct Def {
    name: String,
    parent: Option<usize>,
    depth: usize,
    begin: CExpr,
    end: CExpr,
    begin_caps: Vec<(String, CExpr)>,
    end_caps: Vec<(String, CExpr)>,
}

/// What a numbered reference of the compiled expressions designates.
#[derive(Debug, Clone, Copy)]
enum RefSlot {
    /// The current event's value of [`Engine::whats`]`[i]`.
    Cur(usize),
    /// Value `index` of the begin snapshot of the period `parents` levels up (0: its own).
    Begin { parents: u8, index: usize },
}

struct Inst {
    id: u64,
    def: usize,
    begin: i64,
    /// Own begin snapshot, then the ancestors'.
    chain: Vec<Rc<Snap>>,
    /// Ids of the ancestors (parent first).
    ancestors: Vec<u64>,
    begin_caps: Vec<(String, Val)>,
}

/// A completed period.
#[derive(Debug, Clone)]
pub struct Done {
    /// Its number, unique in a run (periods are numbered as they begin).
    pub id: u64,
    /// Its definition: an index in [`PeriodResult::names`].
    pub def: usize,
    /// The `id` of the parent period it was in.
    pub parent: Option<u64>,
    /// Time of the event that began it, ns.
    pub begin: i64,
    /// Time of the event that ended it, ns.
    pub end: i64,
    /// The values captured at its begin event (name, value).
    pub begin_caps: Vec<(String, Val)>,
    /// The values captured at its end event.
    pub end_caps: Vec<(String, Val)>,
}

impl Done {
    /// Its duration, ns.
    pub(crate) fn duration(&self) -> i64 {
        self.end - self.begin
    }
    fn capture(&self, name: &str) -> Option<&Val> {
        self.begin_caps
            .iter()
            .chain(&self.end_caps)
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

/// The current event's values of [`Engine::whats`], each read on first use (an event of another
/// class usually fails the first comparison, on its name, and has nothing else read).
type Frame = Vec<OnceCell<Option<Val>>>;

fn cur_value<'f, E: EventFields + ?Sized>(
    cur: &E,
    whats: &[What],
    frame: &'f Frame,
    w: usize,
) -> Option<&'f Val> {
    frame[w].get_or_init(|| cur.get_what(w, &whats[w])).as_ref()
}

struct Env<'a, E: EventFields + ?Sized> {
    cur: &'a E,
    whats: &'a [What],
    frame: &'a Frame,
    refs: &'a [RefSlot],
    own: Option<&'a Snap>,
    ancestors: &'a [Rc<Snap>],
}

impl<E: EventFields + ?Sized> SlotResolve for Env<'_, E> {
    fn get(&self, slot: usize) -> Option<&Val> {
        match self.refs[slot] {
            RefSlot::Cur(w) => cur_value(self.cur, self.whats, self.frame, w),
            RefSlot::Begin { parents, index } => {
                let snap = if parents == 0 {
                    self.own?
                } else {
                    self.ancestors.get(parents as usize - 1)?
                };
                snap.vals[index].as_ref()
            }
        }
    }
}

/// The sans-io period engine.
pub(crate) struct Engine {
    defs: Vec<Def>,
    /// Definitions, parents first.
    order: Vec<usize>,
    /// Every event value the expressions refer to (of the current or a begin event).
    whats: Vec<What>,
    /// What a begin snapshot keeps: indices in `whats`.
    snap: Vec<usize>,
    /// The references of the compiled expressions, by number.
    refs: Vec<RefSlot>,
    frame: Frame,
    /// Per [`EventFields::class_key`]: each definition's (begin, end) expressions for events
    /// of that name (see [`CExpr::with_consts`]): most events are decided without reading
    /// anything.
    by_class: Vec<Option<Vec<(CExpr, CExpr)>>>,
    open: Vec<Inst>,
    next_id: u64,
    /// Completed periods, in completion order.
    pub done: Vec<Done>,
}

impl Engine {
    /// Compiles `--period` and `--period-captures` definitions.
    pub fn new(periods: &[String], captures: &[String]) -> Result<Engine, Error> {
        let parsed: Vec<PeriodDef> = periods
            .iter()
            .map(|p| parse_period(p))
            .collect::<Result<_, _>>()?;
        let caps: Vec<Captures> = captures
            .iter()
            .map(|c| parse_captures(c))
            .collect::<Result<_, _>>()?;

        // Every distinct reference gets a number; every distinct value read, an index in
        // `whats`; values of begin events, an index in the snapshots.
        let mut whats: Vec<What> = Vec::new();
        let mut snap: Vec<usize> = Vec::new();
        let mut seen: Vec<Ref> = Vec::new();
        let mut refs: Vec<RefSlot> = Vec::new();
        let mut slot = |r: &Ref| -> usize {
            if let Some(i) = seen.iter().position(|x| x == r) {
                return i;
            }
            let w = whats.iter().position(|w| *w == r.what).unwrap_or_else(|| {
                whats.push(r.what.clone());
                whats.len() - 1
            });
            refs.push(if r.begin {
                let index = snap.iter().position(|&x| x == w).unwrap_or_else(|| {
                    snap.push(w);
                    snap.len() - 1
                });
                RefSlot::Begin {
                    parents: r.parents,
                    index,
                }
            } else {
                // As lttng-analyses: `$parent.` without `$begin.` is the current event.
                RefSlot::Cur(w)
            });
            seen.push(r.clone());
            refs.len() - 1
        };
        let mut defs: Vec<Def> = Vec::new();
        for p in &parsed {
            if defs.iter().any(|d| d.name == p.name) {
                return Err(Error::Duplicate(p.name.clone()));
            }
            defs.push(Def {
                name: p.name.clone(),
                parent: None,
                depth: 0,
                begin: p.begin.compile(&mut slot),
                end: p.end.compile(&mut slot),
                begin_caps: Vec::new(),
                end_caps: Vec::new(),
            });
        }
        for (i, p) in parsed.iter().enumerate() {
            if let Some(par) = &p.parent {
                let Some(j) = defs.iter().position(|d| &d.name == par) else {
                    return Err(Error::UnknownParent {
                        name: p.name.clone(),
                        parent: par.clone(),
                    });
                };
                defs[i].parent = Some(j);
            }
        }
        for i in 0..defs.len() {
            let (mut d, mut j) = (0, i);
            while let Some(p) = defs[j].parent {
                d += 1;
                j = p;
                if d > defs.len() {
                    return Err(Error::Cycle(defs[i].name.clone()));
                }
            }
            defs[i].depth = d;
        }
        for c in caps {
            let Some(d) = defs.iter_mut().find(|d| d.name == c.period) else {
                return Err(Error::UnknownCaptured(c.period));
            };
            let mut compile = |l: Vec<(String, crate::period_expr::Expr)>| {
                l.into_iter()
                    .map(|(n, e)| (n, e.compile(&mut slot)))
                    .collect::<Vec<_>>()
            };
            d.begin_caps.extend(compile(c.begin));
            d.end_caps.extend(compile(c.end));
        }
        let mut order: Vec<usize> = (0..defs.len()).collect();
        order.sort_by_key(|&i| defs[i].depth);
        let frame = vec![OnceCell::new(); whats.len()];
        Ok(Engine {
            defs,
            order,
            whats,
            snap,
            refs,
            frame,
            by_class: Vec::new(),
            open: Vec::new(),
            next_id: 0,
            done: Vec::new(),
        })
    }

    /// Names of the definitions.
    pub fn names(&self) -> Vec<&str> {
        self.defs.iter().map(|d| d.name.as_str()).collect()
    }

    /// Index of the definition called `name`.
    pub fn def_index(&self, name: &str) -> Option<usize> {
        self.defs.iter().position(|d| d.name == name)
    }

    /// Parent of definition `i`.
    pub fn parent_of(&self, i: usize) -> Option<usize> {
        self.defs[i].parent
    }

    /// Each definition's (begin, end) expressions for events named `name`.
    fn for_name(&self, name: &str) -> Vec<(CExpr, CExpr)> {
        let name = Val::Str(name.into());
        let konst = |slot: usize| match self.refs[slot] {
            RefSlot::Cur(w) if self.whats[w] == What::Name => Some(name.clone()),
            _ => None,
        };
        self.defs
            .iter()
            .map(|d| (d.begin.with_consts(&konst), d.end.with_consts(&konst)))
            .collect()
    }

    /// Whether an event named `name` can begin or end a period: when no expression can be true
    /// for that name, such events change nothing and a pass may leave them out of the read.
    pub fn wants_name(&self, name: &str) -> bool {
        self.for_name(name)
            .iter()
            .any(|(b, e)| !b.is_never() || !e.is_never())
    }

    /// Every event value the expressions refer to: [`EventFields::get_what`]'s ids index it.
    pub fn whats(&self) -> &[What] {
        &self.whats
    }

    fn caps<E: EventFields + ?Sized>(
        list: &[(String, CExpr)],
        env: &Env<'_, E>,
    ) -> Vec<(String, Val)> {
        list.iter()
            .filter_map(|(n, e)| e.value(env).map(|v| (n.clone(), v.into_owned())))
            .collect()
    }

    /// Feeds one event (in time order).
    pub fn process<E: EventFields + ?Sized>(&mut self, ev: &E) {
        let ts = ev.ts();
        for v in &mut self.frame {
            v.take();
        }
        if let Some(k) = ev.class_key() {
            if self.by_class.len() <= k {
                self.by_class.resize(k + 1, None);
            }
            if self.by_class[k].is_none() {
                self.by_class[k] = Some(self.for_name(ev.name()));
            }
        }
        let exprs = ev.class_key().and_then(|k| self.by_class[k].as_deref());
        let begin_of = |di: usize| exprs.map_or(&self.defs[di].begin, |e| &e[di].0);
        let end_of = |di: usize| exprs.map_or(&self.defs[di].end, |e| &e[di].1);
        // Ends.
        let mut closed: Vec<u64> = Vec::new();
        let mut k = 0;
        while k < self.open.len() {
            let inst = &self.open[k];
            let d = &self.defs[inst.def];
            let env = Env {
                cur: ev,
                whats: &self.whats,
                frame: &self.frame,
                refs: &self.refs,
                own: Some(&inst.chain[0]),
                ancestors: &inst.chain[1..],
            };
            if end_of(inst.def).eval(&env) {
                let end_caps = Self::caps(&d.end_caps, &env);
                let inst = self.open.remove(k);
                closed.push(inst.id);
                self.done.push(Done {
                    id: inst.id,
                    def: inst.def,
                    parent: inst.ancestors.first().copied(),
                    begin: inst.begin,
                    end: ts,
                    begin_caps: inst.begin_caps,
                    end_caps,
                });
            } else {
                k += 1;
            }
        }
        if !closed.is_empty() {
            self.open
                .retain(|i| !i.ancestors.iter().any(|a| closed.contains(a)));
        }
        // Begins, parents first.
        for oi in 0..self.order.len() {
            let di = self.order[oi];
            let d = &self.defs[di];
            let opened = match d.parent {
                None => {
                    let env = Env {
                        cur: ev,
                        whats: &self.whats,
                        frame: &self.frame,
                        refs: &self.refs,
                        own: None,
                        ancestors: &[],
                    };
                    begin_of(di)
                        .eval(&env)
                        .then(|| (Vec::new(), Vec::new(), Self::caps(&d.begin_caps, &env)))
                }
                Some(p) => self
                    .open
                    .iter()
                    .rev()
                    .filter(|i| i.def == p)
                    .find_map(|pi| {
                        let env = Env {
                            cur: ev,
                            whats: &self.whats,
                            frame: &self.frame,
                            refs: &self.refs,
                            own: None,
                            ancestors: &pi.chain,
                        };
                        begin_of(di).eval(&env).then(|| {
                            let mut anc = vec![pi.id];
                            anc.extend(&pi.ancestors);
                            (pi.chain.clone(), anc, Self::caps(&d.begin_caps, &env))
                        })
                    }),
            };
            if let Some((parent_chain, ancestors, begin_caps)) = opened {
                let snap = Rc::new(Snap {
                    vals: self
                        .snap
                        .iter()
                        .map(|&w| cur_value(ev, &self.whats, &self.frame, w).cloned())
                        .collect(),
                });
                let mut chain = vec![snap];
                chain.extend(parent_chain);
                self.next_id += 1;
                self.open.push(Inst {
                    id: self.next_id,
                    def: di,
                    begin: ts,
                    chain,
                    ancestors,
                    begin_caps,
                });
            }
        }
    }
}

/// A CTF event with its timestamp, and how to read the engine's values in events of its class
/// (None: by name, each time).
pub(crate) struct CtfEvent<'a, 'b> {
    pub ev: &'b ctf::Event<'a>,
    pub ts: i64,
    pub access: Option<&'b ClassAccess>,
}

/// A scope of an event, where a field is looked up.
#[derive(Debug, Clone, Copy)]
enum Root {
    Payload,
    Specific,
    Common,
    PktCtx,
    Header,
    PktHeader,
}

impl Root {
    fn view<'a>(self, e: &ctf::Event<'a>) -> Option<FieldView<'a>> {
        match self {
            Root::Payload => e.payload(),
            Root::Specific => e.specific_context(),
            Root::Common => e.common_context(),
            Root::PktCtx => e.packet_context(),
            Root::Header => e.header(),
            Root::PktHeader => e.packet_header(),
        }
    }

    /// Where `scope` looks, in order (see [`CtfEvent::field`]).
    fn of(scope: Scope) -> &'static [Root] {
        match scope {
            Scope::Payload => &[Root::Payload],
            Scope::Ctx => &[Root::Specific, Root::Common],
            Scope::StreamCtx => &[Root::Common],
            Scope::Header => &[Root::Header],
            Scope::PktCtx => &[Root::PktCtx],
            Scope::PktHeader => &[Root::PktHeader],
            Scope::Any => &[
                Root::Payload,
                Root::Specific,
                Root::Common,
                Root::PktCtx,
                Root::Header,
                Root::PktHeader,
            ],
        }
    }
}

/// How to read one of the engine's values in the events of a class.
#[derive(Debug, Clone)]
enum Access {
    Name,
    Timestamp,
    /// No scope has the field: always None.
    Missing,
    /// An integer member of a scope, by position.
    Int {
        root: Root,
        index: usize,
    },
    /// Member `index` of a scope, then the members named `rest` (nested structures).
    Member {
        root: Root,
        index: usize,
        rest: Vec<String>,
    },
    /// By name, on each event (what the others are equivalent to).
    ByName(Scope, Vec<String>),
}

/// How to read each of the engine's values ([`Engine::whats`]) in the events of one class,
/// worked out on the first event of the class: the scopes' structures (hence the positions of
/// their members) are the same in every event of a class. Reading a member by position is an
/// index, looking it up by name a walk over the members before it.
#[derive(Debug, Clone)]
pub(crate) struct ClassAccess {
    /// A number of its own among the classes of a run ([`EventFields::class_key`]).
    pub key: usize,
    name: Val,
    access: Vec<Access>,
}

/// Position of the member `name` (or `_name`, as [`lookup`] falls back to) of a structure.
fn member_index(root: &FieldView<'_>, name: &str) -> Option<usize> {
    let FieldValue::Struct(m) = root.value() else {
        return None;
    };
    let names: Vec<&str> = m.map(|(n, _)| n).collect();
    names
        .iter()
        .position(|n| *n == name)
        .or_else(|| names.iter().position(|n| n.strip_prefix('_') == Some(name)))
}

impl ClassAccess {
    /// Prepares the reads of `whats` in the events of `ev`'s class.
    pub fn new(ev: &ctf::Event<'_>, whats: &[What], key: usize) -> ClassAccess {
        let access = whats
            .iter()
            .map(|w| match w {
                What::Name => Access::Name,
                What::Timestamp => Access::Timestamp,
                What::Field(scope, path) => Self::field(ev, *scope, path),
            })
            .collect();
        ClassAccess {
            key,
            name: Val::Str(ev.name().into()),
            access,
        }
    }

    fn field(ev: &ctf::Event<'_>, scope: Scope, path: &[String]) -> Access {
        for &root in Root::of(scope) {
            let Some(view) = root.view(ev) else { continue };
            // As `lookup`: the first scope holding the whole path.
            if lookup(Some(view), path).is_none() {
                continue;
            }
            let Some(index) = member_index(&view, &path[0]) else {
                break;
            };
            let Some(m) = view.member_at(index) else {
                break;
            };
            let access = if path.len() == 1
                && matches!(m.value(), FieldValue::UInt { .. } | FieldValue::SInt { .. })
            {
                Access::Int { root, index }
            } else {
                Access::Member {
                    root,
                    index,
                    rest: path[1..].to_vec(),
                }
            };
            // Only when reading by position gives what the lookup by name gives.
            let by_name = CtfEvent {
                ev,
                ts: 0,
                access: None,
            }
            .field(scope, path);
            return if Self::read(&access, ev) == by_name {
                access
            } else {
                Access::ByName(scope, path.to_vec())
            };
        }
        if lookup_any(ev, scope, path).is_none() {
            Access::Missing
        } else {
            Access::ByName(scope, path.to_vec())
        }
    }

    fn read(a: &Access, ev: &ctf::Event<'_>) -> Option<Val> {
        match a {
            Access::Int { root, index } => root.view(ev)?.int_member(*index).map(Val::Int),
            Access::Member { root, index, rest } => {
                let mut f = root.view(ev)?.member_at(*index)?;
                for p in rest {
                    f = f.field(p)?;
                }
                to_val(&f)
            }
            Access::ByName(scope, path) => to_val(&lookup_any(ev, *scope, path)?),
            Access::Missing | Access::Name | Access::Timestamp => None,
        }
    }
}

fn to_val(f: &FieldView<'_>) -> Option<Val> {
    match f.value() {
        FieldValue::Str(_) => f.as_str().map(|s| Val::Str(s.into())),
        FieldValue::Float(v) => Some(Val::Float(v)),
        FieldValue::Variant(_, v) => to_val(&v),
        FieldValue::Optional(o) => o.and_then(|v| to_val(&v)),
        FieldValue::Array(_) | FieldValue::Struct(_) | FieldValue::Blob(_) => None,
        _ => f.as_i128().map(Val::Int),
    }
}

fn lookup<'a>(root: Option<FieldView<'a>>, path: &[String]) -> Option<FieldView<'a>> {
    let root = root?;
    let first = &path[0];
    let mut f = root
        .field(first)
        .or_else(|| root.field(&format!("_{first}")))?;
    for p in &path[1..] {
        f = f.field(p)?;
    }
    Some(f)
}

/// The field at `path` in the scopes `scope` designates, by name.
fn lookup_any<'a>(e: &ctf::Event<'a>, scope: Scope, path: &[String]) -> Option<FieldView<'a>> {
    match scope {
        Scope::Payload => lookup(e.payload(), path),
        Scope::Ctx => {
            lookup(e.specific_context(), path).or_else(|| lookup(e.common_context(), path))
        }
        Scope::StreamCtx => lookup(e.common_context(), path),
        Scope::Header => lookup(e.header(), path),
        Scope::PktCtx => lookup(e.packet_context(), path),
        Scope::PktHeader => lookup(e.packet_header(), path),
        Scope::Any => lookup(e.payload(), path)
            .or_else(|| lookup(e.specific_context(), path))
            .or_else(|| lookup(e.common_context(), path))
            .or_else(|| lookup(e.packet_context(), path))
            .or_else(|| lookup(e.header(), path))
            .or_else(|| lookup(e.packet_header(), path)),
    }
}

impl EventFields for CtfEvent<'_, '_> {
    fn name(&self) -> &str {
        self.ev.name()
    }
    fn ts(&self) -> i64 {
        self.ts
    }
    fn field(&self, scope: Scope, path: &[String]) -> Option<Val> {
        to_val(&lookup_any(self.ev, scope, path)?)
    }
    fn class_key(&self) -> Option<usize> {
        self.access.map(|a| a.key)
    }
    fn get_what(&self, id: usize, w: &What) -> Option<Val> {
        let Some(a) = self.access else {
            return self.get(w);
        };
        match &a.access[id] {
            Access::Name => Some(a.name.clone()),
            Access::Timestamp => Some(Val::Int(self.ts as i128)),
            x => ClassAccess::read(x, self.ev),
        }
    }
}

/// The outcome of a run: the completed periods and what is needed to report them.
pub struct PeriodResult {
    /// The time range of the events read.
    pub range: Range,
    /// Errors met while reading (each names its file and byte offset): the results cover
    /// every event that could be read.
    pub errors: Vec<String>,
    /// The names of the period definitions, in `--period` order.
    pub names: Vec<String>,
    /// Per definition, its parent definition (an index in `names`).
    pub parents: Vec<Option<usize>>,
    /// The completed periods; only the top ones (periodtop) when `stats` is there.
    pub done: Vec<Done>,
    /// Per definition, the statistics of its completed periods within the duration bounds,
    /// when the run kept these instead of every period (see [`PeriodOptions::reports`]).
    pub stats: Option<Vec<Stats>>,
    /// Definitions reported (`--select`).
    pub selected: Vec<usize>,
    aggregate_by: Option<usize>,
    group_by: Vec<(usize, String)>,
    opts: PeriodOptions,
}

/// The names of `--period` definitions, in order, or the error a run with them (and these
/// `--period-captures`) would give, without reading a trace.
pub fn definition_names(periods: &[String], captures: &[String]) -> Result<Vec<String>, Error> {
    Ok(Engine::new(periods, captures)?
        .names()
        .iter()
        .map(|n| n.to_string())
        .collect())
}

/// Runs the period engine over `traces`.
pub fn run(
    traces: &[Arc<Trace>],
    common: &Common,
    opts: &PeriodOptions,
) -> Result<PeriodResult, Error> {
    let engine = Engine::new(&opts.periods, &opts.captures)?;
    let idx = |n: &str| {
        engine
            .def_index(n)
            .ok_or_else(|| Error::UnknownPeriod(n.to_string()))
    };
    let selected = match &opts.select {
        Some(s) => s.iter().map(|n| idx(n)).collect::<Result<Vec<_>, _>>()?,
        None => (0..engine.names().len()).collect(),
    };
    let aggregate_by = opts.aggregate_by.as_deref().map(idx).transpose()?;
    let mut group_by = Vec::new();
    for g in &opts.group_by {
        let Some((p, c)) = g.split_once('.') else {
            return Err(Error::BadGroup(g.clone()));
        };
        group_by.push((idx(p)?, c.to_string()));
    }
    let reduce = !opts.reports.is_empty()
        && opts.reports.iter().all(|c| match c {
            PeriodCmd::Stats => true,
            PeriodCmd::Top => opts.limit > 0,
            _ => false,
        })
        && group_by.is_empty()
        && aggregate_by.is_none();
    let defs = engine.defs.len();
    let mut engine = Some(engine);
    let mut run_pass = |reduce: bool| -> Result<Option<PassOut>, Error> {
        let reducer = reduce.then(|| Reducer::new(opts, &selected, defs));
        let engine = match engine.take() {
            Some(e) => e,
            None => Engine::new(&opts.periods, &opts.captures)?,
        };
        pass(traces, common, engine, reducer)
    };
    let out = match run_pass(reduce)? {
        Some(out) => out,
        // Time went backwards: the statistics kept so far may not have taken the periods in
        // the order of their begin times; the pass that keeps every period sorts them.
        None => run_pass(false)?.expect("a pass keeping every period completes"),
    };
    let (mut engine, first, last, errors, reduced) = out;
    let (done, stats) = match reduced {
        Some(r) => {
            let (top, stats) = r.finish();
            (top, Some(stats))
        }
        None => (std::mem::take(&mut engine.done), None),
    };
    Ok(PeriodResult {
        range: Range {
            begin: first,
            end: last,
        },
        errors,
        names: engine.names().iter().map(|s| s.to_string()).collect(),
        parents: (0..engine.defs.len())
            .map(|i| engine.parent_of(i))
            .collect(),
        done,
        stats,
        selected,
        aggregate_by,
        group_by,
        opts: opts.clone(),
    })
}

/// What a pass returns: the engine, the first and last event times, the read errors and the
/// reducer if there was one.
type PassOut = (Engine, i64, i64, Vec<String>, Option<Reducer>);

/// One pass of `engine` over `traces`, completed periods handed to `reducer` if there is one.
/// Ok(None): a reducing pass that stopped at a timestamp regression.
fn pass(
    traces: &[Arc<Trace>],
    common: &Common,
    engine: Engine,
    reducer: Option<Reducer>,
) -> Result<Option<PassOut>, Error> {
    let source = FileSource::new(traces.to_vec(), common.read_options());
    let mut sink = PeriodSink {
        common,
        engine,
        reducer,
        first: None,
        last: 0,
        regressed: false,
        cpu_cache: Default::default(),
        classes: Default::default(),
    };
    let summary = source.run(&mut sink);
    if sink.regressed {
        return Ok(None);
    }
    let Some(first) = sink.first else {
        return Err(summary.nothing_read().into());
    };
    let last = summary.last_in_range.unwrap_or(sink.last);
    let errors = summary.error_strings();
    Ok(Some((sink.engine, first, last, errors, sink.reducer)))
}

/// The period engine fed by a read: the events of `--cpu`'s CPUs, in time order.
struct PeriodSink<'a> {
    common: &'a Common,
    engine: Engine,
    /// Takes the completed periods as they come, when the run does not keep them all.
    reducer: Option<Reducer>,
    first: Option<i64>,
    last: i64,
    /// A reducing pass stopped where time went backwards.
    regressed: bool,
    /// Per trace and stream: its CPU.
    cpu_cache: kernel::IntMap<(usize, usize), Option<u32>>,
    /// Per trace and event class (`Event::class_index`).
    classes: kernel::IntMap<(usize, (usize, usize)), ClassAccess>,
}

impl Sink for PeriodSink<'_> {
    fn wanted(&self, trace: &Trace) -> Wanted {
        // With `--cpu`, the range ends at the last event of those CPUs, which the events left
        // out of the read do not tell.
        if self.common.cpus.is_some() || self.common.read_every_event {
            return None;
        }
        Some(classes_where(trace, |name| self.engine.wants_name(name)))
    }

    #[inline(always)]
    fn event(&mut self, ev: &ctf::Event<'_>, ts: i64) -> Flow {
        if let Some(cpus) = &self.common.cpus {
            let key = (ev.trace().index, ev.stream_index());
            let cpu = *self
                .cpu_cache
                .entry(key)
                .or_insert_with(|| kernel::recorded_cpu(ev));
            if cpu.is_some_and(|c| !cpus.contains(&c)) {
                return Flow::Continue;
            }
        }
        if self.reducer.is_some() && self.first.is_some() && ts < self.last {
            self.regressed = true;
            return Flow::Stop;
        }
        self.first.get_or_insert(ts);
        self.last = ts;
        let n = self.classes.len();
        let engine = &mut self.engine;
        let access = self
            .classes
            .entry((ev.trace().index, ev.class_index()))
            .or_insert_with(|| ClassAccess::new(ev, engine.whats(), n));
        engine.process(&CtfEvent {
            ev,
            ts,
            access: Some(access),
        });
        if let Some(r) = &mut self.reducer {
            if !engine.done.is_empty() {
                r.add(
                    &mut engine.done,
                    engine.open.first().map(|i| (i.begin, i.id)),
                );
            }
        }
        Flow::Continue
    }
}

/// Ordered by what periodtop reports first: longest, then earliest, then first begun.
struct TopOrder(Done);

impl TopOrder {
    fn key(&self) -> (std::cmp::Reverse<i64>, i64, u64) {
        let d = &self.0;
        (std::cmp::Reverse(d.duration()), d.begin, d.id)
    }
}

impl PartialEq for TopOrder {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for TopOrder {}
impl PartialOrd for TopOrder {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for TopOrder {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key().cmp(&o.key())
    }
}

/// Running results of periodstats and periodtop, for a run that does not keep every period.
/// The statistics must take the periods in the order the reports sort them, (begin, id), as
/// the floating-point mean and deviation depend on it: completed periods wait in `pending`
/// until no open period can come before them.
struct Reducer {
    min: Option<i64>,
    max: Option<i64>,
    /// Per definition: whether it is reported (`--select`).
    selected: Vec<bool>,
    stats: Vec<Stats>,
    /// (begin, id, definition, duration), smallest first.
    pending: std::collections::BinaryHeap<std::cmp::Reverse<(i64, u64, usize, i64)>>,
    /// The `limit` first periods in [`TopOrder`], last first; None without periodtop.
    top: Option<(usize, std::collections::BinaryHeap<TopOrder>)>,
}

impl Reducer {
    fn new(opts: &PeriodOptions, selected: &[usize], defs: usize) -> Reducer {
        let mut sel = vec![false; defs];
        for &i in selected {
            sel[i] = true;
        }
        Reducer {
            min: opts.min_duration,
            max: opts.max_duration,
            selected: sel,
            stats: vec![Stats::default(); defs],
            pending: Default::default(),
            top: opts
                .reports
                .contains(&PeriodCmd::Top)
                .then(|| (opts.limit, Default::default())),
        }
    }

    /// Takes the periods completed in `done`; `oldest_open` is the (begin, id) of the oldest
    /// open period: with time going forward, every period completed later comes after it.
    fn add(&mut self, done: &mut Vec<Done>, oldest_open: Option<(i64, u64)>) {
        for d in done.drain(..) {
            let dur = d.duration();
            if !self.selected[d.def]
                || self.min.is_some_and(|m| dur < m)
                || self.max.is_some_and(|m| dur > m)
            {
                continue;
            }
            self.pending
                .push(std::cmp::Reverse((d.begin, d.id, d.def, dur)));
            if let Some((limit, top)) = &mut self.top {
                top.push(TopOrder(d));
                if top.len() > *limit {
                    top.pop();
                }
            }
        }
        while let Some(std::cmp::Reverse((begin, id, def, dur))) = self.pending.peek().copied() {
            if oldest_open.is_some_and(|o| (begin, id) > o) {
                break;
            }
            self.pending.pop();
            self.stats[def].add(dur);
        }
    }

    /// The top periods and the statistics per definition.
    fn finish(mut self) -> (Vec<Done>, Vec<Stats>) {
        self.add(&mut Vec::new(), None);
        let top = self
            .top
            .map(|(_, t)| t.into_iter().map(|t| t.0).collect())
            .unwrap_or_default();
        (top, self.stats)
    }
}

fn caps_repr(c: &[(String, Val)]) -> String {
    let items: Vec<String> = c
        .iter()
        .map(|(k, v)| format!("{}: {}", py_str_repr(k), v.py_repr()))
        .collect();
    format!("{{{}}}", items.join(", "))
}

fn period_row(d: &Done, name: &str) -> Vec<Cell> {
    vec![
        cell::timestamp(d.begin),
        cell::timestamp(d.end),
        cell::duration_int(d.duration()),
        cell::string(name),
        cell::string(caps_repr(&d.begin_caps)),
        cell::string(caps_repr(&d.end_caps)),
    ]
}

/// One group of periods (all of them, or those with given capture values).
struct Group<'a> {
    label: Option<String>,
    periods: Vec<&'a Done>,
}

impl PeriodResult {
    fn groups(&self) -> Vec<Group<'_>> {
        let mut sorted: Vec<&Done> = self
            .done
            .iter()
            .filter(|d| {
                let dur = d.duration();
                self.opts.min_duration.is_none_or(|m| dur >= m)
                    && self.opts.max_duration.is_none_or(|m| dur <= m)
            })
            .collect();
        sorted.sort_by_key(|d| (d.begin, d.id));
        let mut out = vec![Group {
            label: None,
            periods: sorted.clone(),
        }];
        if self.group_by.is_empty() {
            return out;
        }
        // Groups in order of first appearance; a period without the capture (or of another
        // definition) is in no group.
        let mut index: HashMap<String, usize> = HashMap::new();
        for d in &self.done {
            let mut parts = Vec::new();
            for (def, cap) in &self.group_by {
                if d.def != *def {
                    break;
                }
                match d.capture(cap) {
                    Some(v) => parts.push(format!("{}.{} = {}", self.names[*def], cap, v)),
                    None => break,
                }
            }
            if parts.len() != self.group_by.len() {
                continue;
            }
            let label = parts.join(", ");
            if !index.contains_key(&label) {
                index.insert(label.clone(), out.len());
                out.push(Group {
                    label: Some(label),
                    periods: Vec::new(),
                });
            }
        }
        for d in sorted {
            let mut parts = Vec::new();
            for (def, cap) in &self.group_by {
                if d.def != *def {
                    break;
                }
                match d.capture(cap) {
                    Some(v) => parts.push(format!("{}.{} = {}", self.names[*def], cap, v)),
                    None => break,
                }
            }
            if let Some(&g) = index.get(&parts.join(", ")) {
                out[g].periods.push(d);
            }
        }
        out
    }

    fn selected(&self, d: &Done) -> bool {
        self.selected.contains(&d.def)
    }

    fn stats_of(&self, periods: &[&Done]) -> Vec<(usize, Stats)> {
        // Kept while running: there is one group then, of every period.
        if let Some(st) = &self.stats {
            return self.selected.iter().map(|&i| (i, st[i])).collect();
        }
        self.selected
            .iter()
            .map(|&i| {
                let mut s = Stats::default();
                for d in periods.iter().filter(|d| d.def == i) {
                    s.add(d.duration());
                }
                (i, s)
            })
            .collect()
    }

    /// Per-parent-instance statistics of the selected children (`--aggregate-by`).
    fn aggregated(&self, periods: &[&Done]) -> Vec<Vec<Cell>> {
        let Some(agg) = self.aggregate_by else {
            return Vec::new();
        };
        let by_id: HashMap<u64, &Done> = self.done.iter().map(|d| (d.id, d)).collect();
        // Statistics of the selected children per ancestor instance of the aggregating period.
        let mut per: HashMap<(u64, usize), Stats> = HashMap::new();
        for d in self
            .done
            .iter()
            .filter(|d| d.def != agg && self.selected.contains(&d.def))
        {
            let mut cur = d.parent;
            while let Some(id) = cur {
                let Some(p) = by_id.get(&id) else { break };
                if p.def == agg {
                    per.entry((id, d.def)).or_default().add(d.duration());
                    break;
                }
                cur = p.parent;
            }
        }
        let mut rows = Vec::new();
        for p in periods.iter().filter(|d| d.def == agg) {
            for &child in &self.selected {
                // Only the parent instances holding some of these children.
                let Some(s) = per.get(&(p.id, child)) else {
                    continue;
                };
                let pd = p.duration().max(1) as f64;
                rows.push(vec![
                    cell::timestamp(p.begin),
                    cell::timestamp(p.end),
                    cell::string(&self.names[agg]),
                    cell::string(&self.names[child]),
                    cell::number(s.count),
                    if s.count > 0 {
                        cell::duration_int(s.min)
                    } else {
                        cell::unknown()
                    },
                    if s.count > 0 {
                        cell::duration(s.avg())
                    } else {
                        cell::unknown()
                    },
                    if s.count > 0 {
                        cell::duration_int(s.max)
                    } else {
                        cell::unknown()
                    },
                    cell::duration_int(s.sum as i64),
                    cell::ratio(s.sum as f64 / pd),
                ]);
            }
        }
        rows
    }

    fn log_rows<'a>(&self, g: &Group<'a>, cmd: PeriodCmd) -> Vec<&'a Done> {
        let mut v: Vec<&Done> = g
            .periods
            .iter()
            .copied()
            .filter(|d| self.selected(d))
            .collect();
        if cmd == PeriodCmd::Top {
            v.sort_by(|a, b| b.duration().cmp(&a.duration()).then(a.begin.cmp(&b.begin)));
            if self.opts.limit > 0 {
                v.truncate(self.opts.limit);
            }
        } else if self.opts.order_by_duration {
            v.sort_by(|a, b| b.duration().cmp(&a.duration()).then(a.begin.cmp(&b.begin)));
        }
        v
    }

    fn freq(&self, g: &Group<'_>, def: usize) -> Vec<(f64, f64, u64)> {
        let vals: Vec<i64> = g
            .periods
            .iter()
            .filter(|d| d.def == def)
            .map(|d| d.duration())
            .collect();
        let (mut lo, mut hi) = (self.opts.min_duration, self.opts.max_duration);
        if self.opts.freq_uniform || self.opts.freq_series {
            // The same bins for every period's histogram: over every (kept) period.
            let all = self.groups().swap_remove(0).periods;
            lo = lo.or(all.iter().map(|d| d.duration()).min());
            hi = hi.or(all.iter().map(|d| d.duration()).max());
        }
        histogram(&vals, self.opts.freq_resolution, lo, hi)
    }

    /// The selected definitions, by name (the order of lttng-analyses's histograms).
    fn selected_by_name(&self) -> Vec<usize> {
        let mut v = self.selected.clone();
        v.sort_by(|a, b| self.names[*a].cmp(&self.names[*b]));
        v
    }

    /// `root/…/name` of definition `i`.
    fn full_path(&self, i: usize) -> String {
        match self.parents[i] {
            Some(p) => format!("{}/{}", self.full_path(p), self.names[i]),
            None => self.names[i].clone(),
        }
    }

    fn descendants(&self, p: usize, out: &mut Vec<usize>) {
        for c in 0..self.names.len() {
            if self.parents[c] == Some(p) {
                out.push(c);
                self.descendants(c, out);
            }
        }
    }

    /// The child-period values of nested periods: for each (parent definition, descendant
    /// definition) pair, over the parent's instances holding some of these descendants, the
    /// descendants' total duration, their number and the ratio (%) of the parent's duration
    /// they cover; and the number of the parent's instances (the "global" distributions count
    /// the instances without any as 0). Only periods reachable from a root period through
    /// kept periods (duration filters) count, as in lttng-analyses.
    fn child_values(&self, periods: &[&Done]) -> Vec<ChildValues> {
        let by_id: HashMap<u64, &Done> = periods.iter().map(|d| (d.id, *d)).collect();
        let reachable = |d: &Done| {
            let mut cur = d.parent;
            while let Some(id) = cur {
                match by_id.get(&id) {
                    Some(p) => cur = p.parent,
                    None => return false,
                }
            }
            true
        };
        let kept: Vec<&Done> = periods.iter().copied().filter(|d| reachable(d)).collect();
        let mut instances: HashMap<usize, usize> = HashMap::new();
        // (ancestor instance, descendant definition) → (total duration, count).
        let mut per: HashMap<(u64, usize), (i64, u64)> = HashMap::new();
        for d in &kept {
            *instances.entry(d.def).or_default() += 1;
            let mut cur = d.parent;
            while let Some(id) = cur {
                let e = per.entry((id, d.def)).or_default();
                e.0 += d.duration();
                e.1 += 1;
                cur = by_id[&id].parent;
            }
        }
        let mut defs: Vec<usize> = (0..self.names.len()).collect();
        defs.sort_by(|a, b| self.names[*a].cmp(&self.names[*b]));
        let mut out = Vec::new();
        for p in defs {
            if self.aggregate_by.is_some_and(|a| a != p) {
                continue;
            }
            let mut desc = Vec::new();
            self.descendants(p, &mut desc);
            for c in desc.into_iter().filter(|c| self.selected.contains(c)) {
                let mut v = ChildValues {
                    parent: p,
                    child: c,
                    durations: Vec::new(),
                    counts: Vec::new(),
                    ratios: Vec::new(),
                    instances: instances.get(&p).copied().unwrap_or(0),
                };
                for inst in kept.iter().filter(|d| d.def == p) {
                    if let Some(&(sum, n)) = per.get(&(inst.id, c)) {
                        v.durations.push(sum);
                        v.counts.push(n as f64);
                        let pd = inst.duration();
                        v.ratios.push(if pd > 0 {
                            sum as f64 / pd as f64 * 100.0
                        } else {
                            0.0
                        });
                    }
                }
                if !v.durations.is_empty() {
                    out.push(v);
                }
            }
        }
        out
    }

    /// The child-period histograms of nested periods (lttng-analyses's periodfreq): per
    /// (parent, descendant) pair, the distributions of the descendants' duration, number and
    /// usage ratio per parent instance, then the same over every parent instance ("global").
    /// In lttng-analyses's order: durations, global durations, numbers, global numbers,
    /// ratios, global ratios (each list in pair order). Empty histograms are left out.
    fn child_freq_tables(&self, periods: &[&Done]) -> Vec<ChildFreq> {
        let vals = self.child_values(periods);
        let bins = self.opts.freq_resolution;
        let uniform = self.opts.freq_uniform || self.opts.freq_series;
        let zeros = |v: &ChildValues| v.instances.saturating_sub(v.durations.len());
        let mut out = Vec::new();
        for global in [false, true] {
            // Durations (ns).
            let series: Vec<Vec<i64>> = vals
                .iter()
                .map(|v| {
                    let mut d = v.durations.clone();
                    if global {
                        d.extend(std::iter::repeat_n(0, zeros(v)));
                    }
                    d
                })
                .collect();
            let (lo, hi) = if uniform {
                let all = series.iter().flatten();
                (all.clone().min().copied(), all.max().copied())
            } else {
                (None, None)
            };
            for (v, d) in vals.iter().zip(&series) {
                let h = histogram(d, bins, lo, hi);
                out.push(ChildFreq {
                    kind: ChildKind::Duration,
                    global,
                    parent: v.parent,
                    child: v.child,
                    bins: h,
                });
            }
        }
        for kind in [ChildKind::Count, ChildKind::Ratio] {
            for global in [false, true] {
                let series: Vec<Vec<f64>> = vals
                    .iter()
                    .map(|v| {
                        let mut d = if kind == ChildKind::Count {
                            v.counts.clone()
                        } else {
                            v.ratios.clone()
                        };
                        if global {
                            d.extend(std::iter::repeat_n(0.0, zeros(v)));
                        }
                        d
                    })
                    .collect();
                let (lo, hi) = if uniform {
                    let all = series.iter().flatten().copied();
                    (all.clone().reduce(f64::min), all.reduce(f64::max))
                } else {
                    (None, None)
                };
                for (v, d) in vals.iter().zip(&series) {
                    out.push(ChildFreq {
                        kind,
                        global,
                        parent: v.parent,
                        child: v.child,
                        bins: histogram_f(d, bins, lo, hi),
                    });
                }
            }
        }
        out.retain(|f| !f.bins.is_empty());
        out
    }

    /// The subtitle of a child-period histogram.
    fn child_subtitle(&self, f: &ChildFreq) -> String {
        let what = match (f.kind, f.global) {
            (ChildKind::Duration, false) => "Duration",
            (ChildKind::Duration, true) => "Global duration",
            (ChildKind::Count, false) => "Number",
            (ChildKind::Count, true) => "Global number",
            (ChildKind::Ratio, false) => "Usage ratio",
            (ChildKind::Ratio, true) => "Global usage ratio",
        };
        format!(
            "{what} of {} per {}",
            self.full_path(f.child),
            self.full_path(f.parent)
        )
    }

    /// The LAMI result tables of `cmd`.
    pub fn tables(&self, cmd: PeriodCmd) -> Vec<Table> {
        let (b, e) = (self.range.begin, self.range.end);
        let mut out = Vec::new();
        // periodfreq: each group's histogram of each selected period, for --freq-series.
        let mut per_group: Vec<(Option<String>, Vec<Table>)> = Vec::new();
        for g in self.groups() {
            let suffix = g.label.as_ref().map(|l| format!(" [{l}]"));
            let mut push = |mut t: Table, title: &str| {
                if let Some(s) = &suffix {
                    t.title = Some(format!("{title}{s}"));
                }
                out.push(t);
            };
            match cmd {
                PeriodCmd::Log | PeriodCmd::Top => {
                    let (class, title) = if cmd == PeriodCmd::Log {
                        ("log", "Period log")
                    } else {
                        ("top", "Period top")
                    };
                    let mut t = Table::new(class, b, e);
                    for d in self.log_rows(&g, cmd) {
                        t.rows.push(period_row(d, &self.names[d.def]));
                    }
                    push(t, title);
                }
                PeriodCmd::Stats => {
                    let mut t = Table::new("per_period_stats", b, e);
                    for (i, s) in self.stats_of(&g.periods) {
                        if s.count == 0 {
                            continue;
                        }
                        t.rows.push(vec![
                            cell::string(&self.names[i]),
                            cell::number(s.count),
                            cell::duration_int(s.min),
                            cell::duration(s.avg()),
                            cell::duration_int(s.max),
                            s.stdev().map_or_else(cell::unknown, cell::duration),
                            cell::duration_int(s.sum as i64),
                        ]);
                    }
                    push(t, "Period statistics");
                }
                PeriodCmd::Freq => {
                    let mut freqs = Vec::new();
                    for i in self.selected_by_name() {
                        let mut t = Table::new("freq_duration", b, e);
                        let title = format!(
                            "Period duration frequency distribution [Duration of period: {}]",
                            self.names[i]
                        );
                        t.title = Some(title.clone());
                        for (lo, hi, c) in self.freq(&g, i) {
                            t.rows.push(vec![
                                cell::duration(lo),
                                cell::duration(hi),
                                cell::number(c),
                            ]);
                        }
                        freqs.push(t);
                    }
                    if g.label.is_none() {
                        for f in self.child_freq_tables(&g.periods) {
                            let (class, title) = match f.kind {
                                ChildKind::Duration => {
                                    ("freq_duration", "Period duration frequency distribution")
                                }
                                ChildKind::Count => {
                                    ("freq_count", "Period count frequency distribution")
                                }
                                ChildKind::Ratio => {
                                    ("freq_ratio", "Period usage ratio frequency distribution")
                                }
                            };
                            let mut t = Table::new(class, b, e);
                            t.title = Some(format!("{title} [{}]", self.child_subtitle(&f)));
                            for (lo, hi, c) in f.bins {
                                t.rows.push(if f.kind == ChildKind::Duration {
                                    vec![cell::duration(lo), cell::duration(hi), cell::number(c)]
                                } else {
                                    vec![cell::number_f(lo), cell::number_f(hi), cell::number(c)]
                                });
                            }
                            freqs.push(t);
                        }
                    }
                    per_group.push((g.label.clone(), freqs[..self.selected.len()].to_vec()));
                    for t in freqs {
                        push(t.clone(), t.title.as_deref().unwrap_or(""));
                    }
                }
            }
            let agg = self.aggregated(&g.periods);
            if !agg.is_empty() {
                let mut t = Table::new("aggregated_stats", b, e);
                t.rows = agg;
                push(t, "Per-parent period statistics");
            }
        }
        if self.opts.freq_series {
            out.extend(self.series_tables(&per_group));
        }
        out
    }

    /// `--freq-series` tables of periodfreq: with `--group-by`, as lttng-analyses, one table
    /// per period putting its histograms in every group side by side; else one table of every
    /// period's histogram.
    fn series_tables(&self, per_group: &[(Option<String>, Vec<Table>)]) -> Vec<Table> {
        // The grouped histograms, titled by group (the series' column titles).
        let grouped: Vec<Vec<Table>> = per_group
            .iter()
            .filter_map(|(label, tables)| {
                let label = label.as_ref()?;
                Some(
                    tables
                        .iter()
                        .map(|t| {
                            let mut t = t.clone();
                            t.title = Some(format!("{} [{label}]", t.class));
                            t
                        })
                        .collect(),
                )
            })
            .collect();
        if grouped.is_empty() {
            return per_group
                .first()
                .and_then(|(_, t)| {
                    crate::lami::series_table(
                        "Period duration frequency distributions",
                        crate::irq::FREQ_BOUNDS,
                        "count",
                        t,
                    )
                })
                .into_iter()
                .collect();
        }
        let mut out = Vec::new();
        for (k, i) in self.selected_by_name().into_iter().enumerate() {
            let tables: Vec<Table> = grouped.iter().map(|g| g[k].clone()).collect();
            out.extend(crate::lami::series_table(
                &format!(
                    "Period '{}' duration frequency distribution per group",
                    self.names[i]
                ),
                crate::irq::FREQ_BOUNDS,
                "count",
                &tables,
            ));
        }
        out
    }

    fn tree(&self) -> String {
        let mut s = String::from("Period tree:\n");
        fn walk(r: &PeriodResult, parent: Option<usize>, depth: usize, s: &mut String) {
            for i in 0..r.names.len() {
                if r.parents[i] == parent {
                    s.push_str(&"  ".repeat(depth));
                    s.push_str(&r.names[i]);
                    s.push('\n');
                    walk(r, Some(i), depth + 1, s);
                }
            }
        }
        walk(self, None, 0, &mut s);
        s
    }

    /// The text output of `cmd`, as lttng-analyses prints it (without its "Checking the trace
    /// for lost events..." line).
    pub fn text(&self, cmd: PeriodCmd) -> String {
        let mut out = format!(
            "Timerange: [{}, {}]\n",
            crate::text::fmt_ts(self.range.begin),
            crate::text::fmt_ts(self.range.end)
        );
        for g in self.groups() {
            if let Some(l) = &g.label {
                out.push_str(&format!("\n\n### Group: {l} ###\n"));
            }
            match cmd {
                PeriodCmd::Log | PeriodCmd::Top => {
                    out.push_str(if cmd == PeriodCmd::Log {
                        "\nPeriod log\n"
                    } else {
                        "\nPeriod top\n"
                    });
                    out.push_str(&format!(
                        "{:<20} {:<20} {:>14} {:<24} {:<35} {:<35}\n",
                        "Begin", "End", "Duration (us)", "Name", "Begin capture", "End capture"
                    ));
                    for d in self.log_rows(&g, cmd) {
                        log_text(&mut out, d, &self.names[d.def]);
                    }
                }
                PeriodCmd::Stats => {
                    out.push_str(&self.tree());
                    out.push_str("\nPeriod statistics (us)\n");
                    out.push_str(&format!(
                        "{:<24}{:>10}{:>14}{:>14}{:>14}{:>14}{:>13}\n",
                        "Period", "Count", "Min", "Avg", "Max", "Stdev", "Runtime"
                    ));
                    for (i, s) in self.stats_of(&g.periods) {
                        if s.count == 0 {
                            continue;
                        }
                        let us = |v: f64| format!("{:.3}", v / 1000.0);
                        out.push_str(&format!(
                            "{:<24}{:>10}{:>14}{:>14}{:>14}{:>14}{:>13}\n",
                            self.names[i],
                            s.count,
                            us(s.min as f64),
                            us(s.avg()),
                            us(s.max as f64),
                            s.stdev().map_or("?".to_string(), us),
                            us(s.sum as f64)
                        ));
                    }
                }
                PeriodCmd::Freq => {
                    for i in self.selected_by_name() {
                        let title = format!(
                            "Period duration frequency distribution - Duration of period: {} (us)",
                            self.names[i]
                        );
                        hist_text(&mut out, &title, &self.freq(&g, i), 1000.0);
                    }
                    if g.label.is_none() {
                        let freqs = self.child_freq_tables(&g.periods);
                        // lttng-analyses's text order: duration, ratio, count; then global.
                        for global in [false, true] {
                            for kind in [ChildKind::Duration, ChildKind::Ratio, ChildKind::Count] {
                                for f in freqs
                                    .iter()
                                    .filter(|f| f.kind == kind && f.global == global)
                                {
                                    let (title, unit, scale) = match kind {
                                        ChildKind::Duration => {
                                            ("Period duration frequency distribution", "us", 1000.0)
                                        }
                                        ChildKind::Count => (
                                            "Period count frequency distribution",
                                            "instances",
                                            1.0,
                                        ),
                                        ChildKind::Ratio => {
                                            ("Period usage ratio frequency distribution", "%", 1.0)
                                        }
                                    };
                                    let t =
                                        format!("{title} - {} ({unit})", self.child_subtitle(f));
                                    hist_text(&mut out, &t, &f.bins, scale);
                                }
                            }
                        }
                    }
                }
            }
            let agg = self.aggregated(&g.periods);
            if !agg.is_empty() {
                out.push_str("\nPer-parent period statistics (us)\n");
                out.push_str(&format!(
                    "{:<20} {:<20} {:<16} {:<16}{:>8}{:>14}{:>14}{:>14}{:>14}{:>9}\n",
                    "Parent begin",
                    "Parent end",
                    "Parent",
                    "Period",
                    "Count",
                    "Min",
                    "Avg",
                    "Max",
                    "Total",
                    "Usage"
                ));
                for r in agg {
                    let t = |c: &Cell| {
                        crate::text::fmt_ts(c.value_i64().unwrap_or(0))[11..].to_string()
                    };
                    let us = |c: &Cell| match c.value_f64() {
                        Some(v) => format!("{:.3}", v / 1000.0),
                        None => "?".into(),
                    };
                    out.push_str(&format!(
                        "{:<20} {:<20} {:<16} {:<16}{:>8}{:>14}{:>14}{:>14}{:>14}{:>8.2}%\n",
                        t(&r[0]),
                        t(&r[1]),
                        r[2].value_str().unwrap_or(""),
                        r[3].value_str().unwrap_or(""),
                        r[4].value_i64().unwrap_or(0),
                        us(&r[5]),
                        us(&r[6]),
                        us(&r[7]),
                        us(&r[8]),
                        r[9].value_f64().unwrap_or(0.0) * 100.0
                    ));
                }
            }
        }
        out
    }
}

fn log_text(out: &mut String, d: &Done, name: &str) {
    let hms = |ns: i64| crate::text::fmt_ts(ns)[11..].to_string();
    // lttng-analyses lists the captures of a period by name in reverse order.
    let sorted = |c: &[(String, Val)]| {
        let mut v: Vec<String> = Vec::new();
        let mut c: Vec<&(String, Val)> = c.iter().collect();
        c.sort_by(|a, b| b.0.cmp(&a.0));
        for (k, x) in c {
            v.push(format!("{k} = {x}"));
        }
        v
    };
    let (bc, ec) = (sorted(&d.begin_caps), sorted(&d.end_caps));
    let lines = bc.len().max(ec.len()).max(1);
    for i in 0..lines {
        let (range, dur, n) = if i == 0 {
            (
                format!("[{}, {}]", hms(d.begin), hms(d.end)),
                format!("{:.3}", d.duration() as f64 / 1000.0),
                name,
            )
        } else {
            (String::new(), String::new(), "")
        };
        out.push_str(&format!(
            "{:<41}{:>15} {:<24} {:<35} {:<35}\n",
            range,
            dur,
            n,
            bc.get(i).map_or("", |s| s.as_str()),
            ec.get(i).map_or("", |s| s.as_str())
        ));
    }
}

/// The kinds of child-period histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChildKind {
    Duration,
    Count,
    Ratio,
}

/// Values of the child-period histograms of one (parent, descendant) definition pair.
struct ChildValues {
    parent: usize,
    child: usize,
    durations: Vec<i64>,
    counts: Vec<f64>,
    ratios: Vec<f64>,
    instances: usize,
}

/// One child-period histogram.
struct ChildFreq {
    kind: ChildKind,
    global: bool,
    parent: usize,
    child: usize,
    bins: Vec<(f64, f64, u64)>,
}

/// A histogram as lttng-analyses prints it: the title, a rule, one line per bin (its lower
/// bound divided by `scale`, a bar of up to 72 characters, the count), a blank line.
fn hist_text(out: &mut String, title: &str, h: &[(f64, f64, u64)], scale: f64) {
    out.push_str(title);
    out.push('\n');
    out.push_str(&"#".repeat(80));
    out.push('\n');
    let maxc = h.iter().map(|x| x.2).max().unwrap_or(0);
    let w = maxc.to_string().len() + 1;
    for (lo, _, c) in h {
        let n = if maxc == 0 {
            0
        } else {
            (*c as f64 * 72.0 / maxc as f64) as usize
        };
        out.push_str(&format!(
            "{:>7.3} {:<72}{:>w$}\n",
            lo / scale,
            "█".repeat(n),
            c
        ));
    }
    out.push('\n');
}

#[cfg(test)]
mod reducer_tests {
    use super::*;

    fn done(id: u64, def: usize, begin: i64, end: i64) -> Done {
        Done {
            id,
            def,
            parent: None,
            begin,
            end,
            begin_caps: Vec::new(),
            end_caps: Vec::new(),
        }
    }

    /// Periods completing out of begin order reach the statistics in begin order, once no
    /// open period comes before them; the top list keeps the longest.
    #[test]
    fn statistics_in_begin_order() {
        let opts = PeriodOptions {
            reports: vec![PeriodCmd::Stats, PeriodCmd::Top],
            limit: 2,
            ..Default::default()
        };
        let mut r = Reducer::new(&opts, &[0], 2);
        // Period 1 (begin 0) is still open when 2 and 3 complete.
        r.add(
            &mut vec![done(3, 0, 20, 27), done(2, 0, 10, 11)],
            Some((0, 1)),
        );
        assert_eq!(r.stats[0].count, 0);
        assert_eq!(r.pending.len(), 2);
        // Definition 1 is not selected: neither counted nor kept.
        r.add(
            &mut vec![done(1, 0, 0, 1000), done(4, 1, 30, 5000)],
            Some((40, 5)),
        );
        assert_eq!(r.stats[0].count, 3);
        assert!(r.pending.is_empty());
        r.add(&mut vec![done(5, 0, 40, 43)], None);
        let (top, stats) = r.finish();
        let mut ids: Vec<u64> = top.iter().map(|d| d.id).collect();
        ids.sort();
        assert_eq!(ids, [1, 3]);
        let mut expect = Stats::default();
        for v in [1000, 1, 7, 3] {
            expect.add(v);
        }
        let s = stats[0];
        assert_eq!((s.count, s.min, s.max, s.sum), (4, 1, 1000, 1011));
        assert_eq!(
            s.stdev().map(f64::to_bits),
            expect.stdev().map(f64::to_bits)
        );
        assert_eq!(stats[1].count, 0);
    }
}
