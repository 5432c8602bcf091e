//! Issue 45, item 3: `mcp inspect` (docs/inspect.md) in a real browser.
//!
//! Each test starts the command (`MCP_CLI`, the debug build
//! `scripts/interop.sh` makes) as `mcp --config FILE inspect --listen
//! 127.0.0.1:0` with four servers over stdio: `everything`
//! (server-everything), `vanilla` (server-basic-vanillajs 2.0.3),
//! `monitor` (server-system-monitor 2.0.3) and `hostile`
//! (tests/interop/inspect/hostile_server.mjs, whose app attacks its host).
//! It reads the page's URL from the first line of stdout, runs a Node
//! script of tests/interop/inspect/ that drives Chromium
//! (`MCP_CHROMIUM`) through playwright-core (`MCP_PLAYWRIGHT_DIR`), kills
//! it on a deadline, and asserts on the JSON report it prints; then it
//! stops the command with SIGTERM and checks that no server process is
//! left.
//!
//! - the page needs its token (401 without it or with another), lists the
//!   servers, calls a tool through its form (and from the URL's `args`),
//!   shows the traffic and events, and answers an elicitation (accepted
//!   with the form's values, then declined);
//! - both example apps render (their pixels are more than a blank page),
//!   the vanilla app's link and message are shown and never opened, the
//!   monitor's app-only `poll-system-stats` runs from its app and is never
//!   offered to a model;
//! - the hostile app's 10 MB message and its flood of 200 calls are
//!   refused with `limit_exceeded`, another server's tool is unknown to it,
//!   it reads no `file:` or `https:` resource, it can neither navigate
//!   the page nor open a window, and the page still works afterwards.
//!
//! Screenshots of each view go to `target/inspect-screenshots/`. These
//! tests never skip: a missing peer is a failure.

use crate::support::peers::peer;
use crate::support::process_group::{children_of, group_members};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/inspect");
const SCREENSHOTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/inspect-screenshots");
/// The servers of every inspector here.
const SERVERS: [&str; 4] = ["everything", "vanilla", "monitor", "hostile"];

/// The config file of the four servers, over stdio.
fn config() -> Value {
    let node = peer("MCP_NODE");
    let stdio = |args: Vec<String>| {
        json!({
            "command": node,
            "args": args,
            "x-mcp-stack": { "timeouts": { "startupMs": 30000 } },
        })
    };
    json!({
        "mcpServers": {
            "everything": stdio(vec![peer("MCP_EVERYTHING_JS"), "stdio".into()]),
            "vanilla": stdio(vec![format!("{}/dist/index.js", peer("MCP_APPS_VANILLAJS_DIR")), "--stdio".into()]),
            "monitor": stdio(vec![format!("{}/dist/index.js", peer("MCP_APPS_MONITOR_DIR")), "--stdio".into()]),
            "hostile": stdio(vec![format!("{SCRIPTS}/hostile_server.mjs")]),
        }
    })
}

/// The text of a file, or what went wrong reading it.
fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("({}: {e})", path.display()))
}

/// `mcp --config FILE inspect --listen 127.0.0.1:0`, serving; killed (with
/// its servers) when dropped.
struct Inspector {
    child: Child,
    /// The first line of its stdout.
    url: String,
    /// `http://127.0.0.1:PORT`.
    origin: String,
    stdout_rest: Option<JoinHandle<Vec<String>>>,
    stderr: PathBuf,
    _dir: tempfile::TempDir,
}

