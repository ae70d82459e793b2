//! Files and directories only their owner can read: 0600 files in 0700 directories, for
//! everything written from a trace (traces, exports, mirrors). A trace holds command lines,
//! file names and addresses of every process of a machine; the process's umask, made for
//! the user's documents, is not what decides who reads them.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// Makes `dir` and its missing parents, each new one 0700 (existing ones are left as they
/// are).
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Makes `dir`, 0700; its parent must exist and `dir` must not.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().mode(0o700).create(dir)
}

/// Creates (or truncates) `path` for writing, 0600 when it is created.
pub fn create_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// Writes `bytes` as the whole of `path`, created 0600.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    create_file(path)?.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn new_files_and_directories_are_private() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("a/b");
        create_dir_all(&deep).unwrap();
        create_dir(&deep.join("c")).unwrap();
        write(&deep.join("c/f"), b"x").unwrap();
        for d in ["a", "a/b", "a/b/c"] {
            assert_eq!(mode(&tmp.path().join(d)), 0o700, "{d}");
        }
        assert_eq!(mode(&deep.join("c/f")), 0o600);
        assert_eq!(std::fs::read(deep.join("c/f")).unwrap(), b"x");
        // A second write truncates.
        write(&deep.join("c/f"), b"").unwrap();
        assert_eq!(std::fs::read(deep.join("c/f")).unwrap(), b"");
        // An existing directory is not an error for create_dir_all, and keeps its mode.
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        create_dir_all(tmp.path()).unwrap();
        assert_eq!(mode(tmp.path()), 0o755);
        assert!(create_dir(&deep.join("c")).is_err());
    }
}
