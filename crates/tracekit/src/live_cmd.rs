//! Live inputs (`net://RELAY[:PORT]/host/HOST/SESSION`) for `print`, `analyze` and `latency`:
//! the commands pick [`live::LiveSource`] instead of trace files when their inputs are URLs.

use std::path::PathBuf;

/// The live URLs among `paths`: None when there is none, an error when URLs and paths are
/// mixed or one is malformed.
pub fn urls(paths: &[PathBuf]) -> Option<Result<Vec<live::Url>, String>> {
    let texts: Vec<String> = paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let n = texts.iter().filter(|t| live::Url::is_live(t)).count();
    if n == 0 {
        return None;
    }
    if n != texts.len() {
        return Some(Err(
            "live URLs (net://…) and trace paths cannot be read together".to_owned(),
        ));
    }
    Some(
        texts
            .iter()
            .map(|t| live::Url::parse(t).map_err(|e| e.to_string()))
            .collect(),
    )
}

/// `net://RELAY` without a session: prints the relay's sessions as babeltrace2 does.
pub fn list(urls: &[live::Url]) -> Result<(), Box<dyn std::error::Error>> {
    for u in urls {
        let sessions = live::list_sessions(u)?;
        print!("{}", live::format_sessions(u, &sessions));
    }
    Ok(())
}

/// Connects to the sessions `urls` name (all must name one); with `sync`, the hosts' clocks
/// are synchronized as their packets arrive.
pub fn source(
    urls: &[live::Url],
    sync: bool,
) -> Result<live::LiveSource, Box<dyn std::error::Error>> {
    Ok(live::LiveSource::connect(
        urls,
        live::LiveOptions {
            sync,
            ..Default::default()
        },
    )?)
}
