//! Linearizable reads shared by concurrent callers (kube shares its "current revision"
//! reads the same way for consistent reads from its cache).
//!
//! A caller may take the answer of a read that *started after it arrived*: that read's
//! linearization point falls within the caller's own call, so the answer is as fresh as
//! a read of its own. A caller that arrives while a read of the same key is on its way
//! waits for the next one, which starts as soon as that one ends (after letting the other
//! ready tasks run a few turns, so that requests under way can join it) and answers
//! everyone who arrived meanwhile. Under load, one read in flight per key serves any number
//! of callers; alone, a caller pays one task hop.

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

/// One read of a key.
type Read<K, T> = dyn Fn(K) -> Pin<Box<dyn Future<Output = T> + Send>> + Send + Sync;

/// Callers waiting for the next read, per key; a key is present while its reader runs.
type Waiting<K, T> = Mutex<HashMap<K, Vec<oneshot::Sender<T>>>>;

/// Shares reads of keys `K` answering `T` between concurrent callers.
pub struct Coalescer<K, T> {
    waiting: Arc<Waiting<K, T>>,
    read: Arc<Read<K, T>>,
}

impl<K, T> Coalescer<K, T>
where
    K: Hash + Eq + Clone + Send + 'static,
    T: Clone + Send + 'static,
{
    /// Shares `read` (which must be a linearizable read of its key).
    pub fn new<F, Fut>(read: F) -> Coalescer<K, T>
    where
        F: Fn(K) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = T> + Send + 'static,
    {
        Coalescer {
            waiting: Arc::new(Mutex::new(HashMap::new())),
            read: Arc::new(move |key| Box::pin(read(key))),
        }
    }

    /// The answer of a read of `key` that started after this call.
    pub async fn read(&self, key: K) -> T {
        let (sender, receiver) = oneshot::channel();
        let start = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            match waiting.get_mut(&key) {
                Some(next) => {
                    next.push(sender);
                    false
                }
                None => {
                    waiting.insert(key.clone(), vec![sender]);
                    true
                }
            }
        };
        if start {
            tokio::spawn(reader(
                Arc::clone(&self.waiting),
                Arc::clone(&self.read),
                key.clone(),
            ));
        }
        match receiver.await {
            Ok(answer) => answer,
            // The reader was dropped (the runtime is shutting down): read alone.
            Err(_) => (self.read)(key).await,
        }
    }
}

/// Reads `key` for whoever waits, again and again, until a read ends with nobody waiting
/// for the next one.
async fn reader<K, T>(waiting: Arc<Waiting<K, T>>, read: Arc<Read<K, T>>, key: K)
where
    K: Hash + Eq + Clone,
    T: Clone,
{
    let mut first = true;
    loop {
        if !first {
            // Under continuous demand, let the requests already under way reach their read
            // before the next one starts, so that it answers more of them.
            for _ in 0..GATHER_TURNS {
                tokio::task::yield_now().await;
            }
        }
        first = false;
        let batch = {
            let mut state = waiting.lock().unwrap_or_else(|e| e.into_inner());
            match state.get_mut(&key) {
                Some(next) if !next.is_empty() => std::mem::take(next),
                _ => {
                    state.remove(&key);
                    return;
                }
            }
        };
        let answer = read(key.clone()).await;
        for sender in batch {
            let _ = sender.send(answer.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use tokio::sync::Semaphore;

    use super::*;

    /// A read that counts itself, answers its own number, and waits for a permit.
    fn counted(reads: Arc<AtomicU64>, gate: Arc<Semaphore>) -> Coalescer<&'static str, u64> {
        Coalescer::new(move |_key| {
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
        let coalescer = Arc::new(counted(Arc::clone(&reads), Arc::clone(&gate)));
        let first = tokio::spawn({
            let coalescer = Arc::clone(&coalescer);
            async move { coalescer.read("a").await }
        });
        // The first read is under way (it counted itself) before the others arrive.
        while reads.load(Ordering::SeqCst) < 1 {
            tokio::task::yield_now().await;
        }
        let later: Vec<_> = (0..10)
            .map(|_| {
                let coalescer = Arc::clone(&coalescer);
                tokio::spawn(async move { coalescer.read("a").await })
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
    }

    #[tokio::test]
    async fn keys_are_read_apart_and_a_quiet_key_is_read_again() {
        let (reads, gate) = (Arc::new(AtomicU64::new(0)), Arc::new(Semaphore::new(100)));
        let coalescer = counted(Arc::clone(&reads), gate);
        assert_eq!(coalescer.read("a").await, 1);
        assert_eq!(coalescer.read("b").await, 2);
        // Sequential callers never share: each arrives after the last read ended.
        assert_eq!(coalescer.read("a").await, 3);
    }
}
