//! The report as text for an 80-column terminal: a first page (verdict, identity, the
//! Article 3 tables, the failures), a list of contents, then the detail of each block and
//! emission, every test described in words.

use super::{
    decimal_p, describe, in_words, statistic_name, table_matches, BlockSection, EmissionSection,
    Report,
};
use crate::money::grouped;
use crate::untrusted::{defanged, shown_text, SHOWN_CHARS};
use std::fmt::Write;

/// Longest form text shown (the JSON has it whole).
const FORM_WIDTH: usize = 46;
/// Width of the text.
const WIDTH: usize = 80;

/// The report as lines of at most 80 characters (file names excepted). What comes from a file
/// is escaped where it is written ([`shown_text`]; the problems and file names come escaped),
/// and the whole text passes [`defanged`] on its way out, the last guard before a terminal.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    banner(&mut out, report);
    first_page(&mut out, report);
    out.push('\n');
    contents(&mut out, report);
    out.push('\n');
    for (i, b) in report.blocks.iter().enumerate() {
        let _ = writeln!(out, "{}. BLOCK", i + 2);
        block(&mut out, b);
        out.push('\n');
    }
    for (i, e) in report.emissions.iter().enumerate() {
        let _ = writeln!(out, "{}. EMISSION", report.blocks.len() + i + 2);
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
    banner(&mut out, report);
    defanged(&out)
}

/// The confidentiality line, wrapped: first and last thing of the text.
fn banner(out: &mut String, report: &Report) {
    let text = if report.public {
        report.confidentiality.clone()
    } else {
        report.confidentiality.to_uppercase()
    };
    wrap(out, &format!("*** {text} ***"), "");
}

