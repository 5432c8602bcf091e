//! The bench's command line, read strictly: a misspelt flag or a value
//! that is not a count is an error with the usage, never a silent default
//! (a run of 30 minutes with the wrong sizes is worse than no run).

use crate::{Case, Client, Era, Sizes};

/// What the bench says when asked, or when its arguments are wrong.
pub const USAGE: &str = "\
usage: vs-rmcp [--rounds N] [--calls N] [--large-calls N] [--connects N] [--catalogs N]
       vs-rmcp --only CASE CLIENT ERA
       vs-rmcp --help

  --rounds N        interleaved rounds (7)
  --calls N         sequential calls per round (2000); twice as many in flight
  --large-calls N   1 MiB calls per round (40)
  --connects N      connects per round (10)
  --catalogs N      1,024-tool catalogs per round (5)
  --only            one case for one client, for a profiler:
                    CASE sequential|inflight|large|structured|connect|catalog|memory
                    CLIENT stack|rmcp|json|pipe    ERA legacy|modern
Run it through run.sh, which builds it and pins it to one CPU.";

/// What a command line asks for.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// The table: every case, every client, both eras.
    Table { rounds: usize, sizes: Sizes },
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
    let (mut calls, mut large, mut connects, mut catalogs) = (None, None, None, None);
    while let [flag, rest @ ..] = flags {
        let slot = match *flag {
            "--rounds" => &mut rounds,
            "--calls" => &mut calls,
            "--large-calls" => &mut large,
            "--connects" => &mut connects,
            "--catalogs" => &mut catalogs,
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
    };
    Ok(Command::Table { rounds: rounds.unwrap_or(7), sizes })
}

/// A count of at least 1 and at most a million (a bound on how long a
/// mistyped run can take).
fn count(flag: &str, value: &str) -> Result<usize, String> {
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

fn era_of(name: &str) -> Result<Era, String> {
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
        let sizes = Sizes { sequential: 2000, in_flight: 4000, large: 40, connects: 10, catalogs: 5 };
        assert_eq!(parsed(""), Ok(Command::Table { rounds: 7, sizes }));
    }

    #[test]
    fn each_flag_sets_its_own_size() {
        let sizes = Sizes { sequential: 10, in_flight: 20, large: 3, connects: 4, catalogs: 5 };
        assert_eq!(
            parsed("--catalogs 5 --rounds 2 --calls 10 --connects 4 --large-calls 3"),
            Ok(Command::Table { rounds: 2, sizes })
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
        ] {
            let err = parsed(line).expect_err(line);
            assert!(err.contains(said), "{line}: {err}");
        }
    }
}
