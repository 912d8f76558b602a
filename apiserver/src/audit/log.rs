//! The audit log (`--audit-log-path`, `-` for stdout), kube's log backend with its
//! rotation flags (`--audit-log-maxsize` megabytes, `--audit-log-maxbackup` files,
//! `--audit-log-maxage` days: lumberjack's, which kube uses).
//!
//! A request never waits for the disk: [`AuditLog::write`] serializes the event and hands
//! the line to a writer thread through a bounded buffer ([`BUFFER`] lines). When the buffer
//! is full (the disk is slower than the requests), the event is dropped; when a write
//! fails (the disk is full), the line is lost. Neither is silent: each is counted
//! ([`AuditLog::dropped`], [`AuditLog::failed`]) and logged as an error (at most once every
//! ten seconds), and writing resumes by itself once the disk takes lines again. kube's
//! default for the log backend is to block requests instead; kapi prefers serving.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::{Duration, Instant, SystemTime};

use super::Event;

/// How many lines wait for the writer at most.
pub const BUFFER: usize = 10_000;

/// Where and how the log is written.
#[derive(Clone, Debug, Default)]
pub struct LogOptions {
    /// The file; `-` is stdout.
    pub path: PathBuf,
    /// Rotate once the file would pass this many megabytes (0: never).
    pub max_size_mb: u64,
    /// Keep at most this many rotated files (0: all).
    pub max_backups: usize,
    /// Remove rotated files older than this many days (0: never).
    pub max_age_days: u64,
}

/// The log's counters, shared with the writer.
#[derive(Default)]
struct Counters {
    dropped: AtomicU64,
    failed: AtomicU64,
    written: AtomicU64,
}

/// The audit log.
pub struct AuditLog {
    sender: SyncSender<String>,
    counters: Arc<Counters>,
    last_warning: std::sync::Mutex<Option<Instant>>,
}

impl AuditLog {
    /// Opens the log (creating the file and its directory) and starts its writer.
    pub fn open(options: LogOptions) -> std::io::Result<AuditLog> {
        let sink = Sink::open(options)?;
        let (sender, receiver) = std::sync::mpsc::sync_channel(BUFFER);
        let counters = Arc::new(Counters::default());
        let writer_counters = Arc::clone(&counters);
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || write_lines(sink, &receiver, &writer_counters))?;
        Ok(AuditLog {
            sender,
            counters,
            last_warning: std::sync::Mutex::new(None),
        })
    }

    /// Queues `event`; never blocks.
    pub fn write(&self, event: &Event) {
        let line = match serde_json::to_string(event) {
            Ok(line) => line,
            Err(e) => {
                tracing::error!(error = %e, "audit: an event does not serialize");
                return;
            }
        };
        // kube counts every event generated, and the ones its backend refused apart.
        kapi_metrics::global().audit_events.inc();
        match self.sender.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                kapi_metrics::global().audit_rejected.inc();
                let dropped = self.counters.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                let mut last = self.last_warning.lock().unwrap_or_else(|e| e.into_inner());
                if last.is_none_or(|at| at.elapsed() > Duration::from_secs(10)) {
                    *last = Some(Instant::now());
                    tracing::error!(dropped, "audit: the log cannot keep up; events are dropped");
                }
            }
        }
    }

    /// Events dropped because the buffer was full.
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::Relaxed)
    }

    /// Lines lost because a write failed.
    pub fn failed(&self) -> u64 {
        self.counters.failed.load(Ordering::Relaxed)
    }

    /// Lines written.
    pub fn written(&self) -> u64 {
        self.counters.written.load(Ordering::Relaxed)
    }
}

/// The writer thread: lines in order, flushed whenever the buffer runs dry.
fn write_lines(mut sink: Sink, receiver: &Receiver<String>, counters: &Counters) {
    let mut last_error: Option<Instant> = None;
    while let Ok(line) = receiver.recv() {
        let mut batch = vec![line];
        batch.extend(receiver.try_iter());
        for line in batch {
            match sink.write_line(&line) {
                Ok(()) => {
                    counters.written.fetch_add(1, Ordering::Relaxed);
                }
                Err(error) => {
                    let failed = counters.failed.fetch_add(1, Ordering::Relaxed) + 1;
                    if last_error.is_none_or(|at| at.elapsed() > Duration::from_secs(10)) {
                        last_error = Some(Instant::now());
                        tracing::error!(%error, failed, "audit: writing the log failed; lines are lost");
                    }
                }
            }
        }
        if let Err(error) = sink.flush() {
            tracing::error!(%error, "audit: flushing the log failed");
        }
    }
}