/// `text` in lines of at most [`WIDTH`] characters, each starting with `indent`.
fn wrap(out: &mut String, text: &str, indent: &str) {
    let mut line = String::from(indent);
    let mut empty = true;
    for word in text.split(' ') {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            let _ = writeln!(out, "{line}");
            line = String::from(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    let _ = writeln!(out, "{line}");
}

/// Verdict, tool, identity and Article 3 of every emission and block, failures.
fn first_page(out: &mut String, report: &Report) {
    if report.failed {
        let _ = writeln!(
            out,
            "EMISSION REPORT: FAILED ({} failure(s), listed below)",
            report.failures.len()
        );
    } else {
        let _ = writeln!(
            out,
            "EMISSION REPORT: PASSED (every block verified, every test passed)"
        );
    }
    let t = &report.tool;
    let _ = writeln!(out, "tool      {} {}", t.name, t.version);
    let _ = writeln!(out, "commit    {}", t.commit);
    let _ = writeln!(out, "binary    {}", t.binary_sha256);
    let _ = writeln!(out, "made      {} on {}", t.date, t.host);
    for e in &report.emissions {
        let _ = writeln!(
            out,
            "emission {} ({}): {} block(s), {} tickets, payout {:.2} %",
            e.name(),
            e.identity.kind,
            e.blocks.len(),
            grouped(e.tickets),
            e.payout_ratio * 100.0
        );
        let id = &e.identity;
        let _ = writeln!(
            out,
            "  record    {}",
            id.record_sha256
                .as_deref()
                .unwrap_or("none named (manifest before format 3)")
        );
        if let Some(sha) = &e.seal_sha256 {
            let _ = writeln!(out, "  seal      {sha}");
        }
        wrap(out, &e.seal_status, "            ");
        let _ = writeln!(out, "  seed      {}", id.seed_sha256);
        let _ = writeln!(out, "  key       {}", id.public_key_sha256);
        let _ = writeln!(out, "  game      {}", id.game_definition_sha256);
        let _ = writeln!(out, "  generator {}", shown_text(&id.generator, 60));
        wrap(
            out,
            "(record: SHA-256 of emission.json; seed: the seed commitment, SHA-256 of the seed; key: the key fingerprint, SHA-256 of the public key; game: SHA-256 of the definition)",
            "  ",
        );
        let _ = writeln!(
            out,
            "  Article 3 over the emission: {}",
            if table_matches(&e.prizes) {
                "every count matches"
            } else {
                "counts DIFFER (marked ≠)"
            }
        );
        table(out, &e.prizes);
        let _ = writeln!(
            out,
            "  block     tickets   winners      prizes €    payout  Article 3"
        );
        for b in report.blocks.iter().filter(|b| b.is_of(&e.id.0)) {
            let _ = writeln!(
                out,
                "  {:>5} {:>11} {:>9} {:>13} {:>7.2} %  {}",
                b.number(),
                grouped(b.tickets),
                grouped(b.winners),
                b.total_prizes,
                b.payout_ratio * 100.0,
                if table_matches(&b.prizes) {
                    "matches"
                } else {
                    "DIFFERS"
                }
            );
            let _ = writeln!(out, "    csv      {}", b.csv_sha256);
            let _ = writeln!(out, "    manifest {}", b.manifest_sha256);
            let _ = writeln!(out, "    merkle   {}", b.merkle_root);
        }
    }
    for b in report.blocks.iter().filter(|b| !b.verified) {
        let _ = writeln!(out, "{}: FAILED VERIFICATION, not analysed", b.file);
    }
    if report.failed {
        let _ = writeln!(out, "failures:");
        for f in &report.failures {
            wrap(out, &format!("- {f}"), "  ");
        }
    }
}

fn contents(out: &mut String, report: &Report) {
    let _ = writeln!(out, "CONTENTS");
    let _ = writeln!(out, "  1. verdict, identity, Article 3 (above)");
    for (i, b) in report.blocks.iter().enumerate() {
        let _ = writeln!(out, "  {}. block {}", i + 2, b.file);
    }
    for (i, e) in report.emissions.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {}. emission {}: the blocks together",
            report.blocks.len() + i + 2,
            e.name()
        );
    }
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
        shown_text(&b.of.game_name, SHOWN_CHARS),
        b.stake(),
        b.emission_number(),
        b.number(),
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
    if !b.near_misses_asked.is_empty() {
        let _ = writeln!(
            out,
            "  near misses asked and observed (share of parts)   asked    losers   winners"
        );
        for r in &b.near_misses_asked {
            let _ = writeln!(
                out,
                "    {:<44} {:>7.2} % {:>7.2} % {:>7.2} %",
                r.feature,
                r.asked * 100.0,
                r.losers * 100.0,
                r.winners * 100.0
            );
            let _ = writeln!(out, "      {}", r.of);
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
                Some(l) if l.flagged => format!("{:>9} LEAK", decimal_p(l.p_holm)),
                Some(l) => format!("{:>9}", decimal_p(l.p_holm)),
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
            "  order tests (each fails if p after Holm is below 0.01):"
        );
        for t in &o.tests {
            wrap(out, &format!("{}: {}", describe(t), in_words(t)), "    ");
            let df = t.df.map(|d| format!(", df {d}")).unwrap_or_default();
            wrap(
                out,
                &format!(
                    "{} {:.3}{df}, p {}, p after Holm {}: {}",
                    statistic_name(t),
                    t.statistic,
                    decimal_p(t.p),
                    decimal_p(t.p_holm),
                    if t.failed { "FAIL" } else { "pass" }
                ),
                "      ",
            );
            wrap(out, &format!("null law: {}", t.null), "      ");
        }
        match o.longest_losing_streak_at {
            Some(at) => {
                let _ = writeln!(
                    out,
                    "  longest losing streak: {} tickets from ticket {}",
                    grouped(o.longest_losing_streak),
                    grouped(at)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "  longest losing streak: {} tickets (where: not in the public version)",
                    grouped(o.longest_losing_streak)
                );
            }
        }
    }
    if !b.leaks.is_empty() {
        let _ = writeln!(
            out,
            "  leak checks (each flags a leak if p after Holm is below 0.001):"
        );
        for l in &b.leaks {
            wrap(out, &format!("{}: {}", l.feature, l.what), "    ");
            wrap(
                out,
                &format!(
                    "chi-square {:.3}, df {}, p {}, p after Holm {}: {}",
                    l.statistic,
                    l.df,
                    decimal_p(l.p),
                    decimal_p(l.p_holm),
                    if l.flagged { "LEAK" } else { "pass" }
                ),
                "      ",
            );
        }
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
        "emission {}: {} blocks, {} tickets, payout {:.2} %",
        e.name(),
        e.blocks.len(),
        grouped(e.tickets),
        e.payout_ratio * 100.0
    );
    if !e.problems.is_empty() {
        for p in &e.problems {
            wrap(out, &format!("- {p}"), "  ");
        }
    }
    if e.blocks.len() > 1 {
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
                "    correlation {:.4}, p after Holm {}{}",
                r,
                decimal_p(t.p_holm),
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
