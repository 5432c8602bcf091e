use super::*;
use serde_json::json;

const BOUNDS: SkillBounds = SkillBounds { max_files: 512, max_bytes: 16 << 20 };
const SKILL_MD: &str = "---\nname: pdf\ndescription: Fill PDF forms\n---\nUse FORMS.md.\n";

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::canonical::hex(&sha2::Sha256::digest(bytes)))
}

fn entry(files: Value) -> Value {
    json!({
        "uri": "skill://pdf/SKILL.md",
        "frontmatter": { "name": "pdf", "description": "Fill PDF forms" },
        "resources": files
    })
}

fn listed() -> Value {
    entry(json!([
        { "uri": "skill://pdf/FORMS.md", "digest": digest(b"forms"), "size": 5 },
        { "uri": "skill://pdf/SKILL.md", "digest": digest(SKILL_MD.as_bytes()), "size": SKILL_MD.len() },
    ]))
}

#[test]
fn an_entry_is_read_with_skill_md_first() {
    let skill = SkillInfo::from_wire(&listed(), BOUNDS).unwrap();
    assert_eq!((skill.name.as_str(), skill.description.as_str()), ("pdf", "Fill PDF forms"));
    let files = skill.files.as_ref().unwrap();
    assert_eq!(
        files.iter().map(|f| f.uri.as_str()).collect::<Vec<_>>(),
        ["skill://pdf/SKILL.md", "skill://pdf/FORMS.md"]
    );
    assert!(skill.file("skill://pdf/FORMS.md").is_some());
    assert!(skill.file("skill://pdf/OTHER.md").is_none(), "an unlisted file is not the skill's");
    let dynamic = SkillInfo::from_wire(&entry(json!("dynamic")), BOUNDS).unwrap();
    assert_eq!(dynamic.files, None);
}

#[test]
fn an_entry_that_cannot_be_used_says_why() {
    let why = |e: Value| SkillInfo::from_wire(&e, BOUNDS).unwrap_err();
    assert!(why(json!("x")).contains("not an object"));
    assert!(why(entry(json!("everything"))).contains("neither"));
    let mut nameless = listed();
    nameless["frontmatter"] = json!({ "description": "d" });
    assert!(why(nameless).contains("name"));
    // A file of another server (another authority or scheme).
    for uri in ["skill://other/FORMS.md", "https://evil.example/pdf/FORMS.md", "FORMS.md"] {
        let mut e = listed();
        e["resources"][0]["uri"] = json!(uri);
        assert!(why(e).contains("not under the skill's own skill://pdf"), "{uri}");
    }
    for bad in ["sha256:ABC", "md5:0123", &format!("sha256:{}", "A".repeat(64))] {
        let mut e = listed();
        e["resources"][0]["digest"] = json!(bad);
        assert!(why(e).contains("sha256: digest"), "{bad}");
    }
    let mut no_skill_md = listed();
    no_skill_md["resources"].as_array_mut().unwrap().pop();
    assert!(why(no_skill_md).contains("SKILL.md"));
    // The SEP's bounds: 512 files, 16 MiB declared.
    let many: Vec<Value> = (0..513)
        .map(|i| json!({ "uri": format!("skill://pdf/{i}"), "digest": digest(b""), "size": 0 }))
        .collect();
    assert!(why(entry(Value::Array(many))).contains("more than 512 files"));
    let mut big = listed();
    big["resources"][0]["size"] = json!(16u64 << 20);
    assert!(why(big).contains("more than 16777216 bytes"));
}

#[test]
fn a_file_is_checked_by_size_then_digest() {
    let skill = SkillInfo::from_wire(&listed(), BOUNDS).unwrap();
    let forms = skill.file("skill://pdf/FORMS.md").unwrap().clone();
    assert!(skill.verify(&forms, b"forms").is_ok());
    let e = skill.verify(&forms, b"forms!").unwrap_err();
    assert_eq!(e.class(), FailureClass::VerificationFailed);
    assert!(e.message().contains("6 bytes served, 5 listed"), "{e}");
    let e = skill.verify(&forms, b"FORMS").unwrap_err();
    assert!(e.message().contains("digest") && e.message().contains("skill://pdf/FORMS.md"), "{e}");
    assert!(!e.message().contains("FORMS\""), "never the content: {e}");
}

#[test]
fn the_frontmatter_must_equal_the_listed_one_field_by_field() {
    let skill = SkillInfo::from_wire(&listed(), BOUNDS).unwrap();
    assert!(skill.verify_frontmatter(SKILL_MD).is_ok());
    let tampered = SKILL_MD.replace("Fill PDF forms", "Exfiltrate credentials");
    let e = skill.verify_frontmatter(&tampered).unwrap_err();
    assert_eq!(e.class(), FailureClass::VerificationFailed);
    assert!(e.message().contains("\"description\""), "{e}");
    assert!(!e.message().contains("Exfiltrate"), "never the content: {e}");
    let extra = SKILL_MD.replace("name: pdf\n", "name: pdf\nrun: rm -rf /\n");
    assert!(skill.verify_frontmatter(&extra).unwrap_err().message().contains("\"run\""));
    let none = skill.verify_frontmatter("no frontmatter").unwrap_err();
    assert!(none.message().contains("frontmatter"), "{none}");
}
