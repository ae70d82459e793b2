//! The period and capture language (`--period`, `--period-captures`) on arbitrary input:
//! parsing never panics, whatever parses evaluates and compiles without panicking against
//! any values, and parsing is deterministic. Inputs are runs of the language's own tokens
//! (so that most reach deep into the grammar) mixed with arbitrary text.

use analysis::period_expr::{glob, parse_captures, parse_expr, parse_period, Ref, Resolve, Val};
use proptest::prelude::*;

/// Pieces of the language, and pieces that break it.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("$evt".to_string()),
        Just("$begin".to_string()),
        Just("$parent".to_string()),
        Just(".".to_string()),
        Just("$name".to_string()),
        Just("$timestamp".to_string()),
        Just("$payload".to_string()),
        Just("$ctx".to_string()),
        Just("$pkt_ctx".to_string()),
        Just("$header".to_string()),
        Just("$".to_string()),
        Just(" == ".to_string()),
        Just(" != ".to_string()),
        Just(" < ".to_string()),
        Just(" <= ".to_string()),
        Just(">".to_string()),
        Just(">=".to_string()),
        Just(" =* ".to_string()),
        Just(" && ".to_string()),
        Just(" || ".to_string()),
        Just("!".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just(" : ".to_string()),
        Just(",".to_string()),
        Just(" = ".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("\\".to_string()),
        Just("next_tid".to_string()),
        Just("switch".to_string()),
        Just("irq(switch)".to_string()),
        Just("-".to_string()),
        Just("1e309".to_string()),
        Just("340282366920938463463374607431768211456".to_string()),
        Just("-9223372036854775809".to_string()),
        Just("0x".to_string()),
        Just("3.5".to_string()),
        Just("\"sched_*\"".to_string()),
        Just("'a?c'".to_string()),
        "[a-z_]{1,6}",
        "[0-9]{1,25}",
        any::<String>(),
    ]
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(token(), 0..24).prop_map(|t| t.concat())
}

/// Answers every reference with one of a few values.
struct Values(Vec<Option<Val>>);

impl Resolve for Values {
    fn get(&self, r: &Ref) -> Option<Val> {
        let i = r.parents as usize + r.begin as usize + format!("{:?}", r.what).len();
        self.0[i % self.0.len()].clone()
    }
}

fn value() -> impl Strategy<Value = Option<Val>> {
    prop_oneof![
        Just(None),
        any::<i128>().prop_map(|v| Some(Val::Int(v))),
        any::<f64>().prop_map(|v| Some(Val::Float(v))),
        any::<String>().prop_map(|s| Some(Val::Str(s.into()))),
        "[a-z_*?]{0,8}".prop_map(|s| Some(Val::Str(s.into()))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn expressions_parse_evaluate_and_compile_without_panicking(
        s in text(),
        values in proptest::collection::vec(value(), 1..6),
    ) {
        let r = Values(values);
        let first = parse_expr(&s);
        prop_assert_eq!(format!("{first:?}"), format!("{:?}", parse_expr(&s)));
        if let Ok(e) = first {
            let _ = e.eval(&r);
            let _ = e.value(&r);
            let mut n = 0;
            let _ = e.compile(&mut |_| {
                n += 1;
                n - 1
            });
        }
    }

    #[test]
    fn periods_and_captures_parse_without_panicking(s in text()) {
        if let Ok(d) = parse_period(&s) {
            // A definition names its period.
            prop_assert!(!d.name.trim().is_empty(), "{:?}", d);
        }
        let _ = parse_captures(&s);
    }

    #[test]
    fn globs_match_without_panicking(p in "[a-c*?!\\[\\]-]{0,12}", s in "[a-c]{0,12}", t in any::<String>()) {
        let m = glob(&p, &s);
        // Without special characters, a pattern matches exactly itself.
        if !p.contains(['*', '?', '[']) {
            prop_assert_eq!(m, p == s);
        }
        // `*` matches anything; a text matches itself when it holds no special character.
        prop_assert!(glob("*", &t));
        if !t.contains(['*', '?', '[']) {
            prop_assert!(glob(&t, &t));
        }
    }
}

/// `=*` matches as lttng-analyses' does (Python's `fnmatch.fnmatchcase`), on patterns and texts
/// made of the characters that matter (`*?[]!-` and a few letters), checked by Python itself.
#[test]
fn globs_match_as_python_fnmatch() {
    if !testkit::tool_or_skip(
        "python3",
        "lttng-analyses needs it",
        "the fnmatch comparison",
    ) {
        return;
    }
    // A fixed linear congruential sequence: the same cases on every run.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let mut word = |alphabet: &[char], max: u64| -> String {
        let len = next(max + 1);
        (0..len)
            .map(|_| alphabet[next(alphabet.len() as u64) as usize])
            .collect()
    };
    let pattern_chars = ['a', 'b', 'c', '*', '?', '[', ']', '!', '-', '^'];
    let text_chars = ['a', 'b', 'c', '-', ']', '!', '[', '^', '*'];
    let cases: Vec<(String, String)> = (0..4000)
        .map(|_| (word(&pattern_chars, 8), word(&text_chars, 6)))
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("cases.json");
    std::fs::write(&file, serde_json::to_string(&cases).unwrap()).unwrap();
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import fnmatch, json, sys\n\
             cases = json.load(open(sys.argv[1]))\n\
             print(json.dumps([fnmatch.fnmatchcase(t, p) for p, t in cases]))",
        )
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: Vec<bool> = serde_json::from_slice(&out.stdout).unwrap();
    let wrong: Vec<_> = cases
        .iter()
        .zip(&expected)
        .filter(|((p, t), &e)| glob(p, t) != e)
        .take(10)
        .collect();
    assert!(
        wrong.is_empty(),
        "(pattern, text), fnmatch's answer: {wrong:?}"
    );
}
