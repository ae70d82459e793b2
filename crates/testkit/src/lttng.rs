//! Real LTTng sessions at test time, each in namespaces of its own.
//!
//! A script runs under `bash` as the first process of new mount, PID and network namespaces
//! (`unshare`), after [`PRELUDE`]: `/run` and `/dev/shm` are private tmpfs, the loopback
//! interface is up (ports are private too: a relay on 5342 does not clash with another test's),
//! `HOME` and `LTTNG_HOME` are the script's directory, and a session daemon without the kernel
//! domain runs. The script may start daemons of its own in the background (`cmd &`, `-d`): it
//! neither sees nor disturbs another test's, and every process it started dies with the
//! namespace's first process when the script ends, fails or times out.
//!
//! Needs root (for the namespaces), lttng-tools, liblttng-ust-dev, python3-lttngust, gcc,
//! iproute2 and babeltrace2: [`available`] says whether they are all here.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// How to install what the sessions need (for messages).
pub const INSTALL: &str =
    "apt install lttng-tools liblttng-ust-dev python3-lttngust gcc iproute2 babeltrace2";

/// Set up in every namespace before a script's commands: private run directories, the
/// loopback interface, and a session daemon without the kernel domain. `$W` is the script's
/// directory.
pub const PRELUDE: &str = r#"set -eu
# Only ever in a PID namespace of our own: a `kill -9 -1` in a script must reach nothing else.
[ "$$" = 1 ] || { echo "not the first process of a new PID namespace" >&2; exit 97; }
mount -t tmpfs tmpfs /run
mkdir -p /run/lttng
mount -t tmpfs tmpfs /dev/shm
ip link set lo up
export HOME="$W/home" LTTNG_HOME="$W/home"
mkdir -p "$HOME"
cd "$W"
lttng-sessiond --no-kernel --daemonize
"#;

/// `unshare`'s options: new mount, PID and network namespaces, the shell forked as the PID
/// namespace's first process (when it ends, the kernel kills every other process of the
/// namespace), and killed when `unshare` itself dies.
pub const NAMESPACES: &[&str] = &[
    "--mount",
    "--propagation",
    "private",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
    "--net",
];

/// The sources of the C tracepoint application (`tk_app.c`, provider `tk_tp.[ch]`) and of the
/// Python agent script (`tk_agent.py`).
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/lttng")
}

/// Whether everything real LTTng sessions need is here. When something is missing, `what` is
/// skipped with a message on stderr; where the shared suites run (`TRACEKIT_SHARED` set: CI)
/// the caller panics instead. Checked once per process.
pub fn available(what: &str) -> bool {
    static MISSING: OnceLock<Option<String>> = OnceLock::new();
    let missing = MISSING.get_or_init(missing);
    match missing {
        None => true,
        Some(why) => {
            assert!(
                crate::shared().is_none(),
                "{why}: {what} must run where the shared suites do ({INSTALL}, as root)"
            );
            eprintln!("{why}: skipping {what}");
            false
        }
    }
}

/// What is missing for real sessions, if anything.
fn missing() -> Option<String> {
    [
        ("babeltrace2", "babeltrace2"),
        ("lttng", "lttng-tools"),
        ("lttng-sessiond", "lttng-tools"),
        ("lttng-relayd", "lttng-tools"),
        ("lttng-crash", "lttng-tools"),
        ("gcc", "gcc"),
        ("unshare", "util-linux"),
        ("ip", "iproute2"),
        ("timeout", "coreutils"),
    ]
    .iter()
    .find(|(tool, _)| !runs(Command::new("sh").args(["-c", &format!("command -v {tool}")])))
    .map(|(tool, pkg)| format!("{tool} ({pkg}) is not installed"))
    .or_else(|| {
        let header = "echo '#include <lttng/tracepoint.h>' | gcc -E -x c - -o /dev/null";
        (!runs(
            Command::new("sh")
                .args(["-c", header])
                .stderr(Stdio::null()),
        ))
        .then(|| "liblttng-ust-dev is not installed".to_owned())
    })
    .or_else(|| {
        let found = "import importlib.util, sys; \
                     sys.exit(importlib.util.find_spec('lttngust') is None)";
        (!runs(Command::new("/usr/bin/python3").args(["-c", found])))
            .then(|| "python3-lttngust is not installed".to_owned())
    })
    .or_else(|| {
        let mut ns = Command::new("unshare");
        ns.args(NAMESPACES).arg("true").stderr(Stdio::null());
        (!runs(&mut ns))
            .then(|| "cannot make mount, PID and network namespaces (`unshare`: not root?)".into())
    })
}

fn runs(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A fresh directory `BASE/PREFIX-PID` for this process's sessions (`base` is typically the
/// test's `CARGO_TARGET_TMPDIR`); those of earlier test processes that are gone are removed.
pub fn work_dir(base: &Path, prefix: &str) -> PathBuf {
    let stem = format!("{prefix}-");
    if let Ok(rd) = std::fs::read_dir(base) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix(&stem) else {
                continue;
            };
            if pid.bytes().all(|b| b.is_ascii_digit()) && !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let dir = base.join(format!("{stem}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("work directory");
    dir
}

/// Compiles the C application with its tracepoint provider (see [`data_dir`]) into
/// `dir/tk_app`: `tk_app VALUES TICKS` emits `VALUES` `tk:values` events (every kind of field)
/// and `TICKS` `tk:tick` events.
pub fn build_app(dir: &Path) -> Result<PathBuf, String> {
    let src = data_dir();
    let app = dir.join("tk_app");
    let o = Command::new("gcc")
        .args(["-O1", "-Wall", "-Werror", "-I"])
        .arg(&src)
        .arg("-o")
        .arg(&app)
        .arg(src.join("tk_app.c"))
        .arg(src.join("tk_tp.c"))
        .args(["-llttng-ust", "-ldl"])
        .output()
        .map_err(|e| format!("gcc: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "gcc failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(app)
}

/// The command running `script` after [`PRELUDE`] in namespaces of its own, with `W=w` (created)
/// and the variables `env`, killed after `timeout_s` seconds; stdin is closed. Spawn it or take
/// its output.
pub fn command<K: AsRef<OsStr>, V: AsRef<OsStr>>(
    w: &Path,
    script: &str,
    env: impl IntoIterator<Item = (K, V)>,
    timeout_s: u32,
) -> Command {
    let _ = std::fs::create_dir_all(w);
    let mut c = Command::new("timeout");
    // `unshare` killed: its child (and with it the namespace) dies too.
    c.args(["-s", "KILL", &timeout_s.to_string(), "unshare"])
        .args(NAMESPACES)
        .args(["bash", "-c"])
        .arg(format!("{PRELUDE}{script}"))
        .env("W", w)
        .envs(env)
        .stdin(Stdio::null());
    c
}

/// Runs [`command`] to its end: its output when it succeeded, else an error message with its
/// status, stdout and stderr.
pub fn run<K: AsRef<OsStr>, V: AsRef<OsStr>>(
    w: &Path,
    script: &str,
    env: impl IntoIterator<Item = (K, V)>,
    timeout_s: u32,
) -> Result<Output, String> {
    let o = command(w, script, env, timeout_s)
        .output()
        .map_err(|e| format!("unshare: {e}"))?;
    if o.status.success() {
        return Ok(o);
    }
    Err(format!(
        "script in {} failed ({}):\n{}{}",
        w.display(),
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    ))
}
