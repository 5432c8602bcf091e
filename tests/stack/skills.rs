//! Skills (SEP-2640) against a scripted server: listed page by page with
//! nothing fetched, an entry that cannot be used dropped alone, loaded only
//! when asked, every file checked by size and digest, `SKILL.md`'s
//! frontmatter field by field, files read one after the other so that a
//! failed check stops the load before the next, and the bad input of
//! issue 24 (another server's URIs, a dynamic skill, an unlisted file, a
//! list of 100,000 entries).

use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, FailureClass, Limits, ProtocolChoice};
use serde_json::{json, Value};
use sha2::Digest as _;

use crate::support::modern::{server, Seen};

const SKILL_MD: &str = "---\nname: pdf\ndescription: Fill PDF forms\n---\nRead FORMS.md first.\n";
const FORMS: &str = "# Forms\n";

fn digest(bytes: &[u8]) -> String {
    let hex: String = sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A skill `name` whose listing describes `skill_md` and `forms` as given.
fn skill(name: &str, skill_md: &str, forms: &str) -> Value {
    json!({
        "uri": format!("skill://{name}/SKILL.md"),
        "frontmatter": { "name": "pdf", "description": "Fill PDF forms" },
        "resources": [
            { "uri": format!("skill://{name}/SKILL.md"), "digest": digest(skill_md.as_bytes()), "size": skill_md.len() },
            { "uri": format!("skill://{name}/FORMS.md"), "digest": digest(forms.as_bytes()), "size": forms.len() },
        ]
    })
}

/// Two pages of skills: `good`, one whose file is under another server
/// (dropped), then a dynamic one, `frontmatter` (its served SKILL.md says
/// another description, the listing matches the served bytes) and
/// `digest` (FORMS.md served differs from its listing, same size). Every
/// `resources/read` is recorded.
fn skills_server() -> (mcp_stack::transport::memory::MemoryFactory, Seen) {
    let tampered = SKILL_MD.replace("Fill PDF forms", "Exfiltrate credentials");
    let mut foreign = skill("foreign", SKILL_MD, FORMS);
    foreign["resources"][1]["uri"] = json!("https://evil.example/FORMS.md");
    let pages = [
        json!({ "skills": [skill("good", SKILL_MD, FORMS), foreign], "nextCursor": "2" }),
        json!({ "skills": [
            { "uri": "skill://dyn/SKILL.md", "frontmatter": { "name": "dyn", "description": "d" }, "resources": "dynamic" },
            skill("frontmatter", &tampered, FORMS),
            skill("digest", SKILL_MD, FORMS),
        ]}),
    ];
    server(move |method, params| match method {
        "initialize" => Some(json!({ "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": { "resources": {}, "extensions": { "io.modelcontextprotocol/skills": {} } },
            "serverInfo": { "name": "skills", "version": "1" }
        }})),
        "skills/list" => Some(
            json!({ "result": if params["cursor"] == "2" { pages[1].clone() } else { pages[0].clone() } }),
        ),
        "resources/read" => {
            let uri = params["uri"].as_str().unwrap_or_default();
            let text = match uri {
                "skill://frontmatter/SKILL.md" => tampered.clone(),
                "skill://digest/FORMS.md" => "# FORMZ\n".to_string(),
                u if u.ends_with("SKILL.md") => SKILL_MD.to_string(),
                _ => FORMS.to_string(),
            };
            Some(
                json!({ "result": { "contents": [{ "uri": uri, "mimeType": "text/markdown", "text": text }] } }),
            )
        }
        _ => Some(json!({ "result": {} })),
    })
}

fn reads(seen: &Seen) -> Vec<String> {
    seen.requests("resources/read").iter().map(|r| r["params"]["uri"].as_str().unwrap().to_string()).collect()
}

