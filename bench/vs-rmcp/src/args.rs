//! The bench's command line, read strictly: a misspelt flag or a value
//! that is not a count is an error with the usage, never a silent default
//! (a run of 30 minutes with the wrong sizes is worse than no run).

use crate::{http, Case, Client, Era, Sizes};

/// What the bench says when asked, or when its arguments are wrong.
pub const USAGE: &str = "\
usage: vs-rmcp [--transport stdio|http] [--json] [--rounds N] [--calls N] [--large-calls N]
               [--connects N] [--catalogs N] [--huge-calls N]
       vs-rmcp [--transport http] --only CASE CLIENT ERA
       vs-rmcp --help

  --transport T     stdio (the default) or http (streamable HTTP)
  --json            the figures as JSON records, one per line (see src/table.rs)
  --rounds N        interleaved rounds (7)
  --calls N         sequential calls per round (2000); twice as many in flight
  --large-calls N   1 MiB calls per round (40); HTTP: as many progress calls
  --connects N      connects per round (10)
  --catalogs N      1,024-tool catalogs per round (5)
  --huge-calls N    HTTP: 50 MB calls per client process and round (2)
  --only            one case for one client, for a profiler:
                    stdio CASE sequential|inflight|large|structured|connect|catalog|memory
                    CLIENT stack|rmcp|json|pipe    ERA legacy|modern
                    http CASE sequential|sequential-sse|inflight|large|progress|huge-sse|
                              huge-json|connect|catalog
                    CLIENT stack|rmcp|reqwest|hyper    ERA legacy|modern
Run it through run.sh, which builds it and pins it to one CPU (--unpinned: not).";

/// Which transport the table measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

/// What a command line asks for.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// The table: every case, every client, both eras; `json`: as records.
    Table { transport: Transport, rounds: usize, sizes: Sizes, json: bool },
    /// One HTTP case for one client and era, with the profiler's sizes.
    HttpOnly { case: http::Case, client: http::Client, era: Era },
    /// The bench's own child for one 50 MB measurement over HTTP
    /// (`--http-child CASE CLIENT ERA URL CALLS`): its time and peak memory.
    HttpChild { case: http::Case, client: http::Client, era: Era, url: String, calls: usize },
    /// One case for one client and era, with the profiler's sizes.
    Only { case: Case, client: Client, era: Era },
    /// The bench's own child for one memory figure (`--memory CLIENT ERA`).
    Memory { client: Client, era: Era },
    /// The usage.
    Help,
}

/// The command `args` (without the program's name) ask for, or what is
/// wrong with them.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["--help" | "-h"] => Ok(Command::Help),
        ["--transport", "http", "--only", rest @ ..] => match rest {
            [case, client, era] => Ok(Command::HttpOnly {
                case: http::case_of(case)?,
                client: http::client_of(client)?,
                era: era_of(era)?,
            }),
            _ => Err("--only takes three values: CASE CLIENT ERA".into()),
        },
        ["--http-child", case, client, era, url, calls] => Ok(Command::HttpChild {
            case: http::case_of(case)?,
            client: http::client_of(client)?,
            era: era_of(era)?,
            url: url.to_string(),
            calls: count("--http-child", calls)?,
        }),
        ["--only", rest @ ..] => match rest {
            [case, client, era] => {
                Ok(Command::Only { case: case_of(case)?, client: client_of(client)?, era: era_of(era)? })
            }
            _ => Err("--only takes three values: CASE CLIENT ERA".into()),
        },
        ["--memory", rest @ ..] => match rest {
            [client, era] => match client_of(client)? {
                client @ (Client::Stack | Client::Rmcp) => Ok(Command::Memory { client, era: era_of(era)? }),
                _ => Err("--memory measures stack or rmcp".into()),
            },
            _ => Err("--memory takes two values: CLIENT ERA".into()),
        },
        flags => table(flags),
    }
}

fn table(mut flags: &[&str]) -> Result<Command, String> {
    let mut rounds = None;
    let (mut calls, mut large, mut connects, mut catalogs, mut huge) = (None, None, None, None, None);
    let (mut transport, mut json) = (None, false);
    while let [flag, rest @ ..] = flags {
        if *flag == "--json" {
            if json {
                return Err("--json is given twice".into());
            }
            json = true;
            flags = rest;
            continue;
        }
        if *flag == "--transport" {
            let [value, rest @ ..] = rest else { return Err("--transport takes stdio or http".into()) };
            if transport.is_some() {
                return Err("--transport is given twice".into());
            }
            transport = Some(match *value {
                "stdio" => Transport::Stdio,
                "http" => Transport::Http,
                other => return Err(format!("--transport takes stdio or http, not {other:?}")),
            });
            flags = rest;
            continue;
        }
        let slot = match *flag {
            "--rounds" => &mut rounds,
            "--calls" => &mut calls,
            "--large-calls" => &mut large,
            "--connects" => &mut connects,
            "--catalogs" => &mut catalogs,
            "--huge-calls" => &mut huge,
            other => return Err(format!("unknown argument {other:?}")),
        };
        let [value, rest @ ..] = rest else { return Err(format!("{flag} takes a count")) };
        if slot.is_some() {
            return Err(format!("{flag} is given twice"));
        }
        *slot = Some(count(flag, value)?);
        flags = rest;
    }
    let calls = calls.unwrap_or(2000);
    let sizes = Sizes {
        sequential: calls,
        in_flight: calls * 2,
        large: large.unwrap_or(40),
        connects: connects.unwrap_or(10),
        catalogs: catalogs.unwrap_or(5),
        huge: huge.unwrap_or(2),
    };
    let transport = transport.unwrap_or(Transport::Stdio);
    if transport == Transport::Stdio && huge.is_some() {
        return Err("--huge-calls is for --transport http".into());
    }
    Ok(Command::Table { transport, rounds: rounds.unwrap_or(7), sizes, json })
}

