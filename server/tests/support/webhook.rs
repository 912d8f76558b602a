//! Webhooks the tests serve: a Python script from `tests/python/` on HTTPS with a
//! certificate of the test's CA, on a free loopback port, killed when dropped. It prints
//! `listening on PORT`, then one JSON line per review it received.

use std::time::Duration;

use serde_json::Value;

use super::pki::Pki;

/// A running webhook script.
pub(crate) struct Webhook {
    child: std::process::Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    reviews: std::sync::mpsc::Receiver<Value>,
}

impl Webhook {
    /// Starts `tests/python/<script>` serving with `pki`'s serving certificate.
    pub(crate) fn start(script: &str, pki: &Pki) -> Webhook {
        Webhook::start_with(script, pki, &[])
    }

    /// [`Webhook::start`], with more arguments after the certificate and key.
    pub(crate) fn start_with(script: &str, pki: &Pki, args: &[&str]) -> Webhook {
        use std::io::BufRead;
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/python")
            .join(script);
        let mut child = std::process::Command::new("python3")
            .arg(&script)
            .arg(&pki.serving.0)
            .arg(&pki.serving.1)
            .args(args)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", script.display()));
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let port = (first
            .strip_prefix("listening on ")
            .and_then(|p| p.parse().ok()))
        .unwrap_or_else(|| panic!("the webhook did not start: {first:?}"));
        let (sender, reviews) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let _ = sender.send(serde_json::from_str(&line).unwrap_or(Value::Null));
            }
        });
        Webhook {
            child,
            port,
            reviews,
        }
    }

    /// `https://127.0.0.1:<port><path>`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// The next review received (its line may trail the answer the server got).
    #[track_caller]
    pub(crate) fn next(&self) -> Value {
        (self.reviews.recv_timeout(Duration::from_secs(10))).expect("a review within 10 s")
    }

    /// The next review of the object named `name`. Reviews of other objects are passed
    /// over: lines of earlier requests (`wait_admitting`'s probes) may trail their answers.
    #[track_caller]
    pub(crate) fn next_for(&self, name: &str) -> Value {
        loop {
            let review = self.next();
            if review["name"] == name {
                return review;
            }
        }
    }

    /// The reviews received so far and not yet read.
    pub(crate) fn drain(&self) -> Vec<Value> {
        self.reviews.try_iter().collect()
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
