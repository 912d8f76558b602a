//! The store's reader threads: a few threads of its own on which every read transaction
//! runs, fed by one queue.
//!
//! Why not tokio's blocking pool: it starts a thread for every read that finds all of its
//! threads busy (two dozen at start-up, when every kind's watch cache is filled at once),
//! keeps each for ten seconds after its last task, and hands later reads to all of them in
//! turn. Each thread's allocator cache then keeps freed memory of its own: at 10k objects
//! the server held 3-4 MiB more (two fifths of the objects' JSON) whenever storage had
//! served a few paginated or exact lists, until those threads ended. A fixed set of
//! threads bounds that. The price: a read waits in the queue while every thread is busy,
//! which takes more reads at once than the cores run anyway, unless that many long ones
//! (whole large collections from storage) are under way.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, mpsc};

use tokio::sync::oneshot;

/// One read, with the sender of its answer.
type Job = Box<dyn FnOnce() + Send>;

/// How many reader threads a store starts: twice the cores, so that a long read (a whole
/// large collection) does not hold every short one back, and at least four.
pub(super) fn default_count() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    (2 * cores).clamp(4, 16)
}

/// The reader threads. Dropping this closes the queue: each thread ends after the read it
/// is running, if any (reads hold the store; the threads themselves do not).
pub(super) struct Readers {
    jobs: mpsc::Sender<Job>,
}

impl Readers {
    /// Starts `count` threads (at least one).
    pub(super) fn start(count: usize) -> std::io::Result<Readers> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..count.max(1) {
            let queue = Arc::clone(&queue);
            std::thread::Builder::new()
                .name(format!("kapi-reader-{n}"))
                .spawn(move || {
                    loop {
                        // The lock is released before the job runs: one thread waits on
                        // the queue, the others for the lock.
                        let job = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        let Ok(job) = job else { return };
                        // A read that panics drops its answer's sender (its caller gets an
                        // error); the thread serves the next one.
                        let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
                    }
                })?;
        }
        Ok(Readers { jobs })
    }

    /// Runs `read` on a reader thread: its answer, or `None` when it panicked or the
    /// threads are gone.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        read: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move || {
            // The caller may have gone (its request was cancelled).
            let _ = answer.send(read());
        });
        self.jobs.send(job).ok()?;
        answered.await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::Readers;

    /// Reads run on the store's threads, a panicking one answers `None` without taking its
    /// thread down, and reads queued behind busy threads are all answered.
    #[tokio::test]
    async fn reads_run_on_the_reader_threads() {
        let readers = Readers::start(2).unwrap();
        let name = readers
            .run(|| std::thread::current().name().map(str::to_owned))
            .await;
        assert!(
            name.flatten()
                .is_some_and(|n| n.starts_with("kapi-reader-")),
            "a reader thread ran it"
        );
        assert_eq!(
            readers.run(|| -> u8 { panic!("a failed read") }).await,
            None
        );
        assert_eq!(readers.run(|| 1).await, Some(1), "after a panic");
        let reads = (0..50).map(|n| readers.run(move || n * 2));
        let answers = futures_util::future::join_all(reads).await;
        assert_eq!(answers, (0..50).map(|n| Some(n * 2)).collect::<Vec<_>>());
    }
}
