//! A call's progress: a bar when stderr is a terminal, plain lines on
//! stderr otherwise, nothing with `--json`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_stack::CallOpts;
use std::io::IsTerminal;

use crate::terminal::{clean_line, err_line};

/// How a call's progress is shown.
pub(crate) enum ProgressDisplay {
    Bar(ProgressBar),
    Lines,
    Quiet,
}

impl ProgressDisplay {
    pub(crate) fn new(json_out: bool) -> ProgressDisplay {
        if json_out {
            ProgressDisplay::Quiet
        } else if std::io::stderr().is_terminal() {
            // Hidden until the first notification: a call that reports no
            // progress draws nothing.
            let bar = ProgressBar::hidden();
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").expect("a valid template"),
            );
            ProgressDisplay::Bar(bar)
        } else {
            ProgressDisplay::Lines
        }
    }

    /// Call options that route the call's progress here.
    pub(crate) fn opts(&self) -> CallOpts {
        match self {
            ProgressDisplay::Quiet => CallOpts::default(),
            ProgressDisplay::Lines => CallOpts::default().with_progress(|p| {
                let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
                let message = clean_line(p.message.as_deref().unwrap_or_default());
                err_line(&format!("progress {}{total} {message}", p.progress));
            }),
            ProgressDisplay::Bar(bar) => {
                let bar = bar.clone();
                CallOpts::default().with_progress(move |p| {
                    if bar.is_hidden() {
                        bar.set_draw_target(ProgressDrawTarget::stderr());
                    }
                    if let Some(total) = p.total {
                        bar.set_length(total.max(0.0) as u64);
                    }
                    bar.set_position(p.progress.max(0.0) as u64);
                    bar.set_message(clean_line(p.message.as_deref().unwrap_or_default()));
                })
            }
        }
    }

    pub(crate) fn finish(&self) {
        if let ProgressDisplay::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
