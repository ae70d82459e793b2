//! A fake relay (a TCP listener on the loopback) answering the live reader with junk,
//! truncated or out-of-bounds replies: each read ends with an error naming the relay and the
//! reply that was wrong, never a panic or a hang.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use live::{LiveOptions, LiveSource, Url};

/// A valid CONNECT reply (viewer session 1, protocol 2.4).
fn connect_reply() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&1u64.to_be_bytes());
    b.extend_from_slice(&2u32.to_be_bytes());
    b.extend_from_slice(&4u32.to_be_bytes());
    b.extend_from_slice(&1u32.to_be_bytes());
    b
}

/// A LIST_SESSIONS reply with one live session `h/s`.
fn one_session() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&1u32.to_be_bytes());
    b.extend_from_slice(&7u64.to_be_bytes());
    b.extend_from_slice(&100_000u32.to_be_bytes());
    b.extend_from_slice(&0u32.to_be_bytes());
    b.extend_from_slice(&1u32.to_be_bytes());
    let mut host = [0u8; 64];
    host[0] = b'h';
    b.extend_from_slice(&host);
    let mut name = [0u8; 255];
    name[0] = b's';
    b.extend_from_slice(&name);
    b
}

/// Serves one connection: reads each request's 16-byte header and payload, and answers
/// request `i` with `replies[i]` (then closes the connection).
fn fake_relay(replies: Vec<Vec<u8>>) -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let Ok((mut c, _)) = l.accept() else { return };
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        for r in replies {
            let mut head = [0u8; 16];
            if c.read_exact(&mut head).is_err() {
                return;
            }
            let len = u64::from_be_bytes(head[..8].try_into().unwrap()) as usize;
            let mut payload = vec![0u8; len.min(1 << 16)];
            if c.read_exact(&mut payload).is_err() {
                return;
            }
            if c.write_all(&r).is_err() {
                return;
            }
        }
    });
    (port, h)
}

fn connect_error(replies: Vec<Vec<u8>>) -> (String, u16) {
    let (port, h) = fake_relay(replies);
    let url = Url::parse(&format!("net://127.0.0.1:{port}/host/h/s")).unwrap();
    let e = LiveSource::connect(&[url], LiveOptions::default())
        .expect_err("a broken relay must give an error");
    h.join().unwrap();
    (e.to_string(), port)
}

#[test]
fn junk_and_truncated_replies_are_clear_errors() {
    let relay = |port: u16| format!("relay 127.0.0.1:{port}");
    // Junk where the version should be: a protocol that is not 2.x.
    let (e, port) = connect_error(vec![b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec()]);
    assert!(e.contains(&relay(port)) && e.contains("CONNECT"), "{e}");
    // The version cut short by a closed connection.
    let (e, port) = connect_error(vec![connect_reply()[..10].to_vec()]);
    assert!(
        e.contains(&relay(port)) && e.contains("reply to CONNECT") && e.contains("closed"),
        "{e}"
    );
    // A session list announcing more sessions than any relay has.
    let (e, port) = connect_error(vec![connect_reply(), u32::MAX.to_be_bytes().to_vec()]);
    assert!(
        e.contains(&relay(port)) && e.contains("reply to LIST_SESSIONS"),
        "{e}"
    );
    // A session list cut in the middle of its record.
    let (e, port) = connect_error(vec![connect_reply(), one_session()[..100].to_vec()]);
    assert!(
        e.contains(&relay(port)) && e.contains("LIST_SESSIONS") && e.contains("closed"),
        "{e}"
    );
    // An attach reply whose stream record says it is metadata with a flag of 7.
    let mut attach = Vec::new();
    attach.extend_from_slice(&1u32.to_be_bytes());
    attach.extend_from_slice(&1u32.to_be_bytes());
    attach.extend_from_slice(&3u64.to_be_bytes());
    attach.extend_from_slice(&1u64.to_be_bytes());
    attach.extend_from_slice(&7u32.to_be_bytes());
    attach.extend(std::iter::repeat_n(0u8, 4096 + 255));
    let (e, port) = connect_error(vec![
        connect_reply(),
        one_session(),
        1u32.to_be_bytes().to_vec(),
        attach,
    ]);
    assert!(
        e.contains(&relay(port)) && e.contains("ATTACH_SESSION") && e.contains("metadata_flag"),
        "{e}"
    );
    // The session asked for is not there: the error lists those that are.
    let (port, h) = fake_relay(vec![connect_reply(), one_session()]);
    let url = Url::parse(&format!("net://127.0.0.1:{port}/host/h/other")).unwrap();
    let e = LiveSource::connect(&[url], LiveOptions::default())
        .unwrap_err()
        .to_string();
    h.join().unwrap();
    assert!(e.contains("\"other\"") && e.contains("h/s"), "{e}");
}