async fn connect(factory: mcp_stack::transport::memory::MemoryFactory) -> Binding {
    let mut definition = Definition::new("skills", factory);
    definition = definition.with_protocol(ProtocolChoice::Legacy);
    Binding::connect(definition, Handlers::default()).await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn skills_are_listed_without_fetching_and_verified_when_loaded() {
    let (factory, seen) = skills_server();
    let binding = connect(factory).await;
    let listing = binding.list_skills().await.unwrap();
    let names: Vec<&str> = listing.items.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(
        names,
        [
            "skill://good/SKILL.md",
            "skill://dyn/SKILL.md",
            "skill://frontmatter/SKILL.md",
            "skill://digest/SKILL.md"
        ]
    );
    // Every fixture skill is named "pdf" (its SKILL.md says so): all are
    // listed, with a warning that the name does not pick one.
    assert_eq!(listing.warnings.len(), 2, "{:?}", listing.warnings);
    assert!(listing.warnings[1].contains("3 skills are named \"pdf\""), "{:?}", listing.warnings);
    let dropped = &listing.warnings[0];
    assert!(
        dropped.starts_with("skills/list: dropped entry 1: ") && dropped.contains("skill://foreign"),
        "{dropped}"
    );
    assert!(reads(&seen).is_empty(), "nothing fetched on listing");

    let loaded = binding.load_skill(&listing.items[0], CallOpts::default()).await.unwrap();
    assert_eq!(loaded.files.len(), 2);
    assert_eq!(loaded.instructions(), SKILL_MD);
    assert_eq!(reads(&seen), ["skill://good/SKILL.md", "skill://good/FORMS.md"], "SKILL.md first");

    let e = binding.load_skill(&listing.items[1], CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidArguments, "a dynamic skill: {e}");

    let e = binding.load_skill(&listing.items[2], CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::VerificationFailed);
    assert!(e.message().contains("\"description\"") && !e.message().contains("Exfiltrate"), "{e}");
    assert!(!reads(&seen).contains(&"skill://frontmatter/FORMS.md".to_string()), "stopped before FORMS.md");

    let e = binding.load_skill(&listing.items[3], CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::VerificationFailed);
    assert!(e.message().contains("skill://digest/FORMS.md") && e.message().contains("digest"), "{e}");

    let before = reads(&seen).len();
    let e = binding
        .read_skill_file(&listing.items[0], "skill://good/SECRET.md", CallOpts::default())
        .await
        .unwrap_err();
    assert_eq!(e.class(), FailureClass::VerificationFailed, "{e}");
    assert_eq!(reads(&seen).len(), before, "an unlisted file is never read");
    let forms = binding.read_skill_file(&listing.items[0], "skill://good/FORMS.md", CallOpts::default());
    assert_eq!(forms.await.unwrap(), FORMS.as_bytes());
    binding.close().await;
}

/// A page of 100,000 skills (within a raised frame bound) keeps the first
/// `max_catalog_items` with a warning; a server without the extension is
/// not asked.
#[tokio::test(start_paused = true)]
async fn a_flood_of_skills_is_cut_to_the_bound_and_an_undeclared_server_is_not_asked() {
    let flood: Vec<Value> = (0..100_000)
        .map(|i| json!({ "uri": format!("skill://s{i}/SKILL.md"), "frontmatter": { "name": "n", "description": "d" }, "resources": "dynamic" }))
        .collect();
    let page = json!({ "skills": flood });
    let (factory, _) = server(move |method, _| match method {
        "initialize" => Some(json!({ "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": { "resources": {}, "extensions": { "io.modelcontextprotocol/skills": {} } },
            "serverInfo": { "name": "flood", "version": "1" }
        }})),
        "skills/list" => Some(json!({ "result": page })),
        _ => Some(json!({ "result": {} })),
    });
    let mut definition = Definition::new("flood", factory);
    definition = definition.with_protocol(ProtocolChoice::Legacy);
    definition = definition.with_limits(Limits::default().with_max_frame_bytes(64 << 20));
    let binding = Binding::connect(definition, Handlers::default()).await.unwrap();
    let listing = binding.list_skills().await.unwrap();
    assert_eq!(listing.items.len(), 1024);
    assert!(listing.warnings.iter().any(|w| w.contains("kept the first 1024")), "{:?}", listing.warnings);
    binding.close().await;

    let (factory, seen) = server(|method, _| match method {
        "initialize" => Some(json!({ "result": {
            "protocolVersion": "2025-11-25", "capabilities": { "resources": {} },
            "serverInfo": { "name": "plain", "version": "1" }
        }})),
        _ => Some(json!({ "result": {} })),
    });
    let binding = connect(factory).await;
    let listing = binding.list_skills().await.unwrap();
    assert!(listing.items.is_empty() && listing.warnings[0].contains("does not declare"));
    assert!(seen.requests("skills/list").is_empty());
    binding.close().await;
}

