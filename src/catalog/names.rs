//! Raw names and model names. Documented in the [names section of the parent module](crate::catalog#names).

use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

/// The longest raw name accepted, in bytes.
pub(crate) const MAX_RAW_NAME_BYTES: usize = 512;
/// The longest model name produced, in bytes: the tightest limit common among
/// inference providers.
pub(crate) const MAX_MODEL_NAME_BYTES: usize = 64;
/// The longest binding name that fits in a model name, in bytes.
pub(crate) const MAX_BINDING_NAME_BYTES: usize = 32;
/// Every model name starts with this.
pub(crate) const MODEL_NAME_PREFIX: &str = "mcp__";
/// The hex digits of a collision suffix, first try.
pub(crate) const SUFFIX_HEX_DIGITS: usize = 8;
/// The base used when sanitizing leaves no letter or digit.
pub(crate) const PLACEHOLDER_BASE: &str = "tool";

/// Why a raw name was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawNameError {
    /// The name is empty.
    Empty,
    /// The name is longer than [`MAX_RAW_NAME_BYTES`]; the value is its length.
    TooLong(usize),
    /// The name holds a control character (Unicode category Cc) or a
    /// bidirectional formatting character.
    ControlCharacter,
}

impl fmt::Display for RawNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RawNameError::Empty => f.write_str("is empty"),
            RawNameError::TooLong(n) => write!(f, "is {n} bytes, over {MAX_RAW_NAME_BYTES}"),
            RawNameError::ControlCharacter => {
                f.write_str("contains a control character or a bidirectional formatting character")
            }
        }
    }
}

impl std::error::Error for RawNameError {}

/// Checks a raw name: non-empty, at most [`MAX_RAW_NAME_BYTES`] bytes, no
/// control or bidirectional formatting character.
pub(crate) fn check_raw_name(name: &str) -> Result<(), RawNameError> {
    if name.is_empty() {
        return Err(RawNameError::Empty);
    }
    if name.len() > MAX_RAW_NAME_BYTES {
        return Err(RawNameError::TooLong(name.len()));
    }
    if name.chars().any(crate::error::is_display_hazard) {
        return Err(RawNameError::ControlCharacter);
    }
    Ok(())
}

/// Whether `name` has the shape of a model name: 1 to
/// [`MAX_MODEL_NAME_BYTES`] bytes of `[A-Za-z0-9_-]`.
pub(crate) fn is_valid_model_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_MODEL_NAME_BYTES
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The result of [`assign`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ModelNames {
    /// Raw name → model name, for every tool that got one.
    pub names: BTreeMap<String, String>,
    /// Raw names refused because no unique model name could be made for them
    /// (see the module docs, step 3). Empty unless a server searched for a
    /// hash collision.
    pub refused: Vec<String>,
}

/// Assigns model names to the raw names of one binding's tools.
///
/// `raw_names` should be valid ([`check_raw_name`]) and distinct; a repeated
/// name is treated as one. The binding name is sanitized the same way as a
/// base and cut to [`MAX_BINDING_NAME_BYTES`] (a validated `Definition` never
/// needs either).
pub(crate) fn assign<'a>(binding: &str, raw_names: impl IntoIterator<Item = &'a str>) -> ModelNames {
    let raws: BTreeSet<&str> = raw_names.into_iter().collect();
    let mut binding_part = sanitize(binding, false);
    binding_part.truncate(MAX_BINDING_NAME_BYTES);
    let prefix = format!("{MODEL_NAME_PREFIX}{binding_part}__");
    let budget = MAX_MODEL_NAME_BYTES - prefix.len();
    let max_level = max_level(budget);

    struct Entry<'a> {
        raw: &'a str,
        base: String,
        hex: String,
        level: usize,
        /// The name at `level`, case-folded: what clashes are found by.
        folded: String,
    }
    let mut entries: Vec<Entry<'_>> = raws
        .iter()
        .map(|raw| {
            let mut base = sanitize(raw, true);
            base.truncate(budget);
            let folded = base.to_ascii_lowercase();
            // The suffix digest only for a name that clashes (below): a
            // SHA-256 per tool was most of naming a large catalog.
            Entry { raw, base, hex: String::new(), level: 0, folded }
        })
        .collect();
    let escalate = |e: &mut Entry<'_>| {
        e.level += 1;
        if e.hex.is_empty() {
            e.hex = suffix_digest(e.raw);
        }
        e.folded = render(&e.base, &e.hex, e.level, budget).to_ascii_lowercase();
    };

    // Steps 2 and 3: escalate every member of a clash of case-folded
    // names, all at once, so the outcome does not depend on the order of
    // the entries, until none is left. The first round is step 2 (every
    // entry is at level 0, its base). A group's outcome does not depend on
    // the order of the groups either, so they are found by hash.
    let mut refused = BTreeSet::new();
    loop {
        let clashing = clashes(entries.iter().map(|e| e.folded.as_str()), &refused);
        if clashing.is_empty() {
            break;
        }
        for members in clashing {
            if members.iter().any(|&i| entries[i].level < max_level) {
                for &i in &members {
                    if entries[i].level < max_level {
                        escalate(&mut entries[i]);
                    }
                }
            } else {
                // Entries are in raw-name order: keep the first.
                refused.extend(members.iter().skip(1).copied());
            }
        }
    }

    let mut out = ModelNames::default();
    for (i, e) in entries.iter().enumerate() {
        if refused.contains(&i) {
            out.refused.push(e.raw.to_string());
        } else {
            out.names
                .insert(e.raw.to_string(), format!("{prefix}{}", render(&e.base, &e.hex, e.level, budget)));
        }
    }
    out
}

