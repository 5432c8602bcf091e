//! Issue 22, item 1: the `mcp` command ($MCP_CLI) reaches the Python SDK
//! server (tests/fixtures/py_server.py) through real network pieces:
//!
//! - tinyproxy 1.11 (Debian's, $MCP_TINYPROXY) on a free loopback port,
//!   named by `HTTP_PROXY` and by `--proxy`; `NO_PROXY` and `--no-proxy`
//!   bypass it; `HTTPS_PROXY` carries an `https` server through `CONNECT`.
//!   Its log says what it carried.
//! - a throw-away CA made by the test with openssl ($MCP_OPENSSL): a server
//!   whose certificate it signed is reached with `--cacert` and refused
//!   without it; a server that requires a client certificate is reached
//!   with `--cert`/`--key` and refused without one.

use crate::support::peers::{free_port, peer, start_listening, Server};
use crate::support::proxy::PROXY_VARS;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// The key options every key here is made with: P-256, unencrypted.
const NEW_KEY: &str = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";

/// Runs openssl in `dir` with `fixed` (split at spaces) and then `rest`;
/// panics with its output when it fails.
fn openssl(dir: &Path, fixed: &str, rest: &[&str]) {
    let out = Command::new(peer("MCP_OPENSSL"))
        .args(fixed.split_whitespace())
        .args(rest)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(out.status.success(), "openssl {fixed} {rest:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A CA in `dir`: `<name>.pem` and `<name>.key`.
fn make_ca(dir: &Path, name: &str) {
    let ca = "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign";
    let (key, pem, subject) = (format!("{name}.key"), format!("{name}.pem"), format!("/CN={name}"));
    openssl(
        dir,
        &format!("req -x509 {NEW_KEY} -days 2 {ca}"),
        &["-keyout", &key, "-out", &pem, "-subj", &subject],
    );
}

/// A certificate `ca` signs, in `dir`: `<name>.pem` and `<name>.key`;
/// `extensions` are its X.509 extensions in openssl's config syntax.
fn issue(dir: &Path, ca: &str, name: &str, extensions: &str) {
    let file = |ext: &str| format!("{name}.{ext}");
    std::fs::write(dir.join(file("ext")), extensions).unwrap();
    let subject = format!("/CN={name}");
    openssl(
        dir,
        &format!("req {NEW_KEY}"),
        &["-keyout", &file("key"), "-out", &file("csr"), "-subj", &subject],
    );
    let (ca_pem, ca_key) = (format!("{ca}.pem"), format!("{ca}.key"));
    let (csr, pem, ext) = (file("csr"), file("pem"), file("ext"));
    let signed = ["-in", &csr, "-CA", &ca_pem, "-CAkey", &ca_key, "-out", &pem, "-extfile", &ext];
    openssl(dir, "x509 -req -CAcreateserial -days 2", &signed);
}

/// The certificates of one test: a server CA and the server's certificate
/// for 127.0.0.1, a client CA and a client's certificate, and a stranger
/// (a client certificate of another CA).
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn new() -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        make_ca(d, "server-ca");
        issue(d, "server-ca", "server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
        make_ca(d, "client-ca");
        issue(d, "client-ca", "alice", "extendedKeyUsage=clientAuth\n");
        make_ca(d, "other-ca");
        issue(d, "other-ca", "mallory", "extendedKeyUsage=clientAuth\n");
        Pki { dir }
    }

    fn path(&self, file: &str) -> String {
        self.dir.path().join(file).display().to_string()
    }
}

/// The Python server over streamable HTTP: plain, or over TLS with the
/// PKI's server certificate, requiring a client certificate the client CA
/// signed when `mutual`. Its URL.
async fn python(tls: Option<(&Pki, bool)>) -> (Server, String) {
    let port = free_port();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/py_server.py");
    let mut command = Command::new(peer("MCP_PYTHON"));
    command.arg(script).args(["--http", &port.to_string()]);
    let scheme = match tls {
        None => "http",
        Some((pki, mutual)) => {
            command.args(["--tls-cert", &pki.path("server.pem"), "--tls-key", &pki.path("server.key")]);
            if mutual {
                command.args(["--tls-client-ca", &pki.path("client-ca.pem")]);
            }
            "https"
        }
    };
    let server = start_listening(command, port, "the Python server", Duration::from_secs(30)).await;
    (server, format!("{scheme}://127.0.0.1:{port}/mcp"))
}

/// tinyproxy on a free loopback port, logging every request it carries.
struct Tinyproxy {
    _server: Server,
    url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tinyproxy {
    async fn start() -> Tinyproxy {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let log = dir.path().join("tinyproxy.log");
        let config = dir.path().join("tinyproxy.conf");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListen 127.0.0.1\nTimeout 60\nMaxClients 32\nAllow 127.0.0.1\nLogLevel Connect\n\
                 LogFile \"{}\"\nPidFile \"{}\"\n",
                log.display(),
                dir.path().join("tinyproxy.pid").display()
            ),
        )
        .unwrap();
        let mut command = Command::new(peer("MCP_TINYPROXY"));
        command.arg("-d").arg("-c").arg(&config);
        let server = start_listening(command, port, "tinyproxy", Duration::from_secs(30)).await;
        Tinyproxy { _server: server, url: format!("http://127.0.0.1:{port}"), log, _dir: dir }
    }

    /// The requests carried so far: the request lines tinyproxy logged.
    fn requests(&self) -> Vec<String> {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        log.lines()
            .filter_map(|l| l.split_once("]: Request (file descriptor "))
            .map(|(_, r)| r.to_string())
            .collect()
    }
}

