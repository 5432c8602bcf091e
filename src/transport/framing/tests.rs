//! The frame reader and the split check, each over what a server may send.

use super::*;
use tokio::io::DuplexStream;

/// A reader that waits for more holds no buffer; one that was handed a
/// large frame or a burst of replies reads it in growing reads, then goes
/// back.
#[tokio::test]
async fn an_idle_reader_holds_no_buffer() {
    use tokio::io::AsyncWriteExt;
    let (mut server, client) = tokio::io::duplex(1 << 20);
    let mut reader = FrameReader::new(client, 1 << 20);
    server.write_all(b"{\"a\":1}\n").await.unwrap();
    assert!(matches!(reader.next_frame().await, Ok(Some(Inbound::Frame(f))) if f == "{\"a\":1}"));
    let waiting = tokio::select! {
        biased;
        _ = reader.next_frame() => false,
        () = std::future::ready(()) => true,
    };
    assert!(waiting, "nothing more was written");
    assert_eq!((reader.buf.capacity(), reader.line.capacity()), (0, 0), "idle, it holds nothing");

    let big = format!("{{\"t\":\"{}\"}}\n", "x".repeat(300 << 10));
    server.write_all(big.as_bytes()).await.unwrap();
    server.write_all(b"{}\n").await.unwrap();
    assert!(matches!(reader.next_frame().await, Ok(Some(Inbound::Frame(f))) if f.len() == big.len() - 1));
    assert_eq!(reader.buf.capacity(), READ_BUFFER_BYTES, "it grew to the most");
    assert!(matches!(reader.next_frame().await, Ok(Some(Inbound::Frame(f))) if f == "{}"));

    let burst = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n".repeat(10_000);
    server.write_all(burst.as_bytes()).await.unwrap();
    for _ in 0..10_000 {
        assert!(matches!(reader.next_frame().await, Ok(Some(Inbound::Frame(f))) if f.len() == 36));
    }
    assert_eq!(reader.buf.capacity(), READ_BUFFER_BYTES, "a burst of short replies as well");
    // The first small read shows the burst is over; the next waits
    // with no buffer again and keeps only what it read.
    for _ in 0..2 {
        server.write_all(b"{}\n").await.unwrap();
        assert!(matches!(reader.next_frame().await, Ok(Some(Inbound::Frame(f))) if f == "{}"));
    }
    assert!(reader.buf.capacity() < MIN_READ_BUFFER_BYTES, "{}", reader.buf.capacity());
}

/// Found by the `stdio_frames` fuzz target (crash-ceb7d81b): a line of
/// a carriage return, a vertical tab and a space. Blank lines are those
/// of ASCII whitespace (space, tab, CR, LF, form feed); a vertical tab is
/// not JSON whitespace either, so the line is a frame, which the engine
/// then drops as a damaged message.
#[tokio::test]
async fn a_line_with_a_vertical_tab_is_not_blank() {
    let max = 64;
    let mut reader = FrameReader::new(&b"\r\x0b \n{\"a\":1}\n  \n"[..], max);
    let mut split = SplitCheck::new(max);
    let mut out = Vec::new();
    while let Some(frame) = reader.next_frame().await.unwrap() {
        split.feed(frame, &mut out);
    }
    split.finish(&mut out);
    assert_eq!(out, vec![Inbound::Frame("\r\x0b ".into()), Inbound::Frame("{\"a\":1}".into())]);
}

async fn all_frames<R: AsyncRead + Unpin>(reader: &mut FrameReader<R>) -> Vec<Inbound> {
    let mut out = Vec::new();
    while let Some(frame) = reader.next_frame().await.unwrap() {
        out.push(frame);
    }
    out
}

fn frame(text: &str) -> Inbound {
    Inbound::Frame(text.to_string())
}

fn check_all(lines: &[&str], max: usize) -> Vec<Inbound> {
    let mut check = SplitCheck::new(max);
    let mut out = Vec::new();
    for line in lines {
        check.feed(frame(line), &mut out);
    }
    check.finish(&mut out);
    out
}

