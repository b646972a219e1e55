//! The wire: pipelining, inline commands, protocol errors, hostile bytes.

use std::io::Write;
use std::time::Duration;

use crate::common::{encode_cmd, Raw, Server};

#[test]
fn pipelined_replies_come_back_in_order() {
    let s = Server::start();
    let mut r = s.raw();
    let mut batch = Vec::new();
    for i in 0..200 {
        batch.extend(encode_cmd(&[b"SET", format!("k{i}").as_bytes(), format!("v{i}").as_bytes()]));
        batch.extend(encode_cmd(&[b"GET", format!("k{i}").as_bytes()]));
        batch.extend(encode_cmd(&[b"INCR", b"counter"]));
    }
    r.send(&batch);
    for i in 0..200 {
        assert_eq!(r.read_reply(), b"+OK\r\n");
        assert_eq!(
            r.read_reply(),
            format!("${}\r\nv{i}\r\n", format!("v{i}").len()).into_bytes(),
            "read sees its own pipelined write"
        );
        assert_eq!(r.read_reply(), format!(":{}\r\n", i + 1).into_bytes());
    }
}

#[test]
fn inline_commands() {
    let s = Server::start();
    let mut r = s.raw();
    r.send(b"SET greeting \"hello world\"\r\nGET greeting\r\nPING\n");
    assert_eq!(r.read_reply(), b"+OK\r\n");
    assert_eq!(r.read_reply(), b"$11\r\nhello world\r\n");
    assert_eq!(r.read_reply(), b"+PONG\r\n");
}

#[test]
fn unknown_command_and_arity_errors_match_redis() {
    let s = Server::start();
    let mut r = s.raw();
    assert_eq!(r.cmd(&["FOO", "a", "b"]), "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n");
    assert_eq!(r.cmd(&["FOO"]), "-ERR unknown command 'FOO', with args beginning with: \r\n");
    assert_eq!(r.cmd(&["GET"]), "-ERR wrong number of arguments for 'get' command\r\n");
    assert_eq!(r.cmd(&["get", "a", "b"]), "-ERR wrong number of arguments for 'get' command\r\n");
}

fn expect_protocol_error(s: &Server, bytes: &[u8], msg: &str) {
    let mut r = s.raw();
    r.send(bytes);
    let reply = String::from_utf8(r.read_reply()).unwrap();
    assert_eq!(reply, format!("-ERR Protocol error: {msg}\r\n"));
    assert!(r.is_closed(), "the connection closes after a protocol error");
}

#[test]
fn protocol_errors_close_the_connection() {
    let s = Server::start();
    expect_protocol_error(&s, b"*1\r\nfoo\r\n", "expected '$', got 'f'");
    expect_protocol_error(&s, b"*x\r\n", "invalid multibulk length");
    expect_protocol_error(&s, b"*1\r\n$-3\r\n", "invalid bulk length");
    expect_protocol_error(&s, b"*2000000\r\n", "invalid multibulk length");
    expect_protocol_error(&s, b"*1\r\n$600000000\r\n", "invalid bulk length");
    expect_protocol_error(&s, b"SET a \"b\r\n", "unbalanced quotes in request");
    let mut big = vec![b'a'; 70 * 1024];
    big.push(b'\n');
    expect_protocol_error(&s, &big, "too big inline request");
    // The server is still healthy.
    assert_eq!(s.raw().cmd(&["PING"]), "+PONG\r\n");
}

#[test]
fn proto_max_bulk_len_is_configurable() {
    let s = Server::start_with(&["--cores", "1", "--proto-max-bulk-len", "2mb"]);
    expect_protocol_error(&s, b"*2\r\n$3\r\nGET\r\n$3000000\r\n", "invalid bulk length");
}

#[test]
fn partial_frames_wait_for_more_bytes() {
    let s = Server::start();
    let mut r = s.raw();
    let frame = encode_cmd(&[b"SET", b"slow", b"value"]);
    for b in &frame {
        r.w.write_all(&[*b]).unwrap();
        std::thread::sleep(Duration::from_micros(200));
    }
    assert_eq!(r.read_reply(), b"+OK\r\n");
    assert_eq!(r.cmd(&["GET", "slow"]), "$5\r\nvalue\r\n");
}

#[test]
fn hostile_bytes_never_crash_the_server() {
    let mut s = Server::start();
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let alphabet = b"*$:+-\r\n0123456789abcSETGET \"'\\x{}";
    for _ in 0..300 {
        let len = (next() % 200) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| if next() % 4 == 0 { next() as u8 } else { alphabet[(next() % alphabet.len() as u64) as usize] })
            .collect();
        if let Ok(mut st) = std::net::TcpStream::connect(("127.0.0.1", s.port)) {
            let _ = st.write_all(&bytes);
        }
    }
    assert!(s.is_running());
    assert_eq!(Raw::connect(s.port).cmd(&["PING"]), "+PONG\r\n");
}