/// The groups of more than one index (in increasing order) whose `names`
/// are equal, leaving out the indices in `left_out`.
fn clashes<'n>(names: impl Iterator<Item = &'n str>, left_out: &BTreeSet<usize>) -> Vec<Vec<usize>> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, name) in names.enumerate() {
        if !left_out.contains(&i) {
            by_name.entry(name).or_default().push(i);
        }
    }
    by_name.into_values().filter(|members| members.len() > 1).collect()
}

/// Keeps `[A-Za-z0-9_-]`, replaces each run of anything else with one `_`.
/// With `placeholder`, a result without a letter or digit becomes
/// [`PLACEHOLDER_BASE`].
fn sanitize(text: &str, placeholder: bool) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_RAW_NAME_BYTES));
    let mut in_run = false;
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' {
            out.push(ch);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    if placeholder && !out.bytes().any(|b| b.is_ascii_alphanumeric()) {
        return PLACEHOLDER_BASE.to_string();
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// The hex digits a suffix is cut from: SHA-256 of the raw name, under a
/// domain tag so that it never equals any other digest this crate makes.
fn suffix_digest(raw: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"mcp-stack/model-name-suffix/v1\0");
    h.update(raw.as_bytes());
    super::digest::hex(&h.finalize())
}

/// The hex digits of a suffix at `level` (level 0: no suffix).
fn suffix_len(level: usize, budget: usize) -> usize {
    (level * SUFFIX_HEX_DIGITS).min(budget - 1).min(64)
}

/// The highest level: the one whose suffix is as long as fits.
fn max_level(budget: usize) -> usize {
    let longest = (budget - 1).min(64);
    longest.div_ceil(SUFFIX_HEX_DIGITS)
}

