//! `webapp-controller`'s command line: kube-controller-manager's leader-election flags with
//! their defaults, and client-go's rules on their values refused with its messages before
//! anything connects. (The controller's behaviour against the real server is tested in
//! `server/tests/controller.rs`, beside the server's harness.)

use std::process::Command;

fn run(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_webapp-controller"))
        .args(args)
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .expect("running webapp-controller");
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    (
        output.status.success(),
        text(output.stdout),
        text(output.stderr),
    )
}

#[test]
fn help_lists_the_leader_election_flags_and_their_defaults() {
    let (ok, out, err) = run(&["--help"]);
    assert!(ok, "{err}");
    for flag in [
        "--kubeconfig",
        "--leader-elect ",
        "--leader-elect-lease-duration <LEADER_ELECT_LEASE_DURATION>",
        "[default: 15s]",
        "[default: 10s]",
        "[default: 2s]",
        "--leader-elect-resource-name <LEADER_ELECT_RESOURCE_NAME>",
        "[default: webapp-controller]",
        "--leader-elect-resource-namespace",
        "[default: default]",
        "--identity",
    ] {
        assert!(out.contains(flag), "{flag} in:\n{out}");
    }
}

#[test]
fn inconsistent_durations_are_refused_with_client_gos_messages() {
    let cases = [
        (
            &[
                "--leader-elect-lease-duration=5s",
                "--leader-elect-renew-deadline=5s",
            ][..],
            "leaseDuration must be greater than renewDeadline",
        ),
        (
            &[
                "--leader-elect-renew-deadline=2s",
                "--leader-elect-retry-period=2s",
            ][..],
            "renewDeadline must be greater than retryPeriod*JitterFactor",
        ),
        (&["--identity="][..], "Lock identity is empty"),
    ];
    for (args, message) in cases {
        let (ok, _, err) = run(args);
        assert!(!ok, "{args:?} refused");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    let (ok, _, err) = run(&["--leader-elect-retry-period=soon"]);
    assert!(!ok && err.contains("invalid duration"), "{err}");
}

#[test]
fn no_cluster_is_a_clear_error() {
    let (ok, _, err) = run(&["--kubeconfig=/nonexistent/kubeconfig"]);
    assert!(!ok);
    assert!(
        err.contains("reading the kubeconfig /nonexistent/kubeconfig"),
        "{err}"
    );
}