/// A count of at least 1 and at most a million (a bound on how long a
/// mistyped run can take).
pub(crate) fn count(flag: &str, value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
        _ => Err(format!("{flag} takes a count from 1 to 1000000, not {value:?}")),
    }
}

fn case_of(name: &str) -> Result<Case, String> {
    Ok(match name {
        "sequential" => Case::Sequential,
        "inflight" => Case::InFlight,
        "large" => Case::Large,
        "structured" => Case::Structured,
        "connect" => Case::Connect,
        "catalog" => Case::Catalog,
        "memory" => Case::Memory,
        other => return Err(format!("unknown case {other:?}")),
    })
}

fn client_of(name: &str) -> Result<Client, String> {
    Ok(match name {
        "stack" => Client::Stack,
        "rmcp" => Client::Rmcp,
        "json" => Client::JsonFloor,
        "pipe" => Client::PipeFloor,
        other => return Err(format!("unknown client {other:?}")),
    })
}

pub(crate) fn era_of(name: &str) -> Result<Era, String> {
    Ok(match name {
        "legacy" => Era::Legacy,
        "modern" => Era::Modern,
        other => return Err(format!("unknown era {other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> Result<Command, String> {
        parse(&line.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn no_arguments_is_the_default_table() {
        let sizes =
            Sizes { sequential: 2000, in_flight: 4000, large: 40, connects: 10, catalogs: 5, huge: 2 };
        let stdio = Command::Table { transport: Transport::Stdio, rounds: 7, sizes, json: false };
        assert_eq!(parsed(""), Ok(stdio));
    }

    #[test]
    fn each_flag_sets_its_own_size() {
        let sizes = Sizes { sequential: 10, in_flight: 20, large: 3, connects: 4, catalogs: 5, huge: 2 };
        assert_eq!(
            parsed("--catalogs 5 --rounds 2 --calls 10 --connects 4 --large-calls 3"),
            Ok(Command::Table { transport: Transport::Stdio, rounds: 2, sizes, json: false })
        );
    }

    #[test]
    fn transport_and_json_go_anywhere_among_the_flags() {
        let sizes =
            Sizes { sequential: 2000, in_flight: 4000, large: 40, connects: 10, catalogs: 5, huge: 7 };
        let http = Command::Table { transport: Transport::Http, rounds: 3, sizes, json: true };
        assert_eq!(parsed("--rounds 3 --json --transport http --huge-calls 7"), Ok(http));
        let Ok(Command::Table { transport, json, .. }) = parsed("--json --transport stdio") else { panic!() };
        assert_eq!((transport, json), (Transport::Stdio, true));
        assert_eq!(
            parsed("--transport http --only huge-sse hyper modern"),
            Ok(Command::HttpOnly {
                case: http::Case::HugeSse,
                client: http::Client::Hyper,
                era: Era::Modern
            })
        );
        assert_eq!(
            parsed("--http-child huge-json reqwest legacy http://127.0.0.1:1/mcp 2"),
            Ok(Command::HttpChild {
                case: http::Case::HugeJson,
                client: http::Client::Reqwest,
                era: Era::Legacy,
                url: "http://127.0.0.1:1/mcp".into(),
                calls: 2,
            })
        );
    }

    #[test]
    fn one_case_is_named_by_case_client_and_era() {
        assert_eq!(
            parsed("--only inflight json modern"),
            Ok(Command::Only { case: Case::InFlight, client: Client::JsonFloor, era: Era::Modern })
        );
        assert_eq!(
            parsed("--memory rmcp legacy"),
            Ok(Command::Memory { client: Client::Rmcp, era: Era::Legacy })
        );
        assert_eq!(parsed("--help"), Ok(Command::Help));
    }

    #[test]
    fn wrong_arguments_are_errors_not_defaults() {
        for (line, said) in [
            ("--round 3", "unknown argument \"--round\""),
            ("--rounds", "--rounds takes a count"),
            ("--rounds three", "not \"three\""),
            ("--rounds 0", "from 1 to"),
            ("--calls 2000000", "from 1 to"),
            ("--rounds 3 --rounds 4", "given twice"),
            ("--only catalg stack legacy", "unknown case \"catalg\""),
            ("--only catalog stack", "three values"),
            ("--only catalog rmpc legacy", "unknown client \"rmpc\""),
            ("--only catalog stack 2025", "unknown era \"2025\""),
            ("--memory pipe legacy", "stack or rmcp"),
            ("--help --rounds 3", "unknown argument \"--help\""),
            ("--transport", "stdio or http"),
            ("--transport tcp", "not \"tcp\""),
            ("--transport http --transport http", "given twice"),
            ("--json --json", "given twice"),
            ("--huge-calls 3", "for --transport http"),
            ("--transport http --only sequential pipe legacy", "unknown client \"pipe\""),
            ("--transport http --only structured stack legacy", "unknown case \"structured\""),
        ] {
            let err = parsed(line).expect_err(line);
            assert!(err.contains(said), "{line}: {err}");
        }
    }
}
