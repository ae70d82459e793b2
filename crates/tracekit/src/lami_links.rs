//! `tracekit lami-links DIR`: links named as lttng-analyses' commands (`lttng-cputop`,
//! `lttng-cputop-mi`, …) to the tracekit executable. Run by such a name, tracekit is
//! `tracekit analyze NAME [--mi]` (see `analysis::commands::lttng_command`): with DIR early in
//! `PATH`, scripts and Trace Compass's LTTng analyses run tracekit unchanged.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

#[derive(Args, Debug)]
pub struct LamiLinksArgs {
    /// Directory to make the links in (created if missing).
    pub dir: PathBuf,
    /// Replace links (and only links) of these names that point elsewhere.
    #[arg(long)]
    pub force: bool,
}

/// What became of one name.
enum Outcome {
    Made,
    Kept,
    Replaced,
}

pub fn run(a: &LamiLinksArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find the tracekit executable: {e}"))?;
    std::fs::create_dir_all(&a.dir)
        .map_err(|e| format!("{}: cannot create the directory: {e}", a.dir.display()))?;
    let (mut made, mut kept, mut replaced) = (0, 0, 0);
    let mut failed = Vec::new();
    for name in analysis::commands::analyses() {
        for link in [format!("lttng-{name}"), format!("lttng-{name}-mi")] {
            let path = a.dir.join(&link);
            match make_link(&exe, &path, a.force) {
                Ok(Outcome::Made) => made += 1,
                Ok(Outcome::Kept) => kept += 1,
                Ok(Outcome::Replaced) => replaced += 1,
                Err(m) => failed.push(m),
            }
        }
    }
    println!(
        "{}: {made} links to {} made, {replaced} replaced, {kept} already there",
        a.dir.display(),
        exe.display()
    );
    for m in &failed {
        eprintln!("tracekit lami-links: error: {m}");
    }
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Makes `path` a symbolic link to `exe`; an existing file is left alone unless it is a link
/// and `force` is given (a link to `exe` already is kept).
fn make_link(exe: &Path, path: &Path, force: bool) -> Result<Outcome, String> {
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("{shown}: {e}")),
        Ok(m) if !m.file_type().is_symlink() => {
            return Err(format!("{shown}: exists and is not a link: left as it is"));
        }
        Ok(_) => {
            let target = std::fs::read_link(path).map_err(|e| format!("{shown}: {e}"))?;
            if target == exe {
                return Ok(Outcome::Kept);
            }
            if !force {
                return Err(format!(
                    "{shown}: a link to {} already (--force replaces it)",
                    target.display()
                ));
            }
            std::fs::remove_file(path).map_err(|e| format!("{shown}: {e}"))?;
            std::os::unix::fs::symlink(exe, path).map_err(|e| format!("{shown}: {e}"))?;
            return Ok(Outcome::Replaced);
        }
    }
    std::os::unix::fs::symlink(exe, path).map_err(|e| format!("{shown}: {e}"))?;
    Ok(Outcome::Made)
}
