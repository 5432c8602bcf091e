//! Built-in vocabulary of software tools: synonyms, abbreviations and related
//! words used to expand queries.
//!
//! People rarely use a tool's own words: they "bookmark" rather than star, get
//! "pings" rather than notifications, open a "PR". The tables below encode
//! general knowledge of that vocabulary; nothing in them refers to a
//! particular server's catalog. Entries are written as plain words and run
//! through the same tokenizer as documents, so `+` joins a phrase
//! (`pull+request`) and inflections need not be listed.
//!
//! Three strengths:
//!
//! * [`ABBREVIATIONS`]: the same thing spelled differently (`pr`, `repo`,
//!   `k8s`). Single-word expansions also apply in reverse.
//! * [`EQUIVALENTS`]: groups of near-synonyms; each word expands to the rest.
//! * [`RELATED`]: one-way hints from a word to what it usually means in a
//!   tool (`bookmark` → star, `crashloop` → logs, events).

use std::collections::HashMap;
use std::sync::OnceLock;

use super::related::{PHRASES, RELATED};
use super::text;

/// Weight of an abbreviation expansion relative to a typed word.
pub(crate) const ABBREVIATION_WEIGHT: f32 = 0.9;
/// Weight of a synonym from an equivalence group.
pub(crate) const EQUIVALENT_WEIGHT: f32 = 0.7;
/// Weight of the meaning of an idiom (`money back` → refund).
pub(crate) const PHRASE_WEIGHT: f32 = 0.8;
/// Weight of a related word.
pub(crate) const RELATED_WEIGHT: f32 = 0.5;

/// `key: expansion expansion ...`; the key means exactly the expansions.
const ABBREVIATIONS: &[&str] = &[
    "pr: pull+request merge+request",
    "prs: pull+request merge+request",
    "mr: merge+request pull+request",
    "repo: repository",
    "repos: repository",
    "k8s: kubernetes",
    "kube: kubernetes",
    "kubectl: kubernetes",
    "db: database",
    "dbs: database",
    "pg: postgres postgresql",
    "psql: postgres postgresql",
    "postgresql: postgres",
    "mongo: mongodb",
    "es: elasticsearch",
    "elastic: elasticsearch",
    "gh: github",
    "gcal: calendar",
    "gdrive: drive",
    "gsheet: spreadsheet sheet",
    "msg: message",
    "msgs: message",
    "dm: direct+message private+message",
    "dms: direct+message private+message",
    "im: instant+message",
    "pm: private+message",
    "env: environment",
    "envs: environment",
    "config: configuration",
    "cfg: configuration config",
    "dir: directory",
    "dirs: directory",
    "info: information details",
    "desc: description",
    "id: identifier",
    "img: image",
    "pic: picture image",
    "pics: picture image",
    "pw: password",
    "pwd: password",
    "passwd: password",
    "auth: authentication",
    "authn: authentication",
    "authz: authorization permission",
    "perms: permission",
    "ack: acknowledge",
    "acked: acknowledge",
    "sev: severity incident",
    "vuln: vulnerability",
    "vulns: vulnerability",
    "cve: vulnerability advisory",
    "deps: dependency",
    "dep: dependency",
    "lib: library",
    "libs: library",
    "pkg: package",
    "docs: documentation",
    "doc: document documentation",
    "ci: continuous+integration pipeline workflow",
    "cicd: pipeline workflow deploy",
    "vm: virtual+machine instance",
    "vms: virtual+machine instance",
    "ec2: instance",
    "s3: bucket object",
    "gcs: bucket storage",
    "blob: object file",
    "sqs: queue",
    "sns: topic notification",
    "iam: permission policy role",
    "cdn: cache",
    "dns: domain record",
    "url: link",
    "urls: link",
    "uri: link url",
    "ttl: expire expiration",
    "tz: timezone",
    "utc: timezone",
    "ooo: out+of+office vacation",
    "asap: urgent",
    "eta: due",
    "kb: knowledge+base article",
    "faq: article help",
    "csat: satisfaction rating",
    "nps: satisfaction rating",
    "crm: customer contact deal",
    "qty: quantity",
    "sku: product variant",
    "yt: youtube",
    "fcm: messaging push",
    "rls: row+level+security",
    "ddl: migration schema",
    "sql: query",
    "soql: salesforce query",
    "jql: jira search",
    "cql: confluence search",
    "kql: log query",
    "promql: prometheus query",
    "logql: loki log",
    "esql: elasticsearch query",
    "gql: graphql",
    "cli: command",
    "cmd: command",
    "pid: process",
    "ui: interface component",
    "ux: design",
    "api: endpoint",
    "p95: latency percentile",
    "p99: latency percentile",
    "cpu: usage",
    "ram: memory",
    "os: system",
    "tldr: summary",
    "todo: task",
    "todos: task",
    "wip: draft progress",
    "lgtm: approve",
    "oncall: on+call",
    "tx: transaction",
    "txn: transaction",
    "acct: account",
    "org: organization",
    "orgs: organization",
    "ns: namespace",
    "svc: service",
    "deploy: deployment",
    "repl: interactive process",
    "ssh: shell remote",
    "hass: home+assistant",
    "ha: home+assistant",
    "hvac: thermostat climate",
    "ac: climate thermostat",
    "tv: media+player",
    "gif: image",
    "png: image",
    "jpg: image",
    "svg: image icon",
    "pdf: document",
    "csv: spreadsheet table",
    "xlsx: spreadsheet",
    "excel: spreadsheet",
    "md: markdown",
    "yml: yaml",
    "js: javascript",
    "ts: typescript",
    "py: python",
    "mkdir: create+directory",
    "ls: list",
    "cat: read",
    "cp: copy",
    "du: size",
    "chmod: permission",
    "rds: database",
    "dynamo: dynamodb",
    "apm: trace span",
    "aqi: air+quality",
    "mrr: revenue subscription",
    "sla: policy",
    "slo: objective",
];

