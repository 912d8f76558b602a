//! The stored allocators against a real store: two allocators of one range on one store
//! (two servers) never hand out a value twice, what one releases the other can take, and
//! what is asked for outside the range or taken is refused with kube's messages.

use std::collections::BTreeSet;
use std::sync::Arc;

use kapi_allocator::{IpAllocator, IpRange, PortAllocator, PortRange};
use kapi_core::net::cidr::Cidr;
use kapi_storage::Storage;
use kapi_storage::embedded::EmbeddedStorage;

fn store() -> (tempfile::TempDir, Arc<dyn Storage>) {
    let dir = tempfile::tempdir().unwrap();
    let storage: Arc<dyn Storage> = Arc::new(EmbeddedStorage::open(dir.path()).unwrap());
    (dir, storage)
}

fn ips(storage: &Arc<dyn Storage>) -> IpAllocator {
    let range = IpRange::new(Cidr::parse("10.0.0.0/24").unwrap());
    IpAllocator::new(
        Arc::clone(storage),
        "/registry/ranges/serviceips".into(),
        range,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_allocators_on_one_store_never_hand_out_one_address_twice() {
    let (_dir, storage) = store();
    let (a, b) = (Arc::new(ips(&storage)), Arc::new(ips(&storage)));
    let mut tasks = Vec::new();
    for i in 0..8 {
        let allocator = Arc::clone(if i % 2 == 0 { &a } else { &b });
        tasks.push(tokio::spawn(async move {
            let mut taken = Vec::new();
            for _ in 0..30 {
                taken.push(allocator.allocate_next(false).await.unwrap());
            }
            taken
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    let distinct: BTreeSet<_> = all.iter().collect();
    assert_eq!(distinct.len(), 240, "{all:?}");
    // The last 14 addresses, then the range is full.
    for _ in 0..14 {
        a.allocate_next(false).await.unwrap();
    }
    assert_eq!(
        b.allocate_next(false).await.unwrap_err().to_string(),
        "range is full"
    );
    // Released by one, taken by the other.
    let freed = all[0];
    a.release(freed).await.unwrap();
    assert_eq!(b.allocate_next(false).await.unwrap(), freed);
}

#[tokio::test]
async fn requested_values_are_refused_with_kubes_messages() {
    let (_dir, storage) = store();
    let allocator = ips(&storage);
    let ip = "10.0.0.10".parse().unwrap();
    allocator.allocate(ip, false).await.unwrap();
    let taken = allocator.allocate(ip, false).await.unwrap_err();
    assert_eq!(taken.to_string(), "provided IP is already allocated");
    let outside = allocator
        .allocate("10.0.1.1".parse().unwrap(), false)
        .await
        .unwrap_err();
    assert_eq!(
        outside.to_string(),
        "the provided IP (10.0.1.1) is not in the valid range. The range of valid IPs is 10.0.0.0/24"
    );
    // A dry run takes nothing.
    allocator
        .allocate("10.0.0.11".parse().unwrap(), true)
        .await
        .unwrap();
    allocator
        .allocate("10.0.0.11".parse().unwrap(), false)
        .await
        .unwrap();

    let ports = PortAllocator::new(
        Arc::clone(&storage),
        "/registry/ranges/servicenodeports".into(),
        PortRange::parse("30000-32767").unwrap(),
    );
    ports.allocate(30080, false).await.unwrap();
    assert!(ports.is_taken(30080).await.unwrap());
    let taken = ports.allocate(30080, false).await.unwrap_err();
    assert_eq!(taken.to_string(), "provided port is already allocated");
    let outside = ports.allocate(40000, false).await.unwrap_err();
    assert_eq!(
        outside.to_string(),
        "provided port is not in the valid range. The range of valid ports is 30000-32767"
    );
    ports.release(30080).await.unwrap();
    assert!(!ports.is_taken(30080).await.unwrap());
    // A free port comes from above kube's static band (30000-30085) while there is one.
    let next = ports.allocate_next(false).await.unwrap();
    assert!((30086..=32767).contains(&next), "{next}");
}