fn render(base: &str, hex: &str, level: usize, budget: usize) -> String {
    if level == 0 {
        return base.to_string();
    }
    let digits = suffix_len(level, budget);
    let keep = budget - 1 - digits;
    // The base is ASCII, so any byte index is a char boundary.
    format!("{}_{}", &base[..base.len().min(keep)], &hex[..digits])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A raw name goes back to the server verbatim, so one that could
    /// display as another (bidi formatting, C1 controls) is refused; other
    /// scripts are fine.
    #[test]
    fn raw_names_with_bidi_or_c1_are_refused() {
        assert_eq!(check_raw_name("a\u{200F}b"), Err(RawNameError::ControlCharacter));
        assert_eq!(check_raw_name("a\u{0085}b"), Err(RawNameError::ControlCharacter));
        assert_eq!(check_raw_name("بحث"), Ok(()));
    }

    #[test]
    fn raw_names_are_checked() {
        assert_eq!(check_raw_name(""), Err(RawNameError::Empty));
        assert_eq!(check_raw_name(&"a".repeat(513)), Err(RawNameError::TooLong(513)));
        assert_eq!(check_raw_name("a\nb"), Err(RawNameError::ControlCharacter));
        assert_eq!(check_raw_name("a\u{7f}"), Err(RawNameError::ControlCharacter));
        assert_eq!(check_raw_name("a\u{85}"), Err(RawNameError::ControlCharacter));
        assert!(check_raw_name(&"a".repeat(512)).is_ok());
        assert!(check_raw_name("поиск").is_ok());
        assert!(check_raw_name("se arch").is_ok());
    }

    #[test]
    fn a_lone_tool_keeps_its_plain_name() {
        let n = assign("files", ["read_file", "write-file", "se.arch"]);
        assert_eq!(n.names["read_file"], "mcp__files__read_file");
        assert_eq!(n.names["write-file"], "mcp__files__write-file");
        assert_eq!(n.names["se.arch"], "mcp__files__se_arch");
        assert!(n.refused.is_empty());
    }

    #[test]
    fn every_member_of_a_collision_group_is_suffixed() {
        let n = assign("b", ["search", "Search", "se.arch", "se arch", "other"]);
        for raw in ["search", "Search"] {
            let name = &n.names[raw];
            assert!(name.starts_with("mcp__b__") && name.len() == "mcp__b__search_".len() + 8, "{name}");
        }
        for raw in ["se.arch", "se arch"] {
            assert!(n.names[raw].starts_with("mcp__b__se_arch_"), "{}", n.names[raw]);
        }
        assert_eq!(n.names["other"], "mcp__b__other");
        let distinct: BTreeSet<String> = n.names.values().map(|s| s.to_ascii_lowercase()).collect();
        assert_eq!(distinct.len(), 5);
    }

    #[test]
    fn other_scripts_get_a_placeholder_base() {
        let n = assign("b", ["поиск"]);
        assert_eq!(n.names["поиск"], "mcp__b__tool");
        let n = assign("b", ["поиск", "検索", "tool"]);
        assert!(n.names.values().all(|m| m.starts_with("mcp__b__tool_")), "{n:?}");
    }

    #[test]
    fn long_names_are_cut_and_still_unique() {
        let binding = "b".repeat(32);
        let a = format!("{}a", "x".repeat(199));
        let b = format!("{}b", "x".repeat(199));
        let n = assign(&binding, [a.as_str(), b.as_str()]);
        assert_ne!(n.names[&a], n.names[&b]);
        assert!(n.names.values().all(|m| is_valid_model_name(m)));
    }

    #[test]
    fn a_suffixed_name_equal_to_a_plain_name_escalates_both() {
        // Craft a tool whose plain name equals another's suffixed name.
        let first = assign("b", ["x.y", "x y"]);
        let crafted = first.names["x.y"].trim_start_matches("mcp__b__").to_string();
        let n = assign("b", ["x.y", "x y", crafted.as_str()]);
        let distinct: BTreeSet<String> = n.names.values().map(|s| s.to_ascii_lowercase()).collect();
        assert_eq!(distinct.len(), 3, "{n:?}");
        assert!(n.names.values().all(|m| is_valid_model_name(m)));
    }

    fn raw_name() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9_.\\- ]{1,12}",
            "[sS][eE][aA.][rR ][cC][hH]",
            "\\PC{1,20}",
            "[a-z]{150,300}",
            Just("поиск".to_string()),
            Just("検索".to_string()),
        ]
        .prop_filter("valid raw name", |s| check_raw_name(s).is_ok())
    }

    fn binding_name() -> impl Strategy<Value = String> {
        "[A-Za-z0-9_-]{1,32}"
    }

    proptest! {
        #[test]
        fn model_names_are_unique_bounded_and_well_formed(
            binding in binding_name(),
            raws in proptest::collection::btree_set(raw_name(), 0..40),
        ) {
            let n = assign(&binding, raws.iter().map(String::as_str));
            prop_assert!(n.refused.is_empty());
            prop_assert_eq!(n.names.len(), raws.len());
            let mut seen = BTreeSet::new();
            for name in n.names.values() {
                prop_assert!(is_valid_model_name(name), "{}", name);
                let prefix = format!("mcp__{}__", binding);
                prop_assert!(name.starts_with(&prefix));
                prop_assert!(seen.insert(name.to_ascii_lowercase()), "duplicate {}", name);
            }
        }

        #[test]
        fn model_names_do_not_depend_on_listing_order(
            binding in binding_name(),
            raws in proptest::collection::vec(raw_name(), 0..30),
            seed in any::<u64>(),
        ) {
            let mut shuffled = raws.clone();
            // A deterministic shuffle from the seed.
            let mut state = seed | 1;
            for i in (1..shuffled.len()).rev() {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17;
                shuffled.swap(i, (state % (i as u64 + 1)) as usize);
            }
            let a = assign(&binding, raws.iter().map(String::as_str));
            let b = assign(&binding, shuffled.iter().map(String::as_str));
            prop_assert_eq!(a, b);
        }

        #[test]
        fn adding_an_unrelated_tool_renames_nothing_else(
            binding in binding_name(),
            raws in proptest::collection::btree_set(raw_name(), 0..30),
            extra in raw_name(),
        ) {
            prop_assume!(!raws.contains(&extra));
            let before = assign(&binding, raws.iter().map(String::as_str));
            let mut with = raws.clone();
            with.insert(extra.clone());
            let after = assign(&binding, with.iter().map(String::as_str));
            let key = |raw: &str| {
                let mut b = sanitize(raw, true);
                b.truncate(MAX_MODEL_NAME_BYTES - format!("mcp__{}__", binding).len());
                b.to_ascii_lowercase()
            };
            for raw in &raws {
                if key(raw) != key(&extra) {
                    prop_assert_eq!(&before.names[raw], &after.names[raw], "{} renamed by {}", raw, extra);
                }
            }
        }
    }
}