impl Inspector {
    fn start() -> Inspector {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = dir.path().join("mcp.json");
        std::fs::write(&config, config_text()).unwrap();
        let stderr = dir.path().join("inspect.stderr");
        let mut child = Command::new(peer("MCP_CLI"))
            .arg("--config")
            .arg(&config)
            .args(["inspect", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("start mcp inspect");
        let stdout = child.stdout.take().unwrap();
        let (first, first_line) = mpsc::channel();
        let stdout_rest = std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = first.send(lines.next().and_then(Result::ok));
            lines.map_while(Result::ok).collect::<Vec<_>>()
        });
        let mut inspector = Inspector {
            child,
            url: String::new(),
            origin: String::new(),
            stdout_rest: Some(stdout_rest),
            stderr,
            _dir: dir,
        };
        let url = match first_line.recv_timeout(Duration::from_secs(60)) {
            Ok(Some(line)) => line,
            other => panic!(
                "mcp inspect printed no first line in 60 s ({other:?}); its stderr:\n{}",
                read(&inspector.stderr)
            ),
        };
        let (origin, token) = url
            .strip_prefix("http://127.0.0.1:")
            .and_then(|rest| rest.split_once("/?token="))
            .map(|(port, token)| (format!("http://127.0.0.1:{port}"), token))
            .unwrap_or_else(|| panic!("not the page's URL: {url:?}"));
        assert!(
            token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()),
            "the token is 32 bytes in hex: {url}"
        );
        inspector.url = url.clone();
        inspector.origin = origin;
        inspector
    }

    fn port(&self) -> &str {
        self.origin.rsplit(':').next().unwrap()
    }

    /// Its stderr so far.
    fn stderr(&self) -> String {
        read(&self.stderr)
    }

    /// SIGTERM, as a person stopping it would: it exits in time, its four
    /// servers' process groups are empty, and it printed nothing after
    /// the URL.
    fn stop(mut self) {
        let servers = children_of(self.child.id());
        assert!(
            servers.len() >= SERVERS.len(),
            "a process per stdio server under mcp inspect: {servers:?}\n{}",
            self.stderr()
        );
        kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "mcp inspect still runs 20 s after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut left: Vec<u32> = Vec::new();
        while Instant::now() < deadline {
            left = servers.iter().flat_map(|(_, group)| group_members(*group)).collect();
            if left.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(left.is_empty(), "server processes left after mcp inspect exited ({status}): {left:?}");
        let rest = self.stdout_rest.take().unwrap().join().unwrap();
        assert!(rest.is_empty(), "stdout holds the URL alone: {rest:?}");
        eprintln!("mcp inspect exited: {status}; its stderr:\n{}", self.stderr());
    }
}

