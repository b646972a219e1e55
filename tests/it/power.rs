//! Power loss: a server's data directory on a file system that loses every
//! byte not yet synced on command (`lossyfs`). Whatever the fsync policy, the
//! server starts again after a power cut (what it needs to start was made
//! durable before anything relied on it) and loses acknowledged writes only
//! within the policy's window (`always`: none). The file system also has no
//! fallocate, so the server must grow its log by writing.

use crate::common::Server;
use crate::lossyfs::LossyFs;

/// Write `n` keys, counting those acknowledged (all of them, when it goes well).
fn fill(s: &Server, n: usize) -> usize {
    let mut r = s.raw();
    (0..n).filter(|i| r.cmd(&["SET", &format!("p:{i}"), &format!("v{i}")]) == "+OK\r\n").count()
}

#[test]
fn a_power_cut_leaves_a_server_that_starts_and_keeps_what_its_policy_promises() {
    for policy in ["no", "everysec", "always"] {
        let fs = LossyFs::mount();
        let args = ["--cores", "1", "--appendfsync", policy, "--disk-reserve-mb", "0"];
        let mut s = Server::start_in(&fs.mnt, &args);
        let acked = fill(&s, 300);
        assert_eq!(acked, 300, "{policy}: writes on a file system without fallocate");
        // everysec: what was written more than a second before the cut is synced.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let mut r = s.raw();
        for i in 0..20 {
            assert_eq!(r.cmd(&["SET", &format!("late:{i}"), "x"]), "+OK\r\n");
        }
        s.kill9();
        let lost = fs.lose();
        eprintln!("{policy}: power cut after {acked} acknowledged writes; {lost} unsynced bytes lost");
        // Starts again (bounded: `start_in` waits for the port) and serves.
        let mut s = Server::start_in(&fs.mnt, &args);
        let mut r = s.raw();
        assert_eq!(r.cmd(&["SET", "after", "1"]), "+OK\r\n", "{policy}: writes after the power cut");
        let mut present = 0;
        for i in 0..300 {
            let got = r.cmd(&["GET", &format!("p:{i}")]);
            if got != "$-1\r\n" {
                assert_eq!(got, format!("${}\r\nv{i}\r\n", format!("v{i}").len()), "{policy}: p:{i}");
                present += 1;
            }
        }
        eprintln!("{policy}: {present} of {acked} acknowledged writes survived");
        match policy {
            "always" => {
                assert_eq!(present, acked, "an acknowledged write was lost with appendfsync always");
                for i in 0..20 {
                    assert_eq!(r.cmd(&["GET", &format!("late:{i}")]), "$1\r\nx\r\n", "late:{i}");
                }
            }
            "everysec" => assert_eq!(present, acked, "writes older than a second were lost with everysec"),
            _ => {}
        }
        // And a second cut, of a server that started after a first one.
        s.kill9();
        fs.lose();
        let s = Server::start_in(&fs.mnt, &args);
        assert_eq!(s.raw().cmd(&["PING"]), "+PONG\r\n");
    }
}
