//! A control plane never outlives the process that started it, however that process
//! ends.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `hold-control-plane DIR <ending>`, waits until it reports its control plane's
/// pids, lets `end` finish it, and returns the pids.
fn hold(dir: &Path, ending: &str, end: impl FnOnce(&mut std::process::Child)) -> Vec<u32> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hold-control-plane"))
        .arg(dir)
        .arg(ending)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pids: Vec<u32> = line
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    if pids.len() != 2 {
        // It could not start its control plane: say why, from what it printed.
        let mut why = String::new();
        let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut why);
        let _ = child.wait();
        panic!("expected the pids of etcd and kube-apiserver, got {line:?}; it said:\n{why}");
    }
    for pid in &pids {
        assert!(alive(*pid), "{pid} runs while its owner does");
    }
    end(&mut child);
    pids
}

fn alive(pid: u32) -> bool {
    // A zombie is dead: it only waits for its parent to collect it.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

fn assert_cleaned_up(pids: &[u32], dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while (pids.iter().any(|p| alive(*p)) || dir.exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    for pid in pids {
        assert!(!alive(*pid), "process {pid} outlived its owner");
    }
    assert!(!dir.exists(), "{} outlived its owner", dir.display());
}

#[test]
fn nothing_outlives_a_panic() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("plane");
    let pids = hold(&dir, "panic", |child| {
        let status = child.wait().unwrap();
        assert!(!status.success(), "it panicked");
    });
    assert_cleaned_up(&pids, &dir);
}

#[test]
fn nothing_outlives_a_kill() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("plane");
    let pids = hold(&dir, "wait", |child| {
        child.kill().unwrap(); // SIGKILL: no destructor, no handler runs
        child.wait().unwrap();
    });
    assert_cleaned_up(&pids, &dir);
}
