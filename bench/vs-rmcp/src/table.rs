//! The medians, and the table they are printed as.

use std::collections::BTreeMap;

use crate::{Case, Client};

/// Every figure of every round, by case and client.
#[derive(Default)]
pub(crate) struct Results {
    figures: BTreeMap<(usize, usize), Vec<f64>>,
}

fn case_index(case: Case) -> usize {
    Case::ALL.iter().position(|c| *c == case).expect("a case")
}

fn client_index(client: Client) -> usize {
    Client::ALL.iter().position(|c| *c == client).expect("a client")
}

impl Results {
    pub(crate) fn add(&mut self, case: Case, client: Client, figure: f64) {
        self.figures.entry((case_index(case), client_index(client))).or_default().push(figure);
    }

    /// Every figure of `client` on `case`, in the order of the rounds.
    fn figures(&self, case: Case, client: Client) -> Option<&Vec<f64>> {
        self.figures.get(&(case_index(case), client_index(client)))
    }

    /// The lowest and highest of mcp-stack's ratios to `other` round by
    /// round. Each round measures every client once, so the `i`-th figure
    /// of one client and the `i`-th of another come from the same round;
    /// the spread shows how much of a ratio of medians is this machine's
    /// noise.
    fn round_ratios(&self, case: Case, other: Client) -> Option<(f64, f64)> {
        let ours = self.figures(case, Client::Stack)?;
        let theirs = self.figures(case, other)?;
        ours.iter().zip(theirs).filter(|(_, b)| **b > 0.0).map(|(a, b)| a / b).fold(None, |range, r| {
            Some(match range {
                None => (r, r),
                Some((low, high)) => (f64::min(low, r), f64::max(high, r)),
            })
        })
    }

    fn median(&self, case: Case, client: Client) -> Option<f64> {
        let mut figures = self.figures(case, client)?.clone();
        figures.sort_by(f64::total_cmp);
        let n = figures.len();
        (n > 0).then(|| if n % 2 == 1 { figures[n / 2] } else { (figures[n / 2 - 1] + figures[n / 2]) / 2.0 })
    }
}

/// What a case's figure is, and how it is shown.
fn describe(case: Case) -> (&'static str, &'static str) {
    match case {
        Case::Sequential => ("sequential tools/call", "calls/s"),
        Case::InFlight => ("32 in flight", "calls/s"),
        Case::Large => ("1 MiB text results", "calls/s"),
        Case::Structured => ("1 MiB structured results", "calls/s"),
        Case::Connect => ("connect to ready", "ms"),
        Case::Catalog => ("1,024-tool catalog to ready", "ms"),
        Case::Memory => ("memory per idle connection", "KiB"),
    }
}

fn shown(case: Case, figure: Option<f64>) -> String {
    match (figure, case) {
        (None, _) => "-".into(),
        (Some(f), Case::Connect | Case::Catalog) => format!("{:.2}", f * 1e3),
        (Some(f), Case::Memory) => format!("{:.1}", f / 1024.0),
        (Some(f), _) => format!("{f:.0}"),
    }
}

/// Prints the table: the medians, then mcp-stack's ratios, and the range
/// of its ratio to rmcp over the rounds. For a rate the ratio is
/// mcp-stack's over the other's (above 1: faster); for a time or a size it
/// is mcp-stack's over the other's too (below 1: less).
pub(crate) fn print(title: &str, results: &Results) {
    println!("{title}");
    let header = [
        "case",
        "unit",
        "mcp-stack",
        "rmcp",
        "JSON floor",
        "pipe floor",
        "/ rmcp",
        "/ JSON floor",
        "/ rmcp by round",
    ];
    let mut rows = vec![header.map(String::from).to_vec()];
    for case in Case::ALL {
        let (name, unit) = describe(case);
        let medians: Vec<Option<f64>> = Client::ALL.iter().map(|c| results.median(case, *c)).collect();
        let ratio = |other: Option<f64>| match (medians[0], other) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
            _ => "-".into(),
        };
        let mut row = vec![name.to_string(), unit.to_string()];
        row.extend(medians.iter().map(|m| shown(case, *m)));
        row.push(ratio(medians[1]));
        row.push(ratio(medians[2]));
        row.push(match results.round_ratios(case, Client::Rmcp) {
            Some((low, high)) => format!("{low:.2}-{high:.2}"),
            None => "-".into(),
        });
        rows.push(row);
    }
    let widths: Vec<usize> =
        (0..header.len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                if i < 2 {
                    format!("{cell:<w$}", w = widths[i])
                } else {
                    format!("{cell:>w$}", w = widths[i])
                }
            })
            .collect();
        println!("  {}", cells.join("  "));
    }
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_ratios_pair_the_figures_of_one_round() {
        let mut results = Results::default();
        // Paired by round the ratios are 2, 1.5 and 0.25; paired any other
        // way (sorted, say, as for the medians) they would not be.
        for (ours, theirs) in [(2.0, 1.0), (3.0, 2.0), (1.0, 4.0)] {
            results.add(Case::Sequential, Client::Stack, ours);
            results.add(Case::Sequential, Client::Rmcp, theirs);
        }
        assert_eq!(results.round_ratios(Case::Sequential, Client::Rmcp), Some((0.25, 2.0)));
        assert_eq!(results.median(Case::Sequential, Client::Stack), Some(2.0));
        // A case nobody measured for the other client has no range.
        results.add(Case::Memory, Client::Stack, 1.0);
        assert_eq!(results.round_ratios(Case::Memory, Client::JsonFloor), None);
    }
}
