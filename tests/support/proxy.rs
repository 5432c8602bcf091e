//! A forwarding HTTP proxy on a free loopback port, for the tests of proxy
//! settings: it records the head of every plain-HTTP request it carries
//! (the absolute-form request line, `Proxy-Authorization`; one request per
//! connection) and pipes the bytes on, both ways. It handles `CONNECT` too
//! (recording only the `CONNECT`).

use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Every proxy variable curl (and so reqwest) reads, upper and lower case:
/// what a test clears from a child's environment before setting its own.
pub const PROXY_VARS: [&str; 8] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// The longest request head read before the proxy gives up on a connection.
const MAX_HEAD_BYTES: usize = 64 << 10;

/// A running proxy; it serves until the test's runtime ends.
#[derive(Clone)]
pub struct Proxy {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    /// The heads of the requests carried so far.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// Starts a proxy.
pub async fn start() -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free loopback port");
    let url = format!("http://{}", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            tokio::spawn(carry(client, seen.clone()));
        }
    });
    Proxy { url, heads }
}

async fn carry(mut client: TcpStream, heads: Arc<Mutex<Vec<String>>>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_HEAD_BYTES {
            return;
        }
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    heads.lock().unwrap().push(text.clone());
    let mut words = text.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let authority = if method == "CONNECT" {
        target.to_string()
    } else {
        let rest = target.strip_prefix("http://").unwrap_or(target);
        rest.split('/').next().unwrap_or("").to_string()
    };
    let Ok(mut upstream) = TcpStream::connect(&authority).await else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n").await;
        return;
    };
    if method == "CONNECT" {
        let end = head.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        if client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await.is_err() {
            return;
        }
        if upstream.write_all(&head[end..]).await.is_err() {
            return;
        }
    } else {
        // One request per connection: the server is asked to close after
        // its answer (and says so to the client), so that every request
        // opens a connection here and has its head recorded.
        let line_end = head.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
        let mut forwarded = head[..line_end].to_vec();
        forwarded.extend_from_slice(b"connection: close\r\n");
        forwarded.extend_from_slice(&head[line_end..]);
        if upstream.write_all(&forwarded).await.is_err() {
            return;
        }
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}
