// temporary load generator (not committed)
use std::time::{Duration, Instant};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let base = args[1].clone();
    let secs: u64 = args[2].parse().unwrap();
    let mode = args[3].clone();
    let start = Instant::now();
    let prefix = format!("{}", std::process::id());
    let handles: Vec<_> = (0..16).map(|c| {
        let base = base.clone(); let mode = mode.clone(); let prefix = prefix.clone();
        std::thread::spawn(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
            let data = "x".repeat(1024);
            let mut n = 0u64;
            while start.elapsed() < Duration::from_secs(secs) {
                if mode == "create" {
                    let body = format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c{prefix}-{c}-{n}"}},"data":{{"v":"{data}"}}}}"#);
                    let r = agent.post(&base).header("Content-Type","application/json").send(body).unwrap();
                    assert_eq!(r.status().as_u16(), 201);
                } else {
                    let r = agent.get(&format!("{base}/{mode}")).call().unwrap();
                    assert_eq!(r.status().as_u16(), 200);
                }
                n += 1;
            }
            n
        })
    }).collect();
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    println!("{} ops/s", total as f64 / start.elapsed().as_secs_f64());
}
