//! Standard output for large results.

use std::io::{self, BufWriter, Write};
use std::os::fd::AsFd;

/// Standard output, buffered, without `std::io::Stdout`'s line buffering: that one looks for
/// the last newline in every buffer handed to it, and a LAMI document is one long line (one
/// `memrchr` over megabytes per write). Writes go to a duplicate of the
/// descriptor; where it cannot be duplicated, to `Stdout` as before. The buffer is
/// `BufWriter`'s default: a writer that buffers itself (the LAMI one) passes larger blocks,
/// which go through uncopied.
pub fn stdout() -> BufWriter<Box<dyn Write>> {
    let stdout = io::stdout();
    // Whatever `print!` left in `Stdout`'s buffer goes first.
    let _ = stdout.lock().flush();
    let inner: Box<dyn Write> = match stdout.as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(stdout.lock()),
    };
    BufWriter::new(inner)
}

/// The width text tables are fitted to when standard output is not a terminal and `COLUMNS`
/// is not set.
pub const DEFAULT_WIDTH: usize = 100;

/// The width, in columns, that text output is fitted to, decided once per run: `flag`
/// (`--width`; 0: no limit), else the `COLUMNS` environment variable, else the width of the
/// terminal standard output is, else [`DEFAULT_WIDTH`].
pub fn text_width(flag: Option<usize>) -> Option<usize> {
    if let Some(w) = flag {
        return (w > 0).then_some(w);
    }
    let columns = std::env::var("COLUMNS").ok();
    Some(width_from(columns.as_deref(), || {
        terminal_size::terminal_size_of(io::stdout()).map(|(w, _)| usize::from(w.0))
    }))
}

/// [`text_width`] without a flag, from the value of `COLUMNS` and the terminal's width.
fn width_from(columns: Option<&str>, terminal: impl FnOnce() -> Option<usize>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .or_else(terminal)
        .filter(|&w| w > 0)
        .unwrap_or(DEFAULT_WIDTH)
}

#[cfg(test)]
mod tests {
    use super::width_from;

    #[test]
    fn columns_then_terminal_then_default() {
        assert_eq!(width_from(Some("80"), || Some(120)), 80);
        assert_eq!(width_from(Some(" 132\n"), || None), 132);
        assert_eq!(width_from(None, || Some(120)), 120);
        assert_eq!(width_from(None, || None), super::DEFAULT_WIDTH);
        // A COLUMNS that is not a width is passed over.
        assert_eq!(width_from(Some("wide"), || Some(90)), 90);
        assert_eq!(width_from(Some("0"), || None), super::DEFAULT_WIDTH);
    }
}