#[test]
fn a_pretty_printed_reply_fails_its_request_with_framing() {
    let lines =
        ["{", "  \"jsonrpc\": \"2.0\",", "  \"id\": 9,", "  \"result\": {\"a\": [", "    {}", "  ]}", "}"];
    let out = check_all(&lines, 1024);
    match &out[..] {
        [Inbound::Damaged { reason, prefix, .. }, Inbound::RequestFailed { id, class, message, .. }] => {
            assert!(reason.contains("split over several lines (7 lines)"), "{reason}");
            assert!(prefix.is_empty(), "no prefix: the engine must not guess an id from it");
            assert_eq!(*id, crate::protocol::RequestId::Number(9));
            assert_eq!(*class, FailureClass::Framing);
            assert!(message.contains("7 lines"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn whole_lines_pass_and_brackets_in_strings_do_not_count() {
    let whole = r#"{"jsonrpc":"2.0","id":1,"result":{"t":"{["}}"#;
    assert_eq!(
        check_all(&[whole, "not json", "[1, 2]"], 1024),
        vec![frame(whole), frame("not json"), frame("[1, 2]")]
    );
    // A string holding a bracket that would close the message.
    let lines = ["{\"jsonrpc\": \"2.0\", \"method\": \"x\",", "\"params\": {\"s\": \"}}\\\"}\"}", "}"];
    let out = check_all(&lines, 1024);
    assert!(
        matches!(&out[..], [Inbound::Damaged { reason, .. }] if reason.starts_with("a notification split")),
        "{out:?}"
    );
}

#[test]
fn a_torn_start_does_not_swallow_the_next_message() {
    let next = r#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
    let out = check_all(&["{\"jsonrpc\":\"2.0\",\"id\":1,", "garbage", next, "{\"open\": ["], 1024);
    match &out[..] {
        [Inbound::Damaged { reason: a, bytes: 32, .. }, f, Inbound::Damaged { reason: b, .. }] => {
            assert!(a.starts_with("2 lines that form no message"), "{a}");
            assert_eq!(*f, frame(next));
            assert!(b.starts_with("1 line that forms no message"), "{b}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_split_message_is_kept_within_the_frame_bound() {
    let long = format!("\"{}\",", "x".repeat(100));
    let mut lines = vec!["["];
    lines.extend(std::iter::repeat_n(long.as_str(), 50));
    lines.push("1]");
    let mut check = SplitCheck::new(256);
    let mut out = Vec::new();
    for line in &lines {
        check.feed(frame(line), &mut out);
        let held = check.split.as_ref().map_or(0, |s| s.text.capacity());
        assert!(held <= 512, "held {held}");
    }
    match &out[..] {
        [Inbound::Damaged { reason, bytes, .. }] => {
            assert!(reason.contains("over max_frame_bytes"), "{reason}");
            assert_eq!(*bytes, 1 + 50 * (1 + 103) + 1 + 2);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_64_mib_line_is_damaged_without_being_held() {
    const MAX: usize = 1 << 20;
    const HUGE: u64 = 64 << 20;
    // Streams 64 MiB without ever holding it.
    let stream =
        tokio::io::repeat(b'a').take(HUGE).chain(&b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"[..]);
    let mut reader = FrameReader::new(stream, MAX);
    match reader.next_frame().await.unwrap() {
        Some(Inbound::Damaged { reason, prefix, bytes }) => {
            assert_eq!(reason, OVER_LIMIT_REASON);
            assert_eq!(prefix, "a".repeat(DAMAGED_PREFIX_BYTES));
            assert_eq!(bytes, HUGE);
        }
        other => panic!("expected a damaged frame, got {other:?}"),
    }
    assert!(reader.peak_buffered() <= MAX + READ_BUFFER_BYTES, "peak {}", reader.peak_buffered());
    assert_eq!(reader.next_frame().await.unwrap(), Some(frame(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)));
    assert_eq!(reader.next_frame().await.unwrap(), None);
    assert!(reader.peak_buffered() <= MAX + 1);
}

#[tokio::test]
async fn a_frame_of_exactly_the_bound_is_delivered() {
    let data = format!("{}\r\n{}\n{}\n", "x".repeat(8), "y".repeat(8), "z".repeat(9));
    let mut reader = FrameReader::new(data.as_bytes(), 8);
    let frames = all_frames(&mut reader).await;
    assert_eq!(frames[0], frame("xxxxxxxx"));
    assert_eq!(frames[1], frame("yyyyyyyy"));
    assert!(matches!(&frames[2], Inbound::Damaged { bytes: 9, .. }), "{frames:?}");
    assert_eq!(frames.len(), 3);
    assert!(reader.peak_buffered() <= 9);
}

#[tokio::test]
async fn non_json_is_just_a_frame() {
    let mut reader = FrameReader::new(&b"hello, not json\n"[..], 1024);
    assert_eq!(all_frames(&mut reader).await, vec![frame("hello, not json")]);
}

#[tokio::test]
async fn crlf_is_tolerated() {
    let mut reader = FrameReader::new(&b"{\"a\":1}\r\n{\"b\":2}\r\n"[..], 1024);
    assert_eq!(all_frames(&mut reader).await, vec![frame("{\"a\":1}"), frame("{\"b\":2}")]);
}

#[tokio::test]
async fn empty_and_blank_lines_are_skipped() {
    let mut reader = FrameReader::new(&b"\n\r\n  \t \n{}\n\n \r\n[]\n\n"[..], 1024);
    assert_eq!(all_frames(&mut reader).await, vec![frame("{}"), frame("[]")]);
}

#[tokio::test]
async fn a_partial_last_line_is_delivered() {
    let mut reader = FrameReader::new(&b"{\"a\":1}\n{\"b\":2}"[..], 1024);
    assert_eq!(all_frames(&mut reader).await, vec![frame("{\"a\":1}"), frame("{\"b\":2}")]);
    // The end stays the end.
    assert_eq!(reader.next_frame().await.unwrap(), None);

    let mut reader = FrameReader::new(&b"{}\n   "[..], 1024);
    assert_eq!(all_frames(&mut reader).await, vec![frame("{}")]);
}

#[tokio::test]
async fn an_over_long_partial_last_line_is_damaged() {
    let data = "q".repeat(100);
    let mut reader = FrameReader::new(data.as_bytes(), 10);
    let frames = all_frames(&mut reader).await;
    assert!(matches!(&frames[..], [Inbound::Damaged { bytes: 100, .. }]), "{frames:?}");
}

#[tokio::test]
async fn invalid_utf8_is_damaged_and_the_next_line_survives() {
    let mut reader = FrameReader::new(&b"\xff\xfe{\"id\":7}\n{\"ok\":true}\n"[..], 1024);
    let frames = all_frames(&mut reader).await;
    match &frames[0] {
        Inbound::Damaged { reason, prefix, bytes } => {
            assert_eq!(reason, NOT_UTF8_REASON);
            assert!(prefix.ends_with("{\"id\":7}"), "{prefix:?}");
            assert_eq!(*bytes, 10);
        }
        other => panic!("expected a damaged frame, got {other:?}"),
    }
    assert_eq!(frames[1], frame("{\"ok\":true}"));
    assert_eq!(frames.len(), 2);
}

#[tokio::test]
async fn lines_split_across_reads_are_joined() {
    // A reader that yields one byte per read.
    let (client, mut server) = tokio::io::duplex(1);
    let writer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        server.write_all(b"{\"split\":true}\n\xe2\x82").await.unwrap();
        server.write_all(b"\xac\n").await.unwrap();
    });
    let mut reader = FrameReader::new(client, 64);
    assert_eq!(reader.next_frame().await.unwrap(), Some(frame("{\"split\":true}")));
    assert_eq!(reader.next_frame().await.unwrap(), Some(frame("€")));
    writer.await.unwrap();
    assert_eq!(reader.next_frame().await.unwrap(), None);
}

#[tokio::test]
async fn the_damaged_prefix_is_bounded() {
    let data = format!("{}\nok\n", "é".repeat(1000));
    let mut reader = FrameReader::new(data.as_bytes(), 100);
    let frames = all_frames(&mut reader).await;
    match &frames[0] {
        Inbound::Damaged { prefix, bytes, .. } => {
            assert!(prefix.len() <= DAMAGED_PREFIX_BYTES);
            assert!(prefix.starts_with('é'));
            assert_eq!(*bytes, 2000);
        }
        other => panic!("expected a damaged frame, got {other:?}"),
    }
    assert_eq!(frames[1], frame("ok"));
}

/// What a reader must make of `data`, line by line: a line over the bound
/// (with a `\r` it may end with) is damaged, a blank one skipped, one that
/// is not UTF-8 damaged; the rest are frames. Damaged frames are compared
/// by their reason.
fn expected_frames(data: &[u8], max: usize) -> Vec<Result<String, &'static str>> {
    let mut lines: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let mut out = Vec::new();
    for raw in lines {
        if raw.len() > max + 1 {
            out.push(Err(OVER_LIMIT_REASON));
            continue;
        }
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if line.len() > max {
            out.push(Err(OVER_LIMIT_REASON));
            continue;
        }
        out.push(std::str::from_utf8(line).map(str::to_string).map_err(|_| NOT_UTF8_REASON));
    }
    out
}

/// `data` with lines around `max` (a `\r` before the newline or not,
/// blank, not UTF-8).
fn lines_around(max: usize, lengths: &[usize]) -> Vec<u8> {
    let mut data = Vec::new();
    for &len in lengths {
        for ending in [&b"\n"[..], b"\r\n", b"\r\r\n", b" \n"] {
            data.extend(std::iter::repeat_n(b'x', len));
            data.extend_from_slice(ending);
            data.extend_from_slice(b"{}\n");
        }
    }
    data.extend_from_slice(b"\n  \r\n\xff\xfe\n");
    data.extend(std::iter::repeat_n(b'y', max));
    data.extend_from_slice(b"\xe2\x82\xac\n");
    data.extend(std::iter::repeat_n(b'z', max + 7));
    data
}

/// Reads `data` written in pieces of `piece` bytes with `reader`, checking
/// that it gives what the lines call for and never holds more than the
/// bound plus one byte of a frame.
async fn check_in_pieces(
    data: &[u8],
    piece: usize,
    max: usize,
    reader: impl FnOnce(DuplexStream) -> FrameReader<DuplexStream>,
) {
    use tokio::io::AsyncWriteExt;
    let (client, mut server) = tokio::io::duplex(piece);
    let bytes = data.to_vec();
    let writer = tokio::spawn(async move {
        for chunk in bytes.chunks(piece) {
            server.write_all(chunk).await.unwrap();
        }
    });
    let mut reader = reader(client);
    let mut got = Vec::new();
    while let Some(item) = reader.next_frame().await.unwrap() {
        assert!(reader.buf.capacity() <= READ_BUFFER_BYTES, "pieces of {piece}: {}", reader.buf.capacity());
        got.push(match item {
            Inbound::Frame(text) => Ok(text),
            Inbound::Damaged { reason, .. } if reason == OVER_LIMIT_REASON => Err(OVER_LIMIT_REASON),
            Inbound::Damaged { reason, .. } if reason == NOT_UTF8_REASON => Err(NOT_UTF8_REASON),
            other => panic!("{other:?}"),
        });
    }
    writer.await.unwrap();
    let expected = expected_frames(data, max);
    assert_eq!(got.len(), expected.len(), "pieces of {piece}");
    for (i, (got, expected)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(got, expected, "pieces of {piece}, frame {i}");
    }
    assert!(reader.peak_buffered() <= max + 1, "pieces of {piece}: held {}", reader.peak_buffered());
    assert!(reader.line.capacity() <= max + 1, "pieces of {piece}: {}", reader.line.capacity());
}

/// Lines around the bound, read in pieces of every size from a few bytes
/// to more than the bound, give the same frames. Lines longer than the
/// read buffer go straight into the line ([`FrameReader::read_into_line`]);
/// this checks where that path hands over to the buffer, at the size it
/// starts at and, with short lines, at every other.
#[tokio::test]
async fn frames_are_the_same_whatever_the_pieces_they_arrive_in() {
    let max = READ_BUFFER_BYTES + MIN_READ_BUFFER_BYTES + 5;
    let lengths = [
        1,
        READ_BUFFER_BYTES - 1,
        READ_BUFFER_BYTES,
        READ_BUFFER_BYTES + 1,
        max - 1,
        max,
        max + 1,
        max + 2,
        2 * max,
    ];
    let data = lines_around(max, &lengths);
    for piece in [7, 4097, READ_BUFFER_BYTES - 1, READ_BUFFER_BYTES, max, max + 2, 3 * max] {
        check_in_pieces(&data, piece, max, |client| FrameReader::new(client, max)).await;
    }
    let max = 40;
    let data = lines_around(max, &[1, 19, 20, 21, 39, 40, 41, 42, 80]);
    for direct_from in [1, 20, 40] {
        for piece in [1, 3, 20, 41, 200] {
            check_in_pieces(&data, piece, max, |client| {
                FrameReader::new(client, max).reading_into_lines_from(direct_from)
            })
            .await;
        }
    }
}

/// A read into a long line takes at most a read buffer's worth, so that
/// what follows its newline, moved to the read buffer, keeps that buffer
/// within its bound however much the reader could give at once.
#[tokio::test]
async fn a_read_into_a_long_line_keeps_the_read_buffer_within_its_bound() {
    let max = 4 * READ_BUFFER_BYTES;
    let mut data = vec![b'a'; 2 * READ_BUFFER_BYTES + 1];
    data.push(b'\n');
    data.extend(std::iter::repeat_n(b'b', 3 * READ_BUFFER_BYTES));
    data.push(b'\n');
    // An in-memory reader gives all it has to each read.
    let mut reader = FrameReader::new(&data[..], max);
    let mut lengths = Vec::new();
    while let Some(item) = reader.next_frame().await.unwrap() {
        assert!(reader.buf.capacity() <= READ_BUFFER_BYTES, "{}", reader.buf.capacity());
        let Inbound::Frame(text) = item else { panic!("{item:?}") };
        lengths.push(text.len());
    }
    assert_eq!(lengths, [2 * READ_BUFFER_BYTES + 1, 3 * READ_BUFFER_BYTES]);
}
