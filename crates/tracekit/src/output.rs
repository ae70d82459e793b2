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
