//! Each analysis declares the notifications it uses (`Analysis::interest`), and the state
//! machine makes only those: the tables must be those of an analysis that gets everything,
//! alone or run with the others.

use analysis::{Analysis, Common, Options, Range, Table};
use kernel::{Interest, Model, Notification, State};

/// An analysis that asks for every notification.
struct All(Box<dyn Analysis>);

impl Analysis for All {
    fn interest(&self) -> Interest {
        Interest::ALL
    }
    fn start(&mut self, ts: i64) {
        self.0.start(ts)
    }
    fn notify(&mut self, state: &State, n: &Notification) {
        self.0.notify(state, n)
    }
    fn finish(&mut self, model: &Model, range: Range) -> Vec<Table> {
        self.0.finish(model, range)
    }
}

/// Each period's range and tables of each analysis, as text.
fn run(
    traces: &[std::sync::Arc<ctf::Trace>],
    common: &Common,
    names: &[&str],
    all: bool,
) -> Vec<(String, Vec<String>)> {
    let opts = Options::default();
    let mut make = || {
        names
            .iter()
            .map(|n| {
                let a = analysis::build(n, common, &opts).unwrap().0;
                if all {
                    Box::new(All(a)) as Box<dyn Analysis>
                } else {
                    a
                }
            })
            .collect()
    };
    let mut out = Vec::new();
    analysis::run_refresh(traces, common, Some(3_000_000), &mut make, &mut |r, t| {
        out.push((
            format!("{r:?}"),
            t.iter().map(|t| format!("{t:?}")).collect(),
        ))
    })
    .unwrap();
    out
}

#[test]
fn interests_cover_what_analyses_use() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mix");
    testkit::kernel_mix(&dir, 40_000, 3, 5);
    let traces = ctf::open_all(&[dir]).unwrap();
    let names: Vec<&str> = analysis::NAMES
        .iter()
        .copied()
        .filter(|n| analysis::build(n, &Common::default(), &Options::default()).is_some())
        .collect();
    assert!(names.len() >= 10, "{names:?}");
    for quirks in [false, true] {
        let common = Common {
            lttng_analyses_quirks: quirks,
            ..Default::default()
        };
        let mut alone = Vec::new();
        for n in &names {
            let tables = run(&traces, &common, &[n], false);
            assert!(tables.len() > 1, "{n}: several periods");
            assert_eq!(tables, run(&traces, &common, &[n], true), "{n}");
            alone.push(tables);
        }
        // Together: each analysis gets its own notifications among everybody's.
        let together = run(&traces, &common, &names, false);
        for (i, n) in names.iter().enumerate() {
            let mine: Vec<_> = together
                .iter()
                .map(|(r, t)| (r.clone(), vec![t[i].clone()]))
                .collect();
            assert_eq!(mine, alone[i], "{n}");
        }
    }
}
