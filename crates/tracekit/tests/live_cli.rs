//! tracekit's live reader on a real `lttng-relayd` fed by real LTTng-UST sessions (in
//! namespaces of their own, `testkit::lttng`): while the application runs, `tracekit print
//! net://…` prints what babeltrace2 prints of the trace relayd wrote (and babeltrace2's own live
//! reader of a twin session prints that twin's written trace), `tracekit print net://RELAY`
//! lists the sessions as babeltrace2 does, and `analyze --refresh` prints a report per period
//! as they end, and two sessions given together print as their two written traces do.
//! (lttng-relayd takes one viewer per session: each reader has its session.)

use std::path::Path;

use testkit::lttng;

/// Five live sessions (`tk` read by tracekit print, `an` by tracekit analyze, `bt` by
/// babeltrace2, `m1` and `m2` by one tracekit print) of the same application, run three times
/// 0.3 s apart; 100 ms live timer.
const SCRIPT: &str = r#"
lttng-relayd -d -o "$W/trace" -C tcp://127.0.0.1:15342 -D tcp://127.0.0.1:15343 -L tcp://127.0.0.1:15344
live() {
    lttng create $1 --live=100000 --set-url net://127.0.0.1:15342:15343 >/dev/null
    lttng enable-event -u 'tk:*' >/dev/null
    lttng start >/dev/null
}
for s in tk an m1 m2; do live $s; done
# The application registers (its buffers become the sessions' streams) before tracekit's
# readers attach: streams that appear later may hold events older than some already given
# out, which would break the order of m1 and m2 read together. (babeltrace2 2.0.4's reader
# leaves out what a session held before it attached: its session starts after.)
"$APP" 0 1
live bt
sleep 0.5
H=$(hostname)
R=net://127.0.0.1:15344
babeltrace2 --input-format=lttng-live $R > list_bt.txt
"$TK" print $R > list_tk.txt
"$TK" print $R/host/$H/tk > live_tk.txt 2> live_tk.err & P1=$!
"$TK" analyze cputop --refresh 0.25 $R/host/$H/an > analyze.txt 2> analyze.err & P2=$!
babeltrace2 --input-format=lttng-live $R/host/$H/bt > live_bt.txt 2> live_bt.err & P3=$!
"$TK" print $R/host/$H/m1 $R/host/$H/m2 > live_two.txt 2> live_two.err & P4=$!
sleep 0.3
for i in 1 2 3; do "$APP" 10 100; sleep 0.3; done
# (A plain `lttng destroy` of one of several live sessions on one relay waits forever in
# lttng-tools 2.13; the data is on the relay once `stop` returns.)
for s in tk an bt m1 m2; do lttng stop $s >/dev/null; lttng destroy --no-wait $s >/dev/null; done
wait $P1; wait $P2; wait $P3; wait $P4
babeltrace2 "$W/trace/$H/"tk-* > files_bt_tk.txt
"$TK" print "$W/trace/$H/"tk-* > files_tk_tk.txt
babeltrace2 "$W/trace/$H/"bt-* > files_bt_bt.txt
"$TK" print "$W/trace/$H/"m1-* "$W/trace/$H/"m2-* > files_tk_two.txt
"#;

/// A file's text (the application's strings include bytes that are not UTF-8: compared as
/// bytes, shown lossily).
fn read(w: &Path, name: &str) -> String {
    let b = std::fs::read(w.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    String::from_utf8_lossy(&b).into_owned()
}

fn bytes(w: &Path, name: &str) -> Vec<u8> {
    std::fs::read(w.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn live_sessions_read_as_babeltrace2_reads_them() {
    if !lttng::available("the live reader tests on lttng-relayd") {
        return;
    }
    let start = std::time::Instant::now();
    let dir = lttng::work_dir(Path::new(env!("CARGO_TARGET_TMPDIR")), "live-cli");
    let app = lttng::build_app(&dir).expect("the C application builds");
    let w = dir.join("relayd");
    let out = lttng::run(
        &w,
        SCRIPT,
        [
            ("TK", Path::new(env!("CARGO_BIN_EXE_tracekit"))),
            ("APP", app.as_path()),
        ],
        120,
    );
    if let Err(e) = &out {
        panic!(
            "{e}\nlive_tk.err: {}",
            std::fs::read_to_string(w.join("live_tk.err")).unwrap_or_default()
        );
    }
    let live = read(&w, "live_tk.txt");
    assert_eq!(read(&w, "live_tk.err"), "");
    // Every event of the three runs, in the order and form babeltrace2 prints the trace.
    assert_eq!(
        live.lines().filter(|l| l.contains(" tk:values: ")).count(),
        30
    );
    assert_eq!(
        live.lines().filter(|l| l.contains(" tk:tick: ")).count(),
        301
    );
    assert!(
        bytes(&w, "live_tk.txt") == bytes(&w, "files_bt_tk.txt"),
        "tracekit's live output differs from babeltrace2's of the trace relayd wrote"
    );
    assert!(bytes(&w, "files_tk_tk.txt") == bytes(&w, "files_bt_tk.txt"));
    // babeltrace2's live reader on the twin session gives its written trace too.
    let bt = read(&w, "live_bt.txt");
    assert_eq!(bt.lines().count(), 330);
    assert!(bytes(&w, "live_bt.txt") == bytes(&w, "files_bt_bt.txt"));
    // Two sessions read live as one: merged as their written traces are.
    assert_eq!(read(&w, "live_two.err"), "");
    assert_eq!(read(&w, "live_two.txt").lines().count(), 662);
    assert!(bytes(&w, "live_two.txt") == bytes(&w, "files_tk_two.txt"));
    // The session list, as babeltrace2 prints it (asked before any viewer attached).
    let list = read(&w, "list_tk.txt");
    assert_eq!(list.lines().count(), 5, "{list}");
    assert_eq!(list, read(&w, "list_bt.txt"));
    // A report per 0.25 s period the events span (they span 0.6 s and more).
    let reports = read(&w, "analyze.txt").matches("Timerange: [").count();
    assert!(
        reports >= 2,
        "{reports} reports:\n{}",
        read(&w, "analyze.txt")
    );
    eprintln!(
        "live sessions read in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