/// Runs `mcp ARGS... call add {"a":2,"b":3} --json` with only the proxy
/// variables in `env`.
fn call_add(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(peer("MCP_CLI"));
    // Only what a test sets applies.
    for name in PROXY_VARS {
        command.env_remove(name);
    }
    command.envs(env.iter().copied()).args(args).args(["call", "add", r#"{"a":2,"b":3}"#, "--json"]);
    command.output().expect("run the CLI")
}

/// The call answered 5.
#[track_caller]
fn assert_added(out: &Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    assert_eq!(doc["structuredContent"]["result"], 5, "{doc}");
}

/// The call failed, and its error says `expected`.
#[track_caller]
fn assert_refused(out: &Output, expected: &str) {
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "the call succeeded: {printed}");
    assert!(printed.contains(expected), "expected {expected:?} in: {printed}");
}

#[tokio::test]
async fn tinyproxy_carries_the_cli_from_the_environment_and_from_proxy_and_no_proxy_bypasses_it() {
    let (_server, url) = python(None).await;
    let proxy = Tinyproxy::start().await;
    let carried = format!("POST {url} ");

    assert_added(&call_add(&["--http", &url], &[("HTTP_PROXY", &proxy.url)]));
    let after_env = proxy.requests();
    assert!(after_env.iter().any(|r| r.contains(&carried)), "HTTP_PROXY: not carried: {after_env:?}");

    // The lower-case form, as curl reads it.
    assert_added(&call_add(&["--http", &url], &[("http_proxy", &proxy.url)]));
    let after_lower = proxy.requests();
    assert!(after_lower.len() > after_env.len(), "http_proxy: not carried: {after_lower:?}");

    assert_added(&call_add(&["--http", &url, "--proxy", &proxy.url], &[]));
    let after_flag = proxy.requests();
    assert!(after_flag.len() > after_lower.len(), "--proxy: not carried: {after_flag:?}");

    // NO_PROXY names the host; --no-proxy ignores the environment.
    assert_added(&call_add(&["--http", &url], &[("HTTP_PROXY", &proxy.url), ("NO_PROXY", "127.0.0.1")]));
    assert_added(&call_add(&["--http", &url, "--no-proxy"], &[("HTTP_PROXY", &proxy.url)]));
    assert_eq!(proxy.requests(), after_flag, "a bypassed request went through the proxy");
}

#[tokio::test]
async fn https_proxy_tunnels_to_a_server_behind_a_test_ca() {
    let pki = Pki::new();
    let (_server, url) = python(Some((&pki, false))).await;
    let proxy = Tinyproxy::start().await;
    let authority = url.trim_start_matches("https://").trim_end_matches("/mcp").to_string();
    assert_added(&call_add(
        &["--http", &url, "--cacert", &pki.path("server-ca.pem")],
        &[("HTTPS_PROXY", &proxy.url)],
    ));
    let requests = proxy.requests();
    assert!(
        requests.iter().any(|r| r.contains(&format!("CONNECT {authority} "))),
        "HTTPS_PROXY: no tunnel: {requests:?}"
    );
}

#[tokio::test]
async fn a_server_behind_a_test_ca_is_reached_with_cacert_and_refused_without() {
    let pki = Pki::new();
    let (_server, url) = python(Some((&pki, false))).await;
    assert_refused(&call_add(&["--http", &url], &[]), "UnknownIssuer");
    assert_refused(&call_add(&["--http", &url, "--cacert", &pki.path("other-ca.pem")], &[]), "UnknownIssuer");
    assert_added(&call_add(&["--http", &url, "--cacert", &pki.path("server-ca.pem")], &[]));
}

#[tokio::test]
async fn a_server_that_requires_a_client_certificate_is_reached_with_cert_and_key_and_refused_without() {
    let pki = Pki::new();
    let (_server, url) = python(Some((&pki, true))).await;
    let trusted = ["--http", url.as_str(), "--cacert", &pki.path("server-ca.pem")];
    // Python's TLS (OpenSSL, TLS 1.3) checks the client's certificate after
    // the client's side of the handshake is done, and closes without an
    // alert that rustls could report: the refusal is a closed connection.
    assert_refused(&call_add(&trusted, &[]), "transport_closed");
    let (mallory, mallory_key) = (pki.path("mallory.pem"), pki.path("mallory.key"));
    let with_stranger: Vec<&str> =
        trusted.iter().copied().chain(["--cert", &mallory, "--key", &mallory_key]).collect();
    assert_refused(&call_add(&with_stranger, &[]), "transport_closed");
    let (alice, alice_key) = (pki.path("alice.pem"), pki.path("alice.key"));
    let with_alice: Vec<&str> =
        trusted.iter().copied().chain(["--cert", &alice, "--key", &alice_key]).collect();
    assert_added(&call_add(&with_alice, &[]));
}
