//! Output files that readers never see half written: the data goes to a
//! temporary sibling that is renamed over the path when complete. A path
//! that exists but is not a regular file (`/dev/null`, a FIFO, a terminal)
//! is written in place instead: renaming over it would replace the device
//! with a regular file for every later user of the machine.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// An output being written; [`OutputFile::commit`] publishes it, dropping
/// it uncommitted removes the temporary.
pub struct OutputFile {
    file: File,
    path: PathBuf,
    /// The temporary sibling, `None` when writing in place.
    tmp: Option<PathBuf>,
}

fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// A fresh sibling name: process id and a sequence number keep
/// concurrent writers of the same output apart.
fn temporary_for(path: &Path) -> PathBuf {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(
        ".{name}.tmp{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ))
}

impl OutputFile {
    pub fn create(path: &Path) -> io::Result<OutputFile> {
        if is_special(path) {
            let file = OpenOptions::new().write(true).open(path)?;
            return Ok(OutputFile {
                file,
                path: path.to_path_buf(),
                tmp: None,
            });
        }
        let tmp = temporary_for(path);
        let file = File::create(&tmp)?;
        Ok(OutputFile {
            file,
            path: path.to_path_buf(),
            tmp: Some(tmp),
        })
    }

    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// Makes the written data visible under the path.
    pub fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        match self.tmp.take() {
            Some(tmp) => std::fs::rename(&tmp, &self.path).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            }),
            None => Ok(()),
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Writes `data` to `path` through an [`OutputFile`].
pub fn write_file(path: &Path, data: &[u8]) -> io::Result<()> {
    let mut out = OutputFile::create(path)?;
    out.file().write_all(data)?;
    out.commit()
}

/// Moves a finished file `from` (written by another program) to `to`,
/// copying where a rename cannot work: across file systems, or onto a path
/// that is not a regular file.
pub fn install(from: &Path, to: &Path) -> io::Result<()> {
    if is_special(to) || std::fs::rename(from, to).is_err() {
        let mut src = File::open(from)?;
        let mut out = OutputFile::create(to)?;
        io::copy(&mut src, out.file())?;
        out.commit()?;
        std::fs::remove_file(from)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn writes_in_place_to_special_files_and_atomically_elsewhere() {
        use std::os::unix::fs::FileTypeExt;
        let dir = std::env::temp_dir().join(format!("ir-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();

        // A FIFO (like /dev/null, not a regular file) stays what it is.
        let fifo = dir.join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_file(&fifo, b"data").unwrap();
        // Checked before joining: a reader of a replaced FIFO never returns.
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), b"data");
        std::fs::remove_file(&fifo).unwrap();

        let p = dir.join("out.bin");
        std::fs::write(&p, b"old").unwrap();
        let mut out = OutputFile::create(&p).unwrap();
        out.file().write_all(b"new").unwrap();
        assert_eq!(
            std::fs::read(&p).unwrap(),
            b"old",
            "not visible before commit"
        );
        out.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        drop(OutputFile::create(&p).unwrap());
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "an uncommitted temporary is removed");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