#[test]
fn nothing_listening_is_a_connect_error() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let url = Url::parse(&format!("net://127.0.0.1:{port}")).unwrap();
    let e = live::list_sessions(&url).unwrap_err().to_string();
    assert!(
        e.contains(&format!("cannot connect to the relay at 127.0.0.1:{port}")),
        "{e}"
    );
}

/// An attach reply listing a metadata stream (1) and a data stream (2) of trace 1.
fn attach_two_streams() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&1u32.to_be_bytes());
    b.extend_from_slice(&2u32.to_be_bytes());
    for (id, meta, chan) in [(1u64, 1u32, &b"metadata"[..]), (2, 0, b"chan_0")] {
        b.extend_from_slice(&id.to_be_bytes());
        b.extend_from_slice(&1u64.to_be_bytes());
        b.extend_from_slice(&meta.to_be_bytes());
        let mut path = vec![0u8; 4096];
        path[..9].copy_from_slice(b"h/s/ust/0");
        b.extend_from_slice(&path);
        let mut name = vec![0u8; 255];
        name[..chan.len()].copy_from_slice(chan);
        b.extend_from_slice(&name);
    }
    b
}

const TSDL: &str = r#"/* CTF 1.8 */
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
trace { major = 1; minor = 8; byte_order = le;
    packet.header := struct { uint32_t magic; uint32_t stream_id; }; };
stream { id = 0; event.header := struct { uint32_t id; }; };
event { name = "e"; id = 0; stream_id = 0; fields := struct { uint32_t x; }; };
"#;

struct Count(u64);

impl pipeline::Sink for Count {
    fn event(&mut self, _ev: &ctf::Event<'_>, _ts: i64) -> pipeline::Flow {
        self.0 += 1;
        pipeline::Flow::Continue
    }
}

#[test]
fn a_bad_index_while_reading_ends_the_read_with_an_error() {
    let mut metadata = Vec::new();
    metadata.extend_from_slice(&(TSDL.len() as u64).to_be_bytes());
    metadata.extend_from_slice(&1u32.to_be_bytes());
    metadata.extend_from_slice(TSDL.as_bytes());
    let mut no_more = Vec::new();
    no_more.extend_from_slice(&0u64.to_be_bytes());
    no_more.extend_from_slice(&2u32.to_be_bytes());
    // An index whose status no relay sends.
    let mut index = vec![0u8; 56];
    index.extend_from_slice(&99u32.to_be_bytes());
    index.extend_from_slice(&0u32.to_be_bytes());
    let (port, h) = fake_relay(vec![
        connect_reply(),
        one_session(),
        1u32.to_be_bytes().to_vec(),
        attach_two_streams(),
        metadata,
        no_more,
        index,
    ]);
    let url = Url::parse(&format!("net://127.0.0.1:{port}/host/h/s")).unwrap();
    let source = LiveSource::connect(&[url], LiveOptions::default()).expect("attached");
    let mut sink = Count(0);
    let summary = pipeline::Source::run(&source, &mut sink);
    h.join().unwrap();
    assert_eq!(sink.0, 0);
    let errors = summary.error_strings();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains(&format!("relay 127.0.0.1:{port}"))
            && errors[0].contains("GET_NEXT_INDEX")
            && errors[0].contains("status 99"),
        "{errors:?}"
    );
}