/// Groups of words that mean the same thing in tool vocabulary.
const EQUIVALENTS: &[&str] = &[
    // Verbs.
    "delete remove erase drop destroy trash purge discard wipe rm del",
    "create make new add insert generate",
    "update edit modify change alter patch amend adjust tweak",
    "get fetch retrieve read obtain",
    "show view display see",
    "list enumerate browse",
    "search find lookup query locate seek grep discover",
    "send post deliver dispatch",
    "reply respond answer",
    "close resolve complete finish done solve",
    "reopen unresolve",
    "merge combine land",
    "approve accept lgtm",
    "reject decline refuse deny dismiss",
    "cancel abort halt terminate kill",
    "stop pause halt",
    "run execute launch trigger invoke kick",
    "start begin launch",
    "restart rerun retry redo reboot",
    "deploy ship release publish rollout",
    "rollback revert undo",
    "download export save",
    "upload import attach",
    "copy duplicate clone replicate",
    "fork clone copy",
    "move relocate transfer mv",
    "rename retitle",
    "share grant",
    "assign delegate allocate reassign",
    "invite onboard",
    "subscribe follow watch",
    "unsubscribe unfollow unwatch mute ignore silence snooze",
    "mute silence snooze quiet",
    "disable deactivate suspend",
    "enable activate reactivate",
    "block ban blacklist",
    "check verify validate test",
    "review inspect audit",
    "compare diff",
    "explain analyze analyse diagnose investigate",
    "research investigate study",
    "summarize summarise summary overview recap digest",
    "scrape crawl spider extract harvest",
    "convert translate transform",
    "schedule book arrange",
    "remember memorize store record",
    "forget delete",
    "pin sticky",
    "forward relay",
    "click tap press",
    "type enter input fill",
    "scroll swipe",
    "navigate go visit goto",
    "play listen",
    "resume continue unpause",
    "skip next",
    "previous back prior",
    "track monitor observe watch",
    "link connect associate relate",
    "count tally total",
    "scale resize",
    "expire expiry expiration ttl",
    "purge flush invalidate evict clear",
    "aggregate aggregation",
    "migrate migration",
    "install setup",
    "uninstall remove",
    "log record",
    "ping notify alert mention",
    "escalate escalation",
    "acknowledge ack",
    "encrypt encode",
    // Nouns.
    "repository repo codebase",
    "issue ticket bug defect",
    "task todo chore",
    "message msg chat dm text",
    "email mail inbox mailbox",
    "comment note remark annotation",
    "event meeting appointment",
    "invite invitation",
    "calendar agenda schedule",
    "document doc page note",
    "article page post",
    "wiki page",
    "file document attachment",
    "folder directory dir",
    "user member person people account",
    "contact person people",
    "team group squad",
    "organization org company workspace",
    "company business firm account organization",
    "star bookmark favorite favourite",
    "notification alert ping mention",
    "label tag category",
    "topic subject",
    "title heading subject",
    "body content text",
    "thread conversation discussion",
    "channel room",
    "server guild",
    "emoji reaction emoticon",
    "commit changeset revision",
    "diff change patch delta",
    "branch ref",
    "release version tag",
    "history log timeline activity",
    "status state health",
    "workflow pipeline ci build",
    "job run build",
    "log output console stdout",
    "error exception crash failure fault",
    "metric stat statistic measurement telemetry timeseries",
    "dashboard panel",
    "incident outage",
    "oncall pager",
    "maintenance downtime",
    "owner assignee",
    "priority urgency severity importance",
    "due deadline",
    "sprint cycle iteration",
    "epic story",
    "card task item",
    "checklist subtask",
    "worklog timesheet",
    "dependency blocker prerequisite",
    "entity node",
    "observation fact knowledge",
    "relation relationship link",
    "phone mobile cell",
    "voice audio sound recording",
    "draft unsent",
    "spam junk",
    "filter rule",
    "unread unseen missed",
    "webhook hook callback",
    "environment env",
    "variable var",
    "configuration config setting preference option",
    "secret credential password token key",
    "permission role access privilege",
    "domain hostname",
    "certificate cert ssl tls",
    "cache cdn",
    "bucket storage",
    "function lambda serverless",
    "instance vm machine host server",
    "process program pid",
    "terminal shell command console bash",
    "memory ram",
    "cpu processor",
    "usage utilization consumption load",
    "replica instance",
    "manifest yaml spec",
    "database db datastore",
    "table collection",
    "row record entry",
    "column field attribute property",
    "schema structure definition",
    "index indice indexes",
    "query sql statement",
    "slow performance latency speed slowness perf",
    "plan explain",
    "backup snapshot dump",
    "vector embedding semantic similarity",
    "allowlist whitelist",
    "login signin authenticate",
    "identity whoami profile",
    "cost spend billing expense",
    "price pricing cost",
    "payment charge transaction",
    "refund reimburse reimbursement chargeback",
    "customer client buyer shopper",
    "order purchase",
    "product item merchandise",
    "inventory stock",
    "discount coupon promo promotion voucher",
    "subscription membership plan",
    "invoice bill receipt",
    "shipment shipping fulfillment delivery",
    "deal opportunity",
    "lead prospect contact",
    "rating satisfaction score",
    "macro template",
    "design mockup frame prototype",
    "component widget",
    "icon asset graphic",
    "image picture photo",
    "screenshot capture",
    "snapshot screenshot",
    "video clip",
    "song track music tune",
    "playlist mix",
    "volume loudness",
    "weather forecast",
    "warning alert advisory",
    "time clock",
    "timezone zone",
    "location place venue spot",
    "coordinate latitude longitude gps",
    "direction route navigation",
    "distance far",
    "nearby near local around",
    "website site web",
    "browser chrome chromium",
    "url link href address",
    "news headline",
    "documentation docs manual guide reference",
    "library package dependency module sdk",
    "vulnerability advisory cve",
    "transcript caption subtitle",
    "thought reasoning",
    "light lamp bulb",
    "thermostat heating climate temperature",
    "blind shade curtain cover",
    "device entity appliance",
    "automation routine scene",
    "spreadsheet sheet workbook",
    "describe details info inspect metadata",
    "batch bulk multiple several",
    "child children sub nested",
    "tree hierarchy recursive",
    "allowed permitted accessible authorized",
    "pending waiting queued",
    "latest newest recent last",
    "select choose pick",
    "append add",
    "stat stats statistics",
    "health healthy uptime",
    "brightness dim brighten",
    "teammate coworker colleague member",
    "report writeup document",
    "changelog release",
    "slide presentation deck",
];

