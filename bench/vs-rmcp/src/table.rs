//! The medians, the table they are printed as, and the same figures as
//! JSON records (`--json`), for both transports.
//!
//! Cases and clients are indices into a [`Layout`], which names them: the
//! first client is always mcp-stack, the second rmcp, the third the floor
//! mcp-stack is compared with (the JSON floor over stdio, the reqwest floor
//! over HTTP).
//!
//! # `--json`
//!
//! One JSON object per line (JSON Lines; keys in alphabetical order, shown
//! here on two lines), one per case, era, transport and client that has a
//! figure, and nothing else on stdout (progress goes to stderr). Clients:
//! `mcp-stack`, `rmcp`, `json-floor`, `pipe-floor` (stdio),
//! `reqwest-floor`, `hyper-floor` (HTTP):
//!
//! ```text
//! {"case":"sequential","client":"rmcp","era":"2025-11-25","median":4085.2,"rounds":5,
//!  "stack_ratio":{"of_medians":2.55,"round_high":2.79,"round_low":2.44},"transport":"http","unit":"calls/s"}
//! ```
//!
//! `median` is in `unit` (the table's unit, unrounded). `stack_ratio` is
//! mcp-stack's figure over this client's, as in the table's ratio columns
//! (above 1 for a rate: mcp-stack is faster; below 1 for a time or a size:
//! mcp-stack takes less): of the two medians, and the lowest and highest
//! of the ratios of the figures of one round. It is `null` on mcp-stack's
//! own records.

use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Every figure of every round, by case and client (indices into a
/// [`Layout`]).
#[derive(Default)]
pub(crate) struct Results {
    figures: BTreeMap<(usize, usize), Vec<f64>>,
}

impl Results {
    pub(crate) fn add(&mut self, case: usize, client: usize, figure: f64) {
        self.figures.entry((case, client)).or_default().push(figure);
    }

    /// Every figure of `client` on `case`, in the order of the rounds.
    fn figures(&self, case: usize, client: usize) -> Option<&Vec<f64>> {
        self.figures.get(&(case, client))
    }

    /// The lowest and highest of mcp-stack's (client 0's) ratios to
    /// `other` round by round. Each round measures every client once, so
    /// the `i`-th figure of one client and the `i`-th of another come from
    /// the same round; the spread shows how much of a ratio of medians is
    /// this machine's noise.
    fn round_ratios(&self, case: usize, other: usize) -> Option<(f64, f64)> {
        let ours = self.figures(case, 0)?;
        let theirs = self.figures(case, other)?;
        ours.iter().zip(theirs).filter(|(_, b)| **b > 0.0).map(|(a, b)| a / b).fold(None, |range, r| {
            Some(match range {
                None => (r, r),
                Some((low, high)) => (f64::min(low, r), f64::max(high, r)),
            })
        })
    }

    fn median(&self, case: usize, client: usize) -> Option<f64> {
        let mut figures = self.figures(case, client)?.clone();
        figures.sort_by(f64::total_cmp);
        let n = figures.len();
        (n > 0).then(|| if n % 2 == 1 { figures[n / 2] } else { (figures[n / 2 - 1] + figures[n / 2]) / 2.0 })
    }

    fn ratio_of_medians(&self, case: usize, other: usize) -> Option<f64> {
        match (self.median(case, 0), self.median(case, other)) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        }
    }
}

/// One row of a table: a case.
pub(crate) struct Row {
    /// Its name in JSON records.
    pub key: &'static str,
    /// Its name in the table.
    pub name: &'static str,
    pub unit: &'static str,
    /// What a figure is multiplied by to be in `unit` (figures are kept in
    /// calls/s, seconds and bytes).
    pub scale: f64,
    /// Decimals shown in the table.
    pub decimals: usize,
}

/// What a table shows: its cases, its clients (keys for JSON, column
/// names), and which columns of ratios.
pub(crate) struct Layout {
    pub transport: &'static str,
    pub era: &'static str,
    pub title: &'static str,
    pub rows: Vec<Row>,
    /// (key, column name); 0 is mcp-stack, 1 rmcp, 2 the floor compared.
    pub clients: Vec<(&'static str, &'static str)>,
    /// A last column with the range of mcp-stack's ratio to the floor
    /// round by round.
    pub floor_by_round: bool,
}

fn range(range: Option<(f64, f64)>) -> String {
    match range {
        Some((low, high)) => format!("{low:.2}-{high:.2}"),
        None => "-".into(),
    }
}

/// The table: the medians, then mcp-stack's ratios, and the range of its
/// ratio to rmcp (and to the floor, if the layout says so) over the
/// rounds. For a rate the ratio is mcp-stack's over the other's (above 1:
/// faster); for a time or a size it is mcp-stack's over the other's too
/// (below 1: less).
pub(crate) fn render(layout: &Layout, results: &Results) -> String {
    let floor = layout.clients[2].1;
    let mut header: Vec<String> = vec!["case".into(), "unit".into()];
    header.extend(layout.clients.iter().map(|(_, column)| column.to_string()));
    header.extend(["/ rmcp".to_string(), format!("/ {floor}"), "/ rmcp by round".into()]);
    if layout.floor_by_round {
        header.push(format!("/ {floor} by round"));
    }
    let mut rows = vec![header];
    for (case, spec) in layout.rows.iter().enumerate() {
        let mut row = vec![spec.name.to_string(), spec.unit.to_string()];
        for client in 0..layout.clients.len() {
            row.push(match results.median(case, client) {
                Some(m) => format!("{:.*}", spec.decimals, m * spec.scale),
                None => "-".into(),
            });
        }
        for other in [1, 2] {
            row.push(results.ratio_of_medians(case, other).map_or("-".into(), |r| format!("{r:.2}")));
        }
        row.push(range(results.round_ratios(case, 1)));
        if layout.floor_by_round {
            row.push(range(results.round_ratios(case, 2)));
        }
        rows.push(row);
    }
    let columns = rows[0].len();
    let widths: Vec<usize> =
        (0..columns).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = format!("{}\n", layout.title);
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
        out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
    }
    out
}