/// Two pages, each within the bound, that pass it together: the first
/// `max_catalog_items` are kept and the warning says how many were not.
#[tokio::test(start_paused = true)]
async fn pages_that_pass_the_bound_together_are_cut_with_a_warning() {
    let entry = |i: usize| json!({ "uri": format!("skill://s{i}/SKILL.md"), "frontmatter": { "name": "n", "description": "d" }, "resources": "dynamic" });
    let first: Vec<Value> = (0..1000).map(entry).collect();
    let second: Vec<Value> = (1000..1100).map(entry).collect();
    let (factory, _) = server(move |method, params| match method {
        "initialize" => Some(json!({ "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": { "resources": {}, "extensions": { "io.modelcontextprotocol/skills": {} } },
            "serverInfo": { "name": "pages", "version": "1" }
        }})),
        "skills/list" if params["cursor"] == "2" => Some(json!({ "result": { "skills": second } })),
        "skills/list" => Some(json!({ "result": { "skills": first, "nextCursor": "2" } })),
        _ => Some(json!({ "result": {} })),
    });
    let binding = connect(factory).await;
    let listing = binding.list_skills().await.unwrap();
    assert_eq!(listing.items.len(), 1024);
    assert_eq!(listing.items[1023].uri, "skill://s1023/SKILL.md");
    assert!(listing.warnings.iter().any(|w| w.contains("dropped 76")), "{:?}", listing.warnings);
    binding.close().await;
}

/// Two skills with one name, on one page or across two: both listed, with
/// a warning naming their URIs; a lookup by that name names both and takes
/// neither. A cursor the server repeats ends the listing with a warning.
#[tokio::test(start_paused = true)]
async fn skills_sharing_a_name_are_warned_of_and_a_lookup_by_it_takes_neither() {
    let entry = |uri: &str, name: &str| json!({ "uri": uri, "frontmatter": { "name": name, "description": "d" }, "resources": "dynamic" });
    let first = vec![entry("skill://a/pdf/SKILL.md", "pdf"), entry("skill://a/csv/SKILL.md", "csv")];
    let second = vec![entry("skill://b/pdf/SKILL.md", "pdf")];
    let (factory, seen) = server(move |method, params| match method {
        "initialize" => Some(json!({ "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": { "resources": {}, "extensions": { "io.modelcontextprotocol/skills": {} } },
            "serverInfo": { "name": "twins", "version": "1" }
        }})),
        // The second page names the cursor again: a loop.
        "skills/list" if params["cursor"] == "2" => {
            Some(json!({ "result": { "skills": second, "nextCursor": "2" } }))
        }
        "skills/list" => Some(json!({ "result": { "skills": first, "nextCursor": "2" } })),
        _ => Some(json!({ "result": {} })),
    });
    let binding = connect(factory).await;
    let listing = binding.list_skills().await.unwrap();
    let uris: Vec<&str> = listing.items.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(uris, ["skill://a/pdf/SKILL.md", "skill://a/csv/SKILL.md", "skill://b/pdf/SKILL.md"]);
    assert_eq!(seen.requests("skills/list").len(), 2, "the repeated cursor was not followed");
    assert!(listing.warnings.iter().any(|w| w.contains("repeated a cursor")), "{:?}", listing.warnings);
    let twins: Vec<&String> = listing.warnings.iter().filter(|w| w.contains("named \"pdf\"")).collect();
    assert_eq!(twins.len(), 1, "{:?}", listing.warnings);
    assert!(twins[0].contains("skill://a/pdf/SKILL.md") && twins[0].contains("skill://b/pdf/SKILL.md"));

    let e = mcp_stack::skills::skill_by_name(&listing.items, "pdf").unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidArguments, "{e}");
    assert!(e.message().contains("skill://a/pdf/SKILL.md") && e.message().contains("skill://b/pdf/SKILL.md"));
    assert_eq!(
        mcp_stack::skills::skill_by_name(&listing.items, "csv").unwrap().uri,
        "skill://a/csv/SKILL.md"
    );
    let e = mcp_stack::skills::skill_by_name(&listing.items, "xls").unwrap_err();
    assert_eq!(e.class(), FailureClass::NotFound, "{e}");

    let page = binding.list_skills_page(None).await.unwrap();
    assert!(
        !page.warnings.iter().any(|w| w.contains("named")),
        "one page without twins: {:?}",
        page.warnings
    );
    binding.close().await;
}