/// One expansion of a query term: the tokens of a word or phrase and its
/// weight.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Expansion {
    pub(crate) tokens: Vec<String>,
    pub(crate) weight: f32,
}

type Table = HashMap<String, Vec<Expansion>>;

/// Expansions of a normalized (tokenized, stemmed) query term, strongest
/// first; empty if the term is unknown.
pub(crate) fn expansions(term: &str) -> &'static [Expansion] {
    table().get(term).map_or(&[], Vec::as_slice)
}

/// Meanings of idioms: for each phrase (as its words, stemmed but with
/// stopwords kept), the expansions it adds to a query.
pub(crate) fn phrases() -> &'static [(Vec<String>, Vec<Expansion>)] {
    static PHRASE_TABLE: OnceLock<Vec<(Vec<String>, Vec<Expansion>)>> = OnceLock::new();
    PHRASE_TABLE.get_or_init(|| {
        PHRASES
            .iter()
            .map(|line| {
                let (words, rest) = line.split_once(':').expect("phrase lines have a colon");
                let key = words.split_whitespace().map(text::stem).collect();
                let to = rest
                    .split_whitespace()
                    .map(|w| Expansion { tokens: phrase(w), weight: PHRASE_WEIGHT })
                    .filter(|e| !e.tokens.is_empty())
                    .collect();
                (key, to)
            })
            .collect()
    })
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(build)
}

