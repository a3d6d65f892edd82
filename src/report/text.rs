//! The report as text for an 80-column terminal.

use super::{describe, BlockSection, EmissionSection, Report};
use crate::untrusted::{defanged, shown_text, SHOWN_CHARS};
use std::fmt::Write;

/// Longest form text shown (the JSON has it whole).
const FORM_WIDTH: usize = 46;

/// The report as lines of at most 80 characters (file names excepted). What comes from a file
/// is escaped where it is written ([`shown_text`]; the problems and file names come escaped),
/// and the whole text passes [`defanged`] on its way out, the last guard before a terminal.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for b in &report.blocks {
        block(&mut out, b);
        out.push('\n');
    }
    for e in &report.emissions {
        emission(&mut out, e);
        out.push('\n');
    }
    let order_tests: usize = report
        .blocks
        .iter()
        .filter_map(|b| b.order.as_ref())
        .map(|o| o.tests.len())
        .sum::<usize>()
        + report
            .emissions
            .iter()
            .map(|e| e.cross_block.len())
            .sum::<usize>();
    let leak_tests: usize = report.blocks.iter().map(|b| b.leaks.len()).sum();
    let _ = writeln!(
        out,
        "{order_tests} order tests (Holm, 99 %), {leak_tests} leak tests (Holm, p < 0.001)"
    );
    if report.failed {
        let _ = writeln!(out, "FAILED:");
        for f in &report.failures {
            let _ = writeln!(out, "  - {f}");
        }
    } else {
        let _ = writeln!(out, "every test passed");
    }
    defanged(&out)
}

/// Digits grouped by three with spaces: 7 500 000.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

fn block(out: &mut String, b: &BlockSection) {
    if !b.verified {
        let _ = writeln!(out, "{}: FAILED VERIFICATION, not analysed", b.file);
        for p in &b.problems {
            let _ = writeln!(out, "  - {p}");
        }
        return;
    }
    let _ = writeln!(out, "{}", b.file);
    let _ = writeln!(
        out,
        "{} {} €, emission {}, block {}: {} tickets, verified",
        shown_text(&b.game_name, SHOWN_CHARS),
        b.stake,
        b.emission,
        b.block,
        grouped(b.tickets)
    );
    table(out, &b.prizes);
    let _ = writeln!(
        out,
        "  payout {:.2} % (Article 3: {:.2} %), odds 1 in {:.2} (1 in {:.2})",
        b.payout_ratio * 100.0,
        b.expected_payout_ratio * 100.0,
        b.odds,
        b.expected_odds
    );
    let _ = writeln!(out, "  forms per prize:");
    for f in &b.forms {
        let _ = writeln!(
            out,
            "    {:>9} €  {:<w$} {:>12}",
            f.prize,
            cut(&f.form, FORM_WIDTH),
            grouped(f.count),
            w = FORM_WIDTH
        );
    }
    if !b.near_misses.is_empty() {
        let _ = writeln!(
            out,
            "  near misses (tickets with one)          losers   winners"
        );
        for r in &b.near_misses {
            let _ = writeln!(
                out,
                "    {:<34} {:>8.2} % {:>7.2} %",
                r.feature,
                r.losers_rate * 100.0,
                r.winners_rate * 100.0
            );
        }
    }
    if !b.features.is_empty() {
        let _ = writeln!(
            out,
            "  seen outside the wins (parts > 0)       losers   winners   leak p (Holm)"
        );
        for r in &b.features {
            let leak = b.leaks.iter().find(|l| l.feature == r.feature);
            let verdict = match leak {
                Some(l) if l.flagged => format!("{:>9.2e} LEAK", l.p_holm),
                Some(l) => format!("{:>9.2e}", l.p_holm),
                None => "   untested".into(),
            };
            let _ = writeln!(
                out,
                "    {:<34} {:>8.2} % {:>7.2} % {verdict}",
                r.feature,
                r.losers_share.unwrap_or(r.losers_rate) * 100.0,
                r.winners_share.unwrap_or(r.winners_rate) * 100.0
            );
        }
    }
    if let Some(o) = &b.order {
        let _ = writeln!(
            out,
            "  order tests                        statistic        p   p Holm"
        );
        for t in &o.tests {
            let _ = writeln!(
                out,
                "    {:<30} {:>10.3} {:>8.1e} {:>8.1e}{}",
                cut(&describe(t), 30),
                t.statistic,
                t.p,
                t.p_holm,
                if t.failed { " FAIL" } else { "" }
            );
        }
        let _ = writeln!(
            out,
            "  longest losing streak: {} tickets from ticket {}",
            grouped(o.longest_losing_streak),
            grouped(o.longest_losing_streak_at)
        );
    }
    if b.duplicates.is_empty() {
        let _ = writeln!(out, "  duplicate layouts: none");
    } else {
        let list: Vec<String> = b
            .duplicates
            .iter()
            .map(|d| format!("{} at {} €", grouped(d.count), d.prize))
            .collect();
        let total: u64 = b.duplicates.iter().map(|d| d.count).sum();
        let _ = writeln!(
            out,
            "  duplicate layouts: {} ({})",
            grouped(total),
            list.join(", ")
        );
    }
}

fn table(out: &mut String, rows: &[super::PrizeRow]) {
    let _ = writeln!(
        out,
        "  prize €      tickets   Article 3         total €      Article 3"
    );
    for r in rows {
        let mark = if r.count != r.expected_count {
            " ≠"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {:>7} {:>12} {:>11} {:>15} {:>14}{mark}",
            r.amount,
            grouped(r.count),
            grouped(r.expected_count),
            r.total,
            r.expected_total
        );
    }
}

fn emission(out: &mut String, e: &EmissionSection) {
    let _ = writeln!(
        out,
        "emission {}/{}/e{:04}: {} blocks, {} tickets, payout {:.2} %",
        e.game,
        e.stake,
        e.emission,
        e.blocks.len(),
        grouped(e.tickets),
        e.payout_ratio * 100.0
    );
    if e.blocks.len() > 1 {
        table(out, &e.prizes);
        let worst = e
            .cross_block
            .iter()
            .zip(&e.correlations)
            .min_by(|a, b| a.0.p.total_cmp(&b.0.p));
        if let Some((t, r)) = worst {
            let _ = writeln!(
                out,
                "  win indicators, {} pairs of blocks; strongest: blocks {}",
                e.cross_block.len(),
                t.blocks
                    .map(|[a, b]| format!("{a} and {b}"))
                    .unwrap_or_default()
            );
            let _ = writeln!(
                out,
                "    correlation {:.4}, p Holm {:.1e}{}",
                r,
                t.p_holm,
                if e.cross_block.iter().any(|t| t.failed) {
                    " FAIL"
                } else {
                    ""
                }
            );
        }
    }
}

/// At most `width` characters of `text`.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(width - 1).collect();
        s.push('…');
        s
    }
}