/// The JSON records of a table (see the [module docs](self)), one per case
/// and client that has a figure.
pub(crate) fn records(layout: &Layout, results: &Results) -> Vec<Value> {
    let mut out = Vec::new();
    for (case, spec) in layout.rows.iter().enumerate() {
        for (client, (key, _)) in layout.clients.iter().enumerate() {
            let (Some(median), Some(figures)) = (results.median(case, client), results.figures(case, client))
            else {
                continue;
            };
            let stack_ratio = match (client, results.ratio_of_medians(case, client)) {
                (0, _) | (_, None) => Value::Null,
                (_, Some(of_medians)) => {
                    let (low, high) = results.round_ratios(case, client).unwrap_or((of_medians, of_medians));
                    json!({ "of_medians": of_medians, "round_low": low, "round_high": high })
                }
            };
            out.push(json!({
                "transport": layout.transport,
                "era": layout.era,
                "case": spec.key,
                "client": key,
                "unit": spec.unit,
                "median": median * spec.scale,
                "rounds": figures.len(),
                "stack_ratio": stack_ratio,
            }));
        }
    }
    out
}

/// Prints the table, or (`json`) its records one per line.
pub(crate) fn print(layout: &Layout, results: &Results, json: bool) {
    if json {
        for record in records(layout, results) {
            println!("{record}");
        }
    } else {
        println!("{}", render(layout, results));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        let row = |key, scale, decimals| Row { key, name: key, unit: "u", scale, decimals };
        Layout {
            transport: "stdio",
            era: "2025-11-25",
            title: "title",
            rows: vec![row("rate", 1.0, 0), row("time", 1e3, 2)],
            clients: vec![("stack", "mcp-stack"), ("rmcp", "rmcp"), ("json", "JSON floor")],
            floor_by_round: true,
        }
    }

    #[test]
    fn round_ratios_pair_the_figures_of_one_round() {
        let mut results = Results::default();
        // Paired by round the ratios are 2, 1.5 and 0.25; paired any other
        // way (sorted, say, as for the medians) they would not be.
        for (ours, theirs) in [(2.0, 1.0), (3.0, 2.0), (1.0, 4.0)] {
            results.add(0, 0, ours);
            results.add(0, 1, theirs);
        }
        assert_eq!(results.round_ratios(0, 1), Some((0.25, 2.0)));
        assert_eq!(results.median(0, 0), Some(2.0));
        // A case nobody measured for the other client has no range.
        results.add(1, 0, 1.0);
        assert_eq!(results.round_ratios(1, 2), None);
    }

    #[test]
    fn records_carry_the_median_in_the_unit_and_the_ratio_range() {
        let mut results = Results::default();
        for (ours, theirs) in [(0.002, 0.004), (0.003, 0.002)] {
            results.add(1, 0, ours);
            results.add(1, 1, theirs);
        }
        let records = records(&layout(), &results);
        assert_eq!(records.len(), 2, "one per client with a figure: {records:?}");
        assert_eq!(records[0]["client"], "stack");
        assert_eq!(records[0]["case"], "time");
        assert_eq!(records[0]["stack_ratio"], Value::Null);
        assert!((records[0]["median"].as_f64().unwrap() - 2.5).abs() < 1e-9, "in ms");
        assert_eq!(records[1]["client"], "rmcp");
        assert_eq!(records[1]["rounds"], 2);
        assert_eq!(records[1]["transport"], "stdio");
        let ratio = &records[1]["stack_ratio"];
        assert!((ratio["of_medians"].as_f64().unwrap() - 2.5 / 3.0).abs() < 1e-9);
        assert!((ratio["round_low"].as_f64().unwrap() - 0.5).abs() < 1e-9);
        assert!((ratio["round_high"].as_f64().unwrap() - 1.5).abs() < 1e-9);
        // Each record is one line of JSON.
        assert!(!records[1].to_string().contains('\n'));
    }

    #[test]
    fn the_table_shows_every_column_and_dashes_for_no_figure() {
        let mut results = Results::default();
        results.add(0, 0, 10.0);
        results.add(0, 1, 5.0);
        results.add(0, 2, 20.0);
        let table = render(&layout(), &results);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "title");
        assert!(lines[1].contains("/ JSON floor by round"), "{table}");
        let rate: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(rate, ["rate", "u", "10", "5", "20", "2.00", "0.50", "2.00-2.00", "0.50-0.50"]);
        let time: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(time, ["time", "u", "-", "-", "-", "-", "-", "-", "-"]);
    }
}