fn phrase(word: &str) -> Vec<String> {
    text::tokenize(&word.replace('+', " "))
}

fn key(word: &str) -> Option<String> {
    let mut t = text::tokenize(word);
    (t.len() == 1).then(|| t.remove(0))
}

fn add(table: &mut Table, from: &str, to: Vec<String>, weight: f32) {
    if to.is_empty() || (to.len() == 1 && to[0] == from) {
        return;
    }
    let list = table.entry(from.to_owned()).or_default();
    match list.iter_mut().find(|e| e.tokens == to) {
        Some(e) => e.weight = e.weight.max(weight),
        None => list.push(Expansion { tokens: to, weight }),
    }
}

fn build() -> Table {
    let mut table = Table::new();
    for line in ABBREVIATIONS {
        let (k, rest) = line.split_once(':').expect("abbreviation lines have a colon");
        let Some(k) = key(k) else { continue };
        for word in rest.split_whitespace() {
            let to = phrase(word);
            if to.len() == 1 && !word.contains('+') {
                add(&mut table, &to[0], vec![k.clone()], ABBREVIATION_WEIGHT);
            }
            add(&mut table, &k, to, ABBREVIATION_WEIGHT);
        }
    }
    for line in EQUIVALENTS {
        let words: Vec<Vec<String>> = line.split_whitespace().map(phrase).filter(|p| !p.is_empty()).collect();
        for from in &words {
            if from.len() != 1 {
                continue;
            }
            for to in &words {
                add(&mut table, &from[0], to.clone(), EQUIVALENT_WEIGHT);
            }
        }
    }
    for line in RELATED {
        let (k, rest) = line.split_once(':').expect("related lines have a colon");
        let Some(k) = key(k) else { continue };
        for word in rest.split_whitespace() {
            add(&mut table, &k, phrase(word), RELATED_WEIGHT);
        }
    }
    for list in table.values_mut() {
        // Strongest first; ties keep table order (stable sort).
        list.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(term: &str, to: &str) -> bool {
        let want = phrase(to);
        expansions(&text::stem(term)).iter().any(|e| e.tokens == want)
    }

    #[test]
    fn table_has_a_few_hundred_entries() {
        assert!(table().len() > 300, "{}", table().len());
    }

    #[test]
    fn expands_common_vocabulary() {
        assert!(has("pr", "pull request"));
        assert!(has("repo", "repository"));
        assert!(has("repository", "repo"));
        assert!(has("bookmark", "star"));
        assert!(has("delete", "remove"));
        assert!(has("remove", "delete"));
        assert!(has("k8s", "kubernetes"));
        assert!(has("ping", "notification"));
        assert!(has("tickets", "issue"));
        // "oncall: on+call" must not make every "call" mean on-call.
        assert!(!has("call", "oncall"));
    }

    #[test]
    fn phrases_are_keyed_by_stemmed_words() {
        let p = phrases();
        assert!(p.iter().any(|(k, v)| k == &["money".to_string(), "back".to_string()] && !v.is_empty()));
        assert!(p.iter().all(|(k, v)| k.len() >= 2 && !v.is_empty()));
    }

    #[test]
    fn weights_are_ordered() {
        for list in table().values() {
            assert!(list.windows(2).all(|w| w[0].weight >= w[1].weight));
            assert!(list.iter().all(|e| e.weight > 0.0 && e.weight < 1.0 && !e.tokens.is_empty()));
        }
    }
}