impl Drop for Inspector {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            for (_, group) in children_of(self.child.id()) {
                let _ = killpg(Pid::from_raw(group as i32), Signal::SIGKILL);
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn config_text() -> String {
    serde_json::to_string_pretty(&config()).unwrap()
}

/// What a browser script reported.
struct Report {
    status: ExitStatus,
    facts: Value,
    stderr: String,
}

impl Report {
    /// The facts, once the script passed every step; panics with its
    /// error, steps and output (and the inspector's stderr) when not.
    fn facts(&self, inspector: &Inspector) -> &Value {
        if !self.status.success() || self.facts["ok"] != json!(true) {
            panic!(
                "the browser script failed ({}): {}\nsteps: {:#}\nscreenshots: {}\nits stderr:\n{}\nmcp inspect's stderr:\n{}",
                self.status,
                self.facts["error"].as_str().unwrap_or("(no error reported)"),
                self.facts["steps"],
                self.facts["screenshots"],
                self.stderr,
                inspector.stderr()
            );
        }
        &self.facts
    }
}

/// Runs tests/interop/inspect/SCRIPT.mjs against the inspector's page,
/// killed past `limit`; its report is the last line of its stdout.
fn browse(script: &str, inspector: &Inspector, limit: Duration) -> Report {
    std::fs::create_dir_all(SCREENSHOTS).unwrap();
    // The folder shows the last run: this script's older screenshots go.
    for entry in std::fs::read_dir(SCREENSHOTS).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&format!("{script}-")) && name.ends_with(".png") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    let mut child = Command::new(peer("MCP_NODE"))
        .arg(format!("{SCRIPTS}/{script}.mjs"))
        .arg(&inspector.url)
        .arg(SCREENSHOTS)
        .env("MCP_PLAYWRIGHT_DIR", peer("MCP_PLAYWRIGHT_DIR"))
        .env("MCP_CHROMIUM", peer("MCP_CHROMIUM"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("start node");
    let drain = |mut from: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = from.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            // SIGTERM first: playwright closes the browser it launched
            // (in a process group of its own) when its process is told to end.
            let group = Pid::from_raw(child.id() as i32);
            let _ = killpg(group, Signal::SIGTERM);
            std::thread::sleep(Duration::from_secs(3));
            let _ = killpg(group, Signal::SIGKILL);
            let status = child.wait().unwrap();
            panic!(
                "{script}.mjs still ran after {limit:?} (killed: {status}); its stderr:\n{}\nmcp inspect's stderr:\n{}",
                stderr.join().unwrap(),
                inspector.stderr()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = stdout.join().unwrap();
    let stderr = stderr.join().unwrap();
    let line = stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    let facts = serde_json::from_str(line).unwrap_or_else(|e| {
        panic!("{script}.mjs printed no report ({e}, exit {status}): {stdout}\nits stderr:\n{stderr}")
    });
    let report = Report { status, facts, stderr };
    // The screenshots, for a person to look at (`--nocapture` shows them).
    for path in report.facts["screenshots"].as_array().into_iter().flatten() {
        println!("screenshot: {}", path.as_str().unwrap_or_default());
    }
    eprintln!("{script}.mjs reported: {:#}", report.facts);
    report
}

fn text<'a>(value: &'a Value, what: &str) -> &'a str {
    value.as_str().unwrap_or_else(|| panic!("{what} is not a string: {value}"))
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

/// No popup was opened and the top frame only ever went to the inspector.
fn assert_stayed_on_the_inspector(facts: &Value, inspector: &Inspector) {
    let seen = &facts["navigations"];
    assert_eq!(seen["popups"], json!([]), "windows opened: {seen}");
    for url in strings(&seen["topNavigations"]) {
        assert!(url.starts_with(&format!("{}/", inspector.origin)), "the page went to {url}: {seen}");
    }
}

/// A sandbox URL: loopback, another port than the page's.
fn assert_on_the_sandbox_origin(url: &str, inspector: &Inspector, path: &str) {
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap_or_else(|| panic!("not loopback: {url}"));
    let (port, tail) = rest.split_once('/').unwrap_or_else(|| panic!("no path: {url}"));
    assert_ne!(port, inspector.port(), "the app is on another origin than the page: {url}");
    assert!(tail.starts_with(path), "{url} is not {path}");
}

/// More than a blank page: colours (anti-aliased text, buttons) and
/// pixels that are not the background.
fn assert_pixels_show_something(pixels: &Value, what: &str) {
    let colours = pixels["colours"].as_u64().unwrap_or(0);
    let share = pixels["nonBackground"].as_f64().unwrap_or(0.0);
    assert!(
        pixels["width"].as_u64() > Some(100) && pixels["height"].as_u64() > Some(100),
        "{what}: {pixels}"
    );
    assert!(colours >= 16 && share > 0.01, "{what} looks blank: {pixels}");
}

#[test]
fn the_page_needs_its_token_calls_a_tool_and_answers_an_elicitation() {
    let inspector = Inspector::start();
    let report = browse("page", &inspector, Duration::from_secs(180));
    let facts = report.facts(&inspector);

    // (a) the token.
    let statuses = &facts["statuses"];
    for (key, expected) in [
        ("noToken", 401),
        ("wrongToken", 401),
        ("apiNoToken", 401),
        ("apiWrongHeader", 401),
        ("browserNoToken", 401),
        ("browserWrongToken", 401),
        ("withToken", 200),
        ("browserWithToken", 200),
    ] {
        assert_eq!(statuses[key], expected, "{key}: {statuses}");
    }
    assert_eq!(facts["servedView"], "servers", "{facts}");
    for server in SERVERS {
        assert_eq!(facts["servers"][server], "ready", "{}", facts["servers"]);
    }
    assert_eq!(facts["apiServers"]["status"], 200);
    let bindings = strings(&facts["apiServers"]["bindings"]);
    assert!(SERVERS.iter().all(|s| bindings.contains(s)), "{bindings:?}");

    // (b) a tool through its form, and one filled from the URL.
    let echo = &facts["echo"];
    assert_eq!(echo["status"], "ok", "{echo}");
    assert!(text(&echo["text"], "the echo").contains("Echo: hello from the browser"), "{echo}");
    assert!(strings(&echo["blocks"]).contains(&"text"), "{echo}");
    let sum = &facts["sum"];
    assert_eq!(sum["status"], "ok", "{sum}");
    assert!(text(&sum["text"], "the sum").contains('5'), "{sum}");
    let prefilled: Value = serde_json::from_str(text(&facts["sumArgs"], "the args textarea")).unwrap();
    assert_eq!(prefilled, json!({"a": 2, "b": 3}));

    // The call's messages on the traffic view, events on the events view.
    assert!(facts["traffic"]["echoOut"].as_u64() >= Some(1), "{}", facts["traffic"]);
    assert!(facts["traffic"]["in"].as_u64() >= Some(1), "{}", facts["traffic"]);
    // The elicitations' binding events, each shown with its kind and
    // its text (docs/inspect.md: `kind`, and the event's text).
    assert!(facts["events"].as_u64() >= Some(2), "{facts}");
    let kinds = strings(&facts["eventKinds"]);
    assert!(kinds.iter().all(|k| !k.is_empty()), "each event's kind is shown: {}", facts["eventKinds"]);
    assert!(
        kinds.iter().any(|k| k.to_ascii_lowercase().contains("elicitation")),
        "the elicitations' events: {kinds:?}"
    );
    for shown in strings(&facts["eventTexts"]) {
        assert!(!shown.contains("[object Object]"), "an event shown as {shown:?}");
    }
    assert_eq!(facts["trafficStillShowsEcho"], true);

    // (c) the elicitation: a form of the server's schema, its answer in
    // the tool's result; a declined one said so.
    let elicitation = &facts["elicitation"];
    assert!(!text(&elicitation["id"], "the elicitation's id").is_empty());
    let fields = strings(&elicitation["fields"]);
    assert!(fields.contains(&"name") && fields.contains(&"email"), "{fields:?}");
    assert_eq!(elicitation["result"]["status"], "ok", "{elicitation}");
    let answered = text(&elicitation["result"]["text"], "the elicitation's result");
    assert!(answered.contains("- Name: Ada Lovelace"), "{answered}");
    assert!(answered.contains("- Email: ada@example.com"), "{answered}");
    assert_eq!(facts["declined"]["status"], "ok", "{}", facts["declined"]);
    assert!(text(&facts["declined"]["text"], "declined").contains("declined"), "{}", facts["declined"]);

    inspector.stop();
}

#[test]
fn the_example_apps_render_and_the_monitor_polls_from_its_app_only() {
    let inspector = Inspector::start();
    let report = browse("apps", &inspector, Duration::from_secs(180));
    let facts = report.facts(&inspector);

    // (d) server-basic-vanillajs: ready, on the sandbox origin, the time
    // it was given shown, pixels of an app.
    let vanilla = &facts["vanilla"];
    assert_on_the_sandbox_origin(text(&vanilla["proxyUrl"], "the proxy's URL"), &inspector, "sandbox?");
    assert_on_the_sandbox_origin(text(&vanilla["appUrl"], "the app's URL"), &inspector, "app?");
    assert_ne!(vanilla["serverTime"], "[ERROR]", "{vanilla}");
    assert_pixels_show_something(&vanilla["pixels"], "the vanilla app");
    // Its link and message, shown to the person; nothing opened.
    let decisions = &vanilla["decisions"];
    let kinds = strings(&decisions["kinds"]);
    assert!(kinds.contains(&"open-link") && kinds.contains(&"message"), "{decisions}");
    assert!(
        text(&decisions["openLink"], "the link").contains("https://modelcontextprotocol.io/"),
        "{decisions}"
    );
    assert!(text(&decisions["message"], "the message").contains("This is message text."), "{decisions}");
    assert_eq!(vanilla["topUrlUnchanged"], true);

    // server-system-monitor: its stats come from poll-system-stats, which
    // its app called (seen on the traffic view).
    let monitor = &facts["monitor"];
    assert_on_the_sandbox_origin(text(&monitor["appUrl"], "the app's URL"), &inspector, "app?");
    assert_ne!(monitor["status"], "Error", "{monitor}");
    assert_pixels_show_something(&monitor["pixels"], "the monitor app");
    assert!(monitor["pollsSent"].as_u64() >= Some(1), "{monitor}");
    assert_eq!(monitor["topUrlUnchanged"], true);

    // The tools a model is offered: the app-only ones absent (beside the
    // monitor's app, on the model view, and from the API).
    for (what, names) in [
        ("the monitor's app page", strings(&monitor["modelToolsBesideTheApp"])),
        ("the model view", strings(&facts["modelTools"])),
        ("/api/model-tools", strings(&facts["apiModelTools"]["names"])),
    ] {
        for offered in [
            "mcp__everything__echo",
            "mcp__vanilla__get-time",
            "mcp__monitor__get-system-info",
            "mcp__hostile__attack",
        ] {
            assert!(names.contains(&offered), "{what} lacks {offered}: {names:?}");
        }
        for hidden in ["mcp__monitor__poll-system-stats", "mcp__hostile__slow"] {
            assert!(!names.contains(&hidden), "{what} offers {hidden}: {names:?}");
        }
    }
    assert_eq!(facts["apiModelTools"]["status"], 200);
    assert_stayed_on_the_inspector(facts, &inspector);

    inspector.stop();
}

#[test]
fn a_hostile_app_is_refused_and_the_page_survives_it() {
    let inspector = Inspector::start();
    let report = browse("hostile", &inspector, Duration::from_secs(270));
    let facts = report.facts(&inspector);
    let attacks = &facts["attacks"];
    for name in ["big", "flood", "other", "resource", "navigate"] {
        let attack = &attacks[name];
        let results = &attack["results"];
        assert_eq!(results["initialized"]["ok"], true, "{name}: {attack:#}");
        assert_eq!(results["attack"], name, "{name}: {attack:#}");
        assert_eq!(attack["appStatusAfter"], "ready", "{name}: {attack:#}");
        assert_eq!(attack["topUrlUnchanged"], true, "{name}: {attack:#}");
        if name != "resource" && name != "navigate" {
            // The bridge still serves the app after refusing it.
            assert_eq!(results["answers"]["after"]["ok"], true, "{name}: {attack:#}");
            assert_eq!(results["answers"]["after"]["isError"], false, "{name}: {attack:#}");
        }
    }

    // A 10 MB message: refused, by its size.
    let big = &attacks["big"]["results"]["answers"]["big"];
    assert_eq!(big["ok"], false, "{big}");
    assert_eq!(big["class"], "limit_exceeded", "{big}");

    // 200 calls at once: each answered; those over the bound refused.
    let flood = &attacks["flood"]["results"]["flood"];
    assert_eq!(flood["total"], 200, "{flood}");
    assert_eq!(flood["timeouts"], 0, "{flood}");
    let refused = flood["classes"]["limit_exceeded"].as_u64().unwrap_or(0);
    let served = flood["ok"].as_u64().unwrap_or(0);
    assert!(refused >= 1, "the flood met no bound: {flood}");
    assert!(served >= 1, "nothing of the flood was served: {flood}");
    assert_eq!(refused + served, 200, "only limit_exceeded refusals: {flood}");

    // Another server's tool does not exist for the app.
    for key in ["echo", "modelName"] {
        let answer = &attacks["other"]["results"]["answers"][key];
        assert_eq!(answer["ok"], false, "{key}: {answer}");
        let class = text(&answer["class"], "the class");
        assert!(["not_found", "tool_unavailable"].contains(&class), "{key}: {answer}");
    }

    // Only its own ui:// resources.
    let answers = &attacks["resource"]["results"]["answers"];
    for key in ["file", "https"] {
        let answer = &answers[key];
        assert_eq!(answer["ok"], false, "{key}: {answer}");
        assert!(answer["timeout"].is_null(), "{key} was never answered: {answer}");
        assert!(!text(&answer["class"], "the class").is_empty(), "{key}: {answer}");
    }
    assert_eq!(answers["own"]["ok"], true, "{}", answers["own"]);
    assert_eq!(answers["own"]["contents"], 1, "{}", answers["own"]);

    // No navigation of the page, no window; the link shown, not opened.
    let navigate = &attacks["navigate"];
    let results = &navigate["results"];
    assert_eq!(results["open"], "null", "window.open gave a window: {navigate:#}");
    assert!(results["top"].is_string(), "{navigate:#}");
    assert!(results["answers"]["openLink"]["timeout"].is_null(), "{navigate:#}");
    assert_eq!(results["answers"]["ping"]["ok"], true, "{navigate:#}");
    assert_eq!(navigate["stillRendered"], 1, "{navigate:#}");
    let kinds = strings(&navigate["decisions"]["kinds"]);
    assert!(kinds.contains(&"open-link"), "{navigate:#}");
    assert!(
        text(&navigate["decisions"]["openLink"], "the link").contains("https://example.com/"),
        "{navigate:#}"
    );
    assert_stayed_on_the_inspector(facts, &inspector);
    assert_eq!(facts["pages"], 1, "{facts}");

    // The page still calls tools, and every server is still ready.
    let after = &facts["after"];
    assert_eq!(after["status"], "ok", "{after}");
    assert!(text(&after["text"], "the echo").contains("Echo: still here"), "{after}");
    assert_eq!(after["apiServers"]["status"], 200, "{after}");
    for server in SERVERS {
        assert_eq!(after["apiServers"]["states"][server], "ready", "{after}");
    }

    inspector.stop();
}
