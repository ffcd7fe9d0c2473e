//! Starts a control plane tied to this process, prints its process ids, then ends the
//! way it is told: `panic`, or `wait` (to be killed). The clean-up test runs it to
//! prove that no etcd or kube-apiserver outlives its owner, however the owner ends.

use std::io::Write as _;

use hecate_testenv::{Binaries, ControlPlane, Lifetime};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(ending)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: hold-control-plane DIR panic|wait");
    };
    let binaries = Binaries::locate_or_build()?;
    let plane = ControlPlane::start(&binaries, std::path::Path::new(&dir), Lifetime::ThisProcess)?;
    let pids: Vec<String> = plane.endpoint().pids.iter().map(u32::to_string).collect();
    println!("{}", pids.join(" "));
    std::io::stdout().flush()?;
    match ending.as_str() {
        "panic" => panic!("ending with a panic, as asked"),
        _ => loop {
            std::thread::sleep(std::time::Duration::from_secs(60));
        },
    }
}
