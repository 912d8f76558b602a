//! Linearizable reads shared by concurrent callers (kube shares its "current revision"
//! reads the same way for consistent reads from its cache): of the keys concurrent callers
//! ask for, read together ([`Batcher`]), or of one answer with no key ([`Shared`]: the
//! current revision, a progress request).
//!
//! A caller may take the answer of a read that *started after it arrived*: that read's
//! linearization point falls within the caller's own call, so the answer is as fresh as
//! a read of its own. A caller that arrives while a read is on its way waits for the next
//! one, which starts as soon as that one ends (after letting the other ready tasks run a
//! few turns, so that requests under way can join it) and answers everyone who arrived
//! meanwhile. Under load, one read in flight serves any number of callers; alone, a caller
//! pays one task hop.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// How many times the reader lets the other ready tasks run before a read that follows
/// another at once. Without it, on a busy machine most reads found one caller waiting
/// (`cargo xtask bench`: as many etcd ranges as requests); with it, a read answers several.
const GATHER_TURNS: usize = 8;

/// One read with no key, shared by concurrent callers on [`Batcher`]'s rule: a batcher of
/// the one key `()`.
pub struct Shared<T>(Batcher<(), T>);

impl<T> Shared<T>
where
    T: Clone + Send + 'static,
{
    /// Shares `read` (which must be linearizable).
    pub fn new<F, Fut>(read: F) -> Shared<T>
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = T> + Send + 'static,
    {
        Shared(Batcher::new(1, move |keys: Vec<()>| {
            let answer = read();
            async move { vec![answer.await; keys.len()] }
        }))
    }

    /// The answer of a read that started after this call.
    pub async fn read(&self) -> T {
        self.0.read(()).await
    }
}

/// One read of several keys, answering for each in order.
type ReadMany<K, T> = dyn Fn(Vec<K>) -> Pin<Box<dyn Future<Output = Vec<T>> + Send>> + Send + Sync;

/// What a [`Batcher`] holds between reads.
struct Batch<K, T> {
    /// Whether a reader task runs (it reads again while anyone waits).
    reading: bool,
    /// The callers waiting for the next read, with their keys, in arrival order.
    waiting: Vec<(K, oneshot::Sender<T>)>,
}

/// Shares reads between concurrent callers of the same or *different* keys: the keys asked
/// for while a read is on its way are read together in the next one (one etcd transaction
/// of ranges rather than one range each), each once: a caller takes the answer of a read
/// that started after it arrived.
pub struct Batcher<K, T> {
    batch: Arc<Mutex<Batch<K, T>>>,
    read: Arc<ReadMany<K, T>>,
    /// The most keys one read asks for (etcd refuses transactions of more than
    /// `--max-txn-ops` operations, 128 by default).
    most: usize,
}

