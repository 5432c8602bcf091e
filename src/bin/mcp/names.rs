//! Which tool `call NAME` means, decided before anything is sent.
//!
//! A model name (`mcp__<binding>__<tool>`) is routed by the host. Anything
//! else is a raw name, the server's own: with one server (or `--server`)
//! it is looked up in that server's adopted catalog; with several, the one
//! server that lists it serves it (the command says which), and when
//! several list it they are named and `--server` asked for. A name no
//! catalog lists is refused before any I/O, with the closest names offered,
//! unless the server's tool list is stale (a change notification arrived
//! and the refetch has not finished): then the name may be new, and it is
//! sent as it is.

use mcp_stack::host::HostCatalog;

/// What `call NAME` resolves to.
#[derive(Debug, PartialEq)]
pub(crate) enum Target {
    /// A model name the host routes.
    Model,
    /// A raw name on one server.
    Raw {
        /// The server.
        binding: String,
        /// The name sent.
        raw_name: String,
    },
}

/// Why `call NAME` names no tool: said to the person as it is.
#[derive(Debug, PartialEq)]
pub(crate) struct Unknown(pub(crate) String);

/// Resolves `name` against `catalog`. `server` is `--server`; `stale` says
/// whether a server's tool list is stale.
pub(crate) fn resolve(
    catalog: &HostCatalog,
    servers: &[String],
    server: Option<&str>,
    name: &str,
    stale: &dyn Fn(&str) -> bool,
) -> Result<Target, Unknown> {
    // A model name, whoever the tool is for: the binding refuses a tool
    // that is for its app only, saying so, on every path.
    let routed = catalog.resolve(name).ok().map(|(listing, tool)| mcp_stack::host::Route {
        binding: listing.binding.clone(),
        raw_name: tool.raw_name.clone(),
        generation: listing.generation,
    });
    let one = match server {
        Some(server) => Some(server.to_string()),
        None if routed.is_some() => return Ok(Target::Model),
        None if servers.len() == 1 => Some(servers[0].clone()),
        None => None,
    };
    if let Some(binding) = one {
        // A model name of this very server is its raw name.
        if let Some(route) = routed.filter(|r| r.binding == binding) {
            return Ok(Target::Raw { binding, raw_name: route.raw_name });
        }
        let listed = catalog.catalog(&binding).is_some_and(|c| c.tools.iter().any(|t| t.raw_name == name));
        if listed || stale(&binding) {
            return Ok(Target::Raw { binding, raw_name: name.to_string() });
        }
        let candidates: Vec<&str> = catalog
            .catalog(&binding)
            .map(|c| c.tools.iter().map(|t| t.raw_name.as_str()).collect())
            .unwrap_or_default();
        return Err(Unknown(format!(
            "the server {binding:?} lists no tool {name:?}{}",
            did_you_mean(name, &candidates)
        )));
    }
    let listing: Vec<&str> = catalog
        .catalogs()
        .iter()
        .filter(|c| c.tools.iter().any(|t| t.raw_name == name))
        .map(|c| c.binding.as_str())
        .collect();
    if let [only] = listing.as_slice() {
        return Ok(Target::Raw { binding: only.to_string(), raw_name: name.to_string() });
    }
    if !listing.is_empty() {
        let models: Vec<&str> = catalog
            .catalogs()
            .iter()
            .flat_map(|c| c.tools.iter())
            .filter(|t| t.raw_name == name)
            .map(|t| t.model_name.as_str())
            .collect();
        return Err(Unknown(format!(
            "{name:?} is a raw tool name listed by {} servers ({}): pass --server NAME, or call it by its model name ({})",
            listing.len(),
            listing.join(", "),
            models.join(", ")
        )));
    }
    let candidates: Vec<&str> =
        catalog.tools().flat_map(|t| [t.model_name.as_str(), t.raw_name.as_str()]).collect();
    Err(Unknown(format!("no server lists a tool {name:?}{}", did_you_mean(name, &candidates))))
}

/// `; did you mean "a" or "b"?` for the closest candidates (by edit
/// distance, the smallest found, if at most a third of the name's length
/// or 2), or `""`.
fn did_you_mean(name: &str, candidates: &[&str]) -> String {
    let bound = (name.chars().count() / 3).max(2);
    let mut close: Vec<(usize, &str)> =
        candidates.iter().map(|c| (edit_distance(name, c), *c)).filter(|(d, _)| *d <= bound).collect();
    close.sort();
    close.dedup_by(|a, b| a.1 == b.1);
    // The closest only (ties kept): a farther name is a worse guess.
    let best = close.first().map_or(0, |(d, _)| *d);
    let names: Vec<String> =
        close.iter().filter(|(d, _)| *d == best).take(3).map(|(_, c)| format!("{c:?}")).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        more => format!("; did you mean {}?", more.join(" or ")),
    }
}

/// Levenshtein distance over chars; both names are at most 512 bytes (the
/// catalog's bound), so the quadratic table stays small.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_suggestions() {
        assert_eq!(edit_distance("echo", "echo"), 0);
        assert_eq!(edit_distance("ecoh", "echo"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(
            did_you_mean("mcp__demo__ecoh", &["mcp__demo__echo", "mcp__demo__add"]),
            "; did you mean \"mcp__demo__echo\"?"
        );
        assert_eq!(did_you_mean("zzz", &["echo"]), "");
    }
}