/// The file (or stdout) and its rotation.
struct Sink {
    options: LogOptions,
    out: Output,
    size: u64,
}

enum Output {
    Stdout(std::io::Stdout),
    File(std::io::BufWriter<File>),
}

impl Sink {
    fn open(options: LogOptions) -> std::io::Result<Sink> {
        if options.path == Path::new("-") {
            return Ok(Sink {
                options,
                out: Output::Stdout(std::io::stdout()),
                size: 0,
            });
        }
        let (file, size) = open_file(&options.path)?;
        Ok(Sink {
            options,
            out: Output::File(std::io::BufWriter::new(file)),
            size,
        })
    }

    fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        let len = line.len() as u64 + 1;
        let max = self.options.max_size_mb * 1024 * 1024;
        if max > 0 && self.size > 0 && self.size + len > max {
            self.rotate()?;
        }
        let out: &mut dyn Write = match &mut self.out {
            Output::Stdout(out) => out,
            Output::File(out) => out,
        };
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        self.size += len;
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.out {
            Output::Stdout(out) => out.flush(),
            Output::File(out) => out.flush(),
        }
    }

    /// Renames the file to `<name>-<timestamp>.<ext>` (lumberjack's backup name), opens a
    /// new one, and removes the backups the options no longer keep.
    fn rotate(&mut self) -> std::io::Result<()> {
        self.flush()?;
        let path = &self.options.path;
        let stamp = humantime::format_rfc3339_millis(SystemTime::now())
            .to_string()
            .replace(':', "-")
            .trim_end_matches('Z')
            .to_owned();
        // Two rotations within a millisecond get distinct names.
        let mut backup = backup_name(path, &stamp);
        let mut n = 1;
        while backup.exists() {
            backup = backup_name(path, &format!("{stamp}-{n}"));
            n += 1;
        }
        std::fs::rename(path, backup)?;
        let (file, size) = open_file(path)?;
        self.out = Output::File(std::io::BufWriter::new(file));
        self.size = size;
        self.remove_old_backups();
        Ok(())
    }

    fn remove_old_backups(&self) {
        let path = &self.options.path;
        let (dir, stem, ext) = parts(path);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        let mut backups: Vec<(SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with(&format!("{stem}-")) && name.ends_with(&ext) && e.path() != *path
            })
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        backups.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
        let max_age = Duration::from_secs(self.options.max_age_days * 24 * 60 * 60);
        for (i, (modified, backup)) in backups.iter().enumerate() {
            let too_many = self.options.max_backups > 0 && i >= self.options.max_backups;
            let too_old =
                self.options.max_age_days > 0 && modified.elapsed().unwrap_or_default() > max_age;
            if too_many || too_old {
                let _ = std::fs::remove_file(backup);
            }
        }
    }
}

fn open_file(path: &Path) -> std::io::Result<(File, u64)> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new().create(true).append(true).open(path)?;
    let size = file.metadata()?.len();
    Ok((file, size))
}

/// The directory, the name without extension, and the extension (with its dot).
fn parts(path: &Path) -> (PathBuf, String, String) {
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (dir, stem, ext)
}

fn backup_name(path: &Path, stamp: &str) -> PathBuf {
    let (dir, stem, ext) = parts(path);
    dir.join(format!("{stem}-{stamp}{ext}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_by_size_and_keeps_the_newest_backups() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let mut sink = Sink::open(LogOptions {
            path: path.clone(),
            max_size_mb: 1,
            max_backups: 2,
            max_age_days: 0,
        })
        .unwrap();
        let line = "x".repeat(300 * 1024);
        for _ in 0..12 {
            sink.write_line(&line).unwrap();
        }
        sink.flush().unwrap();
        let names: Vec<String> = (std::fs::read_dir(dir.path()).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
        assert!(
            names
                .iter()
                .all(|n| n.starts_with("audit") && n.ends_with(".log"))
        );
        assert!(std::fs::metadata(&path).unwrap().len() <= 1024 * 1024);
    }
}