impl<K, T> Batcher<K, T>
where
    K: Hash + Eq + Clone + Send + 'static,
    T: Clone + Send + 'static,
{
    /// Shares `read`, a linearizable read of up to `most` distinct keys that answers for
    /// each key in order.
    pub fn new<F, Fut>(most: usize, read: F) -> Batcher<K, T>
    where
        F: Fn(Vec<K>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<T>> + Send + 'static,
    {
        Batcher {
            batch: Arc::new(Mutex::new(Batch {
                reading: false,
                waiting: Vec::new(),
            })),
            read: Arc::new(move |keys| Box::pin(read(keys))),
            most: most.max(1),
        }
    }

    /// The answer for `key` of a read that started after this call.
    pub async fn read(&self, key: K) -> T {
        let (sender, receiver) = oneshot::channel();
        let start = {
            let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
            batch.waiting.push((key.clone(), sender));
            !std::mem::replace(&mut batch.reading, true)
        };
        if start {
            tokio::spawn(read_batches(
                Arc::clone(&self.batch),
                Arc::clone(&self.read),
                self.most,
            ));
        }
        match receiver.await {
            Ok(answer) => answer,
            // The reader was dropped (the runtime is shutting down): read alone.
            Err(_) => {
                let mut answers = (self.read)(vec![key]).await;
                answers.pop().expect("one answer for one key")
            }
        }
    }
}

/// Frees a [`Batcher`] whose reader ends without finishing (a panic in its read, or a
/// runtime shutting down): otherwise `reading` would stay set and every later caller wait
/// for a reader that is gone. The callers waiting then read alone.
struct Unstuck<K, T> {
    batch: Arc<Mutex<Batch<K, T>>>,
    finished: bool,
}

impl<K, T> Drop for Unstuck<K, T> {
    fn drop(&mut self) {
        if !self.finished {
            let mut state = self.batch.lock().unwrap_or_else(|e| e.into_inner());
            state.reading = false;
            state.waiting.clear();
        }
    }
}

/// Reads the keys of whoever waits, again and again, until nobody waits.
async fn read_batches<K, T>(batch: Arc<Mutex<Batch<K, T>>>, read: Arc<ReadMany<K, T>>, most: usize)
where
    K: Hash + Eq + Clone,
    T: Clone,
{
    let mut unstuck = Unstuck {
        batch: Arc::clone(&batch),
        finished: false,
    };
    let mut gather = false;
    loop {
        if gather {
            // Under continuous demand, let the requests already under way reach this read
            // before it starts, so that it answers more of them.
            for _ in 0..GATHER_TURNS {
                tokio::task::yield_now().await;
            }
        }
        // Up to `most` distinct keys, with every caller of each.
        let mut keys: Vec<K> = Vec::new();
        let mut callers: HashMap<K, Vec<oneshot::Sender<T>>> = HashMap::new();
        {
            let mut state = batch.lock().unwrap_or_else(|e| e.into_inner());
            let mut kept = Vec::new();
            for (key, sender) in state.waiting.drain(..) {
                match callers.get_mut(&key) {
                    Some(senders) => senders.push(sender),
                    None if keys.len() < most => {
                        keys.push(key.clone());
                        callers.insert(key, vec![sender]);
                    }
                    None => kept.push((key, sender)),
                }
            }
            state.waiting = kept;
            if keys.is_empty() {
                state.reading = false;
                unstuck.finished = true;
                return;
            }
            // With callers left over, read again at once rather than gather more.
            gather = state.waiting.is_empty();
        }
        let answers = read(keys.clone()).await;
        for (key, answer) in keys.into_iter().zip(answers) {
            for sender in callers.remove(&key).unwrap_or_default() {
                let _ = sender.send(answer.clone());
            }
        }
        // A read that answered fewer keys than asked drops the rest's senders: those
        // callers read alone (`Batcher::read`).
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    use tokio::sync::Semaphore;

    use super::*;

    /// A read that counts itself, answers its own number, and waits for a permit.
    fn counted(reads: Arc<AtomicU64>, gate: Arc<Semaphore>) -> Shared<u64> {
        Shared::new(move || {
            let (reads, gate) = (Arc::clone(&reads), Arc::clone(&gate));
            async move {
                let number = reads.fetch_add(1, Ordering::SeqCst) + 1;
                gate.acquire().await.expect("open").forget();
                number
            }
        })
    }

    #[tokio::test]
    async fn callers_arriving_during_a_read_share_the_next_one() {
        let (reads, gate) = (Arc::new(AtomicU64::new(0)), Arc::new(Semaphore::new(0)));
        let shared = Arc::new(counted(Arc::clone(&reads), Arc::clone(&gate)));
        let first = tokio::spawn({
            let shared = Arc::clone(&shared);
            async move { shared.read().await }
        });
        // The first read is under way (it counted itself) before the others arrive.
        while reads.load(Ordering::SeqCst) < 1 {
            tokio::task::yield_now().await;
        }
        let later: Vec<_> = (0..10)
            .map(|_| {
                let shared = Arc::clone(&shared);
                tokio::spawn(async move { shared.read().await })
            })
            .collect();
        // Let every later caller queue, then let both reads finish.
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        gate.add_permits(2);
        assert_eq!(
            first.await.unwrap(),
            1,
            "the first caller takes its own read"
        );
        for caller in later {
            // Never the read that was under way when they arrived.
            assert_eq!(caller.await.unwrap(), 2);
        }
        assert_eq!(reads.load(Ordering::SeqCst), 2);
        // Sequential callers never share: each arrives after the last read ended.
        gate.add_permits(2);
        assert_eq!(shared.read().await, 3);
        assert_eq!(shared.read().await, 4);
    }

    /// A batched read that records the keys of each read, answers `key:read number`, and
    /// waits for a permit.
    fn batched(
        most: usize,
        reads: Arc<Mutex<Vec<Vec<&'static str>>>>,
        gate: Arc<Semaphore>,
    ) -> Batcher<&'static str, String> {
        Batcher::new(most, move |keys: Vec<&'static str>| {
            let (reads, gate) = (Arc::clone(&reads), Arc::clone(&gate));
            async move {
                let number = {
                    let mut reads = reads.lock().unwrap();
                    reads.push(keys.clone());
                    reads.len()
                };
                gate.acquire().await.expect("open").forget();
                keys.iter().map(|key| format!("{key}:{number}")).collect()
            }
        })
    }

    #[tokio::test]
    async fn callers_of_different_keys_share_the_next_read() {
        let reads = Arc::new(Mutex::new(Vec::new()));
        let gate = Arc::new(Semaphore::new(0));
        let batcher = Arc::new(batched(3, Arc::clone(&reads), Arc::clone(&gate)));
        let read = |key: &'static str| {
            let batcher = Arc::clone(&batcher);
            tokio::spawn(async move { batcher.read(key).await })
        };
        let first = read("a");
        while reads.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        // Arriving while the first read is under way: five keys, one asked twice.
        let later: Vec<_> = ["b", "c", "b", "d", "e", "a"].map(read).into();
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        gate.add_permits(3);
        assert_eq!(first.await.unwrap(), "a:1");
        let answers: Vec<String> = futures_util::future::join_all(later)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        // At most three keys a read, each once, in arrival order; nobody takes the read
        // that was under way when they arrived.
        assert_eq!(answers, ["b:2", "c:2", "b:2", "d:2", "e:3", "a:3"]);
        assert_eq!(
            *reads.lock().unwrap(),
            [vec!["a"], vec!["b", "c", "d"], vec!["e", "a"]]
        );
        // A lone caller afterwards reads again.
        gate.add_permits(1);
        assert_eq!(batcher.read("a").await, "a:4");
    }

    /// A reader that panics leaves no caller waiting: those waiting read alone, and later
    /// callers get a reader of their own.
    #[tokio::test]
    async fn a_panicking_read_leaves_no_caller_waiting() {
        let panicked = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let batcher = Batcher::new(8, {
            let panicked = Arc::clone(&panicked);
            move |keys: Vec<&'static str>| {
                let first = !panicked.swap(true, Ordering::SeqCst);
                async move {
                    assert!(!first, "the first read fails");
                    keys.iter().map(|key| key.len()).collect::<Vec<_>>()
                }
            }
        });
        let within = Duration::from_secs(10);
        let alone = tokio::time::timeout(within, batcher.read("ab")).await;
        assert_eq!(alone.expect("answered"), 2, "read alone");
        let later = tokio::time::timeout(within, batcher.read("abc")).await;
        assert_eq!(later.expect("not left waiting"), 3);
    }
}
