//! The memory allocator: jemalloc (the `jemalloc` feature, on by default), which spends
//! less CPU than glibc's malloc on the server's many small, short-lived allocations
//! (measured on etcd: about a quarter less of the server's CPU per create and per GET).
//! It purges freed pages from a background thread (`background_threads`) within a second
//! (`dirty_decay_ms`, set where the workspace builds it: `.cargo/config.toml`), so that
//! resident memory stays near glibc's.

#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
