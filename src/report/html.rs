//! The report as one self-contained HTML page: no script, no network, every plot an inline
//! SVG drawn here. Plots carry stable ids (`prizes-along-N`, `gaps-N`, `features-N`,
//! `forms-N` for the N-th block from 1, `ticket-N-…` for its sample tickets).

use super::order::Order;
use super::{
    decimal_p, describe, in_words, statistic_name, table_matches, BlockSection, PrizeRow, Report,
};
use crate::untrusted::markup;
use std::fmt::Write;

/// Colours for the forms of a prize, in turn.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// `text` as a CSS string: quoted, with what could end it or the style element escaped.
fn css_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || " .,:;()%-_".contains(c) {
            out.push(c);
        } else {
            out.push_str(&format!("\\{:x} ", c as u32));
        }
    }
    out.push('"');
    out
}

/// Draws a sample ticket as an SVG element (the game's picture), or `None` if it cannot.
pub type TicketPicture<'a> = dyn Fn(&BlockSection, &str) -> Option<String> + 'a;

/// The page.
pub fn render(report: &Report, picture: &TicketPicture) -> String {
    let mut out = String::new();
    out.push_str(concat!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">",
        "<title>Emission report</title><style>",
        "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}",
        "table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}",
        "td:not(.l){white-space:nowrap}th{background:#f4f4f4}td.l,th.l{text-align:left}.fail{color:#b00;font-weight:bold}.ok{color:#070;font-weight:bold}",
        "svg{display:block;margin:8px 0;background:#fff}h2{border-top:2px solid #444;padding-top:12px}",
        ".tickets{display:flex;flex-wrap:wrap;gap:12px}.tickets figure{margin:0}",
        "code{font-size:12px;word-break:break-all}table.id td{text-align:left}table.id th{text-align:left;white-space:nowrap}",
        ".banner{position:sticky;top:0;background:#7a0000;color:#fff;font-weight:bold;text-align:center;padding:4px;letter-spacing:.05em;z-index:1}",
        ".banner.public{background:#1f4e79}",
        "#verdict{font-size:20px;margin:8px 0}",
        "@media print{body{margin:0;max-width:none}.banner{position:static}",
        "#first-page,#contents{break-after:page}h2{break-before:page;border-top:none}svg{max-width:100%;height:auto}tr,figure{break-inside:avoid}}",
    ));
    // Every printed page says it, in its top and bottom margins (CSS page margin boxes).
    let said = css_string(&report.confidentiality);
    let _ = write!(
        out,
        "@page{{margin:18mm 12mm 16mm 12mm;@top-center{{content:{said};font:bold 10pt sans-serif;color:{colour}}}@bottom-center{{content:{said} \" \\2014  page \" counter(page) \" of \" counter(pages);font:9pt sans-serif;color:{colour}}}}}",
        colour = if report.public { "#1f4e79" } else { "#7a0000" }
    );
    out.push_str("</style></head><body>\n");
    let _ = writeln!(
        out,
        "<div class=\"banner{}\" id=\"confidentiality\">{}</div>",
        if report.public { " public" } else { "" },
        markup(&report.confidentiality)
    );
    first_page(&mut out, report);
    contents(&mut out, report);
    for (i, b) in report.blocks.iter().enumerate() {
        block(&mut out, i + 1, b, picture);
    }
    for (i, e) in report.emissions.iter().enumerate() {
        let _ = writeln!(
            out,
            "<h2 id=\"emission-{}\">Emission {}</h2><p>{} blocks, {} tickets, payout {:.2} %.</p>",
            i + 1,
            markup(&e.name()),
            e.blocks.len(),
            e.tickets,
            e.payout_ratio * 100.0
        );
        if !e.cross_block.is_empty() {
            out.push_str("<p>Do two blocks have their winners at the same places? The overlap of their win indicators against its hypergeometric law (exact mean and variance, normal tail); a pair fails if p after Holm is below 0.01.</p>");
            out.push_str("<table><tr><th>blocks</th><th>correlation of win indicators</th><th>z</th><th>p</th><th>p after Holm</th><th>verdict</th></tr>");
            for (t, r) in e.cross_block.iter().zip(&e.correlations) {
                let [a, b] = t.blocks.unwrap_or_default();
                let _ = write!(
                    out,
                    "<tr{}><td>{a}, {b}</td><td>{r:.4}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    if t.failed { " class=\"fail\"" } else { "" },
                    t.statistic,
                    decimal_p(t.p),
                    decimal_p(t.p_holm),
                    if t.failed { "FAIL" } else { "pass" }
                );
            }
            out.push_str("</table>\n");
        }
    }
    out.push_str("</body></html>\n");
    out
}

fn block(out: &mut String, n: usize, b: &BlockSection, picture: &TicketPicture) {
    let _ = writeln!(out, "<h2 id=\"block-{n}\">{}</h2>", markup(&b.file));
    if !b.verified {
        let _ = writeln!(
            out,
            "<p class=\"fail\">Failed verification; not analysed.</p><ul>"
        );
        for p in &b.problems {
            let _ = writeln!(out, "<li>{}</li>", markup(&p.message));
        }
        out.push_str("</ul>\n");
        return;
    }
    let _ = writeln!(
        out,
        "<p>{} {} €, emission {}, block {}: {} tickets, {} winners. Payout {:.2} % (Article 3: {:.2} %), odds 1 in {:.2} (1 in {:.2}).</p>",
        markup(&b.of.game_name),
        markup(b.stake()),
        b.emission_number(),
        b.number(),
        b.tickets,
        b.winners,
        b.payout_ratio * 100.0,
        b.expected_payout_ratio * 100.0,
        b.odds,
        b.expected_odds
    );
    out.push_str("<h3>Article 3, recomputed from the tickets</h3>");
    article_3(out, &b.prizes);
    if let Some(order) = &b.order {
        if !order.along.is_empty() {
            out.push_str("<h3>Prizes along the block</h3>");
            along(out, n, order);
        }
        out.push_str("<h3>Gaps between winners, against their law</h3>");
        gaps(out, n, order);
    }
    out.push_str("<h3>Features: winners and losers</h3>");
    features(out, n, b);
    if !b.near_misses_asked.is_empty() {
        out.push_str("<h3>Near misses: asked and observed</h3><p>The rates the game definition asks for (its <code>near_miss</code> settings), each a share of the parts it names, on winners and losers alike; beside them the shares this block shows.</p><table><tr><th class=\"l\">near miss</th><th class=\"l\">share of</th><th>asked</th><th>losers</th><th>winners</th></tr>");
        for r in &b.near_misses_asked {
            let _ = write!(
                out,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.2} %</td><td>{:.2} %</td><td>{:.2} %</td></tr>",
                markup(&r.feature),
                markup(&r.of),
                r.asked * 100.0,
                r.losers * 100.0,
                r.winners * 100.0
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("<h3>Forms per prize</h3>");
    forms(out, n, b);
    if let Some(order) = &b.order {
        out.push_str("<h3>Order tests</h3><p>Each fails if its p-value after Holm (over every order test of the report) is below 0.01.</p><table><tr><th class=\"l\">test</th><th class=\"l\">what is tested</th><th class=\"l\">statistic</th><th>value</th><th>df</th><th>p</th><th>p after Holm</th><th>verdict</th><th class=\"l\">null law</th></tr>");
        for t in &order.tests {
            let _ = write!(
                out,
                "<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
                if t.failed { " class=\"fail\"" } else { "" },
                markup(&describe(t)),
                markup(&in_words(t)),
                statistic_name(t),
                t.statistic,
                t.df.map(|d| d.to_string()).unwrap_or_default(),
                decimal_p(t.p),
                decimal_p(t.p_holm),
                if t.failed { "FAIL" } else { "pass" },
                markup(t.null)
            );
        }
        out.push_str("</table>\n");
        match order.longest_losing_streak_at {
            Some(at) => {
                let _ = writeln!(
                    out,
                    "<p>Longest losing streak: {} tickets, from ticket {at}.</p>",
                    order.longest_losing_streak
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "<p>Longest losing streak: {} tickets (where it starts is not in the public version).</p>",
                    order.longest_losing_streak
                );
            }
        }
    }
    if !b.leaks.is_empty() {
        out.push_str("<h3>Leak check</h3><p>Each flags a leak if its p-value after Holm (over every leak test of the report) is below 0.001.</p><table><tr><th class=\"l\">feature</th><th class=\"l\">what is tested</th><th>classes</th><th>chi-square</th><th>df</th><th>p</th><th>p after Holm</th><th>verdict</th></tr>");
        for l in &b.leaks {
            let _ = write!(
                out,
                "<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                if l.flagged { " class=\"fail\"" } else { "" },
                markup(&l.feature),
                markup(&l.what),
                l.classes,
                l.statistic,
                l.df,
                decimal_p(l.p),
                decimal_p(l.p_holm),
                if l.flagged { "LEAK" } else { "pass" }
            );
        }
        out.push_str("</table>\n");
    }
    let dups: u64 = b.duplicates.iter().map(|d| d.count).sum();
    let _ = writeln!(out, "<p>Duplicate layouts: {dups}.</p>");
    if b.samples.iter().any(|(_, l)| !l.is_empty()) {
        out.push_str("<h3>Sample tickets</h3>");
    }
    for (prize, layouts) in &b.samples {
        if layouts.is_empty() {
            continue;
        }
        let _ = write!(out, "<h4>{} €</h4><div class=\"tickets\">", markup(prize));
        for (k, layout) in layouts.iter().enumerate() {
            match picture(b, layout) {
                Some(svg) => {
                    let _ = write!(
                        out,
                        "<figure id=\"ticket-{n}-{}-{k}\">{svg}</figure>",
                        markup(prize)
                    );
                }
                None => {
                    let _ = write!(out, "<figure><code>{}</code></figure>", markup(layout));
                }
            }
        }
        out.push_str("</div>\n");
    }
}

/// The Article 3 table read beside the definition's.
fn article_3(out: &mut String, rows: &[PrizeRow]) {
    out.push_str("<table><tr><th>prize €</th><th>tickets</th><th>Article 3</th><th>total €</th><th>Article 3</th></tr>");
    for r in rows {
        let class = if r.count != r.expected_count {
            " class=\"fail\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            markup(&r.amount),
            r.count,
            r.expected_count,
            markup(&r.total),
            markup(&r.expected_total)
        );
    }
    out.push_str("</table>\n");
}

/// The first page: verdict, tool, identity and Article 3 of each emission and block, failures.
fn first_page(out: &mut String, report: &Report) {
    out.push_str("<section id=\"first-page\"><h1>Emission report</h1>");
    if report.failed {
        let _ = writeln!(
            out,
            "<p class=\"fail\" id=\"verdict\">FAILED: {} failure(s), listed below.</p>",
            report.failures.len()
        );
    } else {
        let _ = writeln!(
            out,
            "<p class=\"ok\" id=\"verdict\">PASSED: every block verified, every test passed.</p>"
        );
    }
    let t = &report.tool;
    let _ = writeln!(
        out,
        "<table class=\"id\" id=\"tool\"><tr><th>tool</th><td>{} {}, commit <code>{}</code>, report format {}</td></tr><tr><th>binary SHA-256</th><td><code>{}</code></td></tr><tr><th>made</th><td>{} on {}</td></tr></table>",
        markup(&t.name),
        markup(&t.version),
        markup(&t.commit),
        report.report_format,
        markup(&t.binary_sha256),
        markup(&t.date),
        markup(&t.host)
    );
    for (i, e) in report.emissions.iter().enumerate() {
        let id = &e.identity;
        let _ = writeln!(
            out,
            "<h3>Emission {} ({}): {} block(s), {} tickets, payout {:.2} %</h3>",
            markup(&e.name()),
            markup(&id.kind),
            e.blocks.len(),
            e.tickets,
            e.payout_ratio * 100.0
        );
        let row = |label: &str, value: &str| {
            format!(
                "<tr><th>{label}</th><td><code>{}</code></td></tr>",
                markup(value)
            )
        };
        let _ = write!(out, "<table class=\"id\" id=\"identity-{}\">", i + 1);
        out.push_str(&row(
            "record SHA-256",
            id.record_sha256.as_deref().unwrap_or("none named"),
        ));
        out.push_str(&row(
            "seal SHA-256",
            e.seal_sha256.as_deref().unwrap_or("none"),
        ));
        let _ = write!(
            out,
            "<tr><th>seal status</th><td>{}</td></tr>",
            markup(&e.seal_status)
        );
        out.push_str(&row("seed commitment", &id.seed_sha256));
        out.push_str(&row("key fingerprint", &id.public_key_sha256));
        out.push_str(&row("definition SHA-256", &id.game_definition_sha256));
        out.push_str(&row("generator", &id.generator));
        out.push_str("</table>\n");
        let _ = writeln!(
            out,
            "<p>Article 3 over the emission: {}</p>",
            if table_matches(&e.prizes) {
                "every count matches the definition."
            } else {
                "<span class=\"fail\">counts differ from the definition.</span>"
            }
        );
        article_3(out, &e.prizes);
        out.push_str("<table><tr><th>block</th><th>tickets</th><th>winners</th><th>prizes €</th><th>payout</th><th>Article 3</th><th class=\"l\">SHA-256 of the CSV and the manifest, Merkle root</th></tr>");
        for b in report.blocks.iter().filter(|b| b.is_of(&e.id.0)) {
            let matches = table_matches(&b.prizes);
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2} %</td><td{}>{}</td><td class=\"l\">CSV <code>{}</code><br>manifest <code>{}</code><br>Merkle <code>{}</code></td></tr>",
                b.number(),
                b.tickets,
                b.winners,
                markup(&b.total_prizes),
                b.payout_ratio * 100.0,
                if matches { "" } else { " class=\"fail\"" },
                if matches { "matches" } else { "DIFFERS" },
                markup(&b.csv_sha256),
                markup(&b.manifest_sha256),
                markup(&b.merkle_root)
            );
        }
        out.push_str("</table>\n");
    }
    let failed_blocks: Vec<&BlockSection> = report.blocks.iter().filter(|b| !b.verified).collect();
    for b in failed_blocks {
        let _ = writeln!(
            out,
            "<p class=\"fail\">{}: failed verification, not analysed.</p>",
            markup(&b.file)
        );
    }
    if report.failed {
        out.push_str("<h3>Failures</h3><ul id=\"failures\">");
        for f in &report.failures {
            let _ = writeln!(out, "<li>{}</li>", markup(f));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<p>Order tests at 99 % confidence and the leak check at p &lt; 0.001, each Holm-corrected over the whole report; null laws are those of a random permutation of each block's fixed prizes.</p></section>\n");
}

fn contents(out: &mut String, report: &Report) {
    out.push_str("<nav id=\"contents\"><h2>Contents</h2><ol><li><a href=\"#first-page\">Verdict, identity, Article 3</a></li>");
    for (i, b) in report.blocks.iter().enumerate() {
        let _ = write!(
            out,
            "<li><a href=\"#block-{}\">Block {}</a></li>",
            i + 1,
            markup(&b.file)
        );
    }
    for (i, e) in report.emissions.iter().enumerate() {
        let _ = write!(
            out,
            "<li><a href=\"#emission-{}\">Emission {}: the blocks together</a></li>",
            i + 1,
            markup(&e.name())
        );
    }
    out.push_str("</ol></nav>\n");
}

/// One row per prize: each ticket as a tick when the prize has few, else the density of its
/// tickets over 100 segments.
fn along(out: &mut String, n: usize, order: &Order) {
    let (left, width, row) = (90.0, 900.0, 18.0);
    let height = row * order.along.len() as f64 + 24.0;
    let _ = write!(
        out,
        "<svg id=\"prizes-along-{n}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-size=\"11\">",
        left + width + 10.0
    );
    let tickets: u64 = order.along.iter().map(|t| t.tickets).sum();
    for (i, tier) in order.along.iter().enumerate() {
        let y = i as f64 * row + 4.0;
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} €</text><rect x=\"{left}\" y=\"{y}\" width=\"{width}\" height=\"{}\" fill=\"#f2f2f2\"/>",
            left - 6.0,
            y + row * 0.7,
            markup(&tier.prize),
            row - 3.0
        );
        if !tier.positions.is_empty() || tier.tickets == 0 {
            for &p in &tier.positions {
                let x = left + width * p as f64 / tickets.max(1) as f64;
                let _ = write!(
                    out,
                    "<rect x=\"{x:.1}\" y=\"{y}\" width=\"1.5\" height=\"{}\" fill=\"#c0392b\"/>",
                    row - 3.0
                );
            }
        } else {
            let most = tier.segments.iter().copied().max().unwrap_or(1).max(1) as f64;
            let cell = width / tier.segments.len() as f64;
            for (j, &c) in tier.segments.iter().enumerate() {
                let _ = write!(
                    out,
                    "<rect x=\"{:.1}\" y=\"{y}\" width=\"{:.2}\" height=\"{}\" fill=\"#1f4e79\" fill-opacity=\"{:.3}\"><title>{c}</title></rect>",
                    left + cell * j as f64,
                    cell,
                    row - 3.0,
                    c as f64 / most
                );
            }
        }
    }
    let _ = write!(
        out,
        "<text x=\"{left}\" y=\"{}\">ticket 0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">ticket {}</text></svg>",
        height - 4.0,
        left + width,
        height - 4.0,
        tickets
    );
}

/// Observed gaps (bars) and the expected counts of their law (dots).
fn gaps(out: &mut String, n: usize, order: &Order) {
    let (left, width, height, bottom) = (60.0, 900.0, 220.0, 24.0);
    let classes = &order.gaps;
    let most = classes
        .iter()
        .map(|c| (c.observed as f64).max(c.expected))
        .fold(1.0, f64::max);
    let bar = width / classes.len().max(1) as f64;
    let scale = |v: f64| (height - bottom) * v / most;
    let _ = write!(
        out,
        "<svg id=\"gaps-{n}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-size=\"11\">",
        left + width + 10.0
    );
    let _ = write!(out, "<text x=\"4\" y=\"12\">{}</text>", most.round() as u64);
    for (i, c) in classes.iter().enumerate() {
        let x = left + bar * i as f64;
        let h = scale(c.observed as f64);
        let _ = write!(
            out,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#4e79a7\"><title>gap {}{}: {} observed, {:.1} expected</title></rect>",
            height - bottom - h,
            (bar - 1.0).max(0.5),
            c.gap,
            if i + 1 == classes.len() { "+" } else { "" },
            c.observed,
            c.expected
        );
        let _ = write!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"#e15759\"/>",
            x + bar / 2.0,
            height - bottom - scale(c.expected)
        );
        if classes.len() <= 40 || i % 5 == 0 {
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>",
                x + bar / 2.0,
                height - 8.0,
                c.gap,
                if i + 1 == classes.len() { "+" } else { "" }
            );
        }
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"12\" text-anchor=\"end\">bars: observed; dots: expected (exact law)</text></svg>",
        left + width
    );
}

/// Per feature, on losers and on winners: the share of tickets with a near miss, and the share
/// of the parts shown outside the wins with a value above 0.
fn features(out: &mut String, n: usize, b: &BlockSection) {
    let rows: Vec<(&str, f64, f64)> = b
        .near_misses
        .iter()
        .chain(&b.features)
        .map(|r| {
            (
                r.feature.as_str(),
                r.losers_share.unwrap_or(r.losers_rate),
                r.winners_share.unwrap_or(r.winners_rate),
            )
        })
        .collect();
    let (left, width, row) = (200.0, 700.0, 26.0);
    let height = row * rows.len() as f64 + 30.0;
    let _ = write!(
        out,
        "<svg id=\"features-{n}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-size=\"11\">",
        left + width + 60.0
    );
    for (i, (name, losers, winners)) in rows.iter().enumerate() {
        let y = i as f64 * row + 4.0;
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + 14.0,
            markup(name)
        );
        for (k, (rate, colour)) in [(losers, "#9c9c9c"), (winners, "#f28e2b")]
            .iter()
            .enumerate()
        {
            let _ = write!(
                out,
                "<rect x=\"{left}\" y=\"{:.1}\" width=\"{:.1}\" height=\"10\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{:.1}\">{:.1} %</text>",
                y + k as f64 * 11.0,
                width * **rate,
                left + width * **rate + 4.0,
                y + k as f64 * 11.0 + 9.0,
                **rate * 100.0
            );
        }
    }
    let _ = write!(
        out,
        "<rect x=\"{left}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"#9c9c9c\"/><text x=\"{}\" y=\"{}\">losers</text><rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"#f28e2b\"/><text x=\"{}\" y=\"{}\">winners</text></svg>",
        height - 16.0,
        left + 14.0,
        height - 7.0,
        left + 80.0,
        height - 16.0,
        left + 94.0,
        height - 7.0
    );
}

/// Per prize, a bar split by form.
fn forms(out: &mut String, n: usize, b: &BlockSection) {
    let prizes: Vec<&str> = b.prizes.iter().map(|p| p.amount.as_str()).collect();
    let (left, width, row) = (90.0, 900.0, 22.0);
    let height = row * prizes.len() as f64 + 10.0;
    let _ = write!(
        out,
        "<svg id=\"forms-{n}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-size=\"10\">",
        left + width + 10.0
    );
    for (i, prize) in prizes.iter().enumerate() {
        let y = i as f64 * row + 4.0;
        let rows: Vec<_> = b.forms.iter().filter(|f| f.prize == *prize).collect();
        let total: u64 = rows.iter().map(|f| f.count).sum();
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">{} €</text>",
            left - 6.0,
            y + 13.0,
            markup(prize)
        );
        let mut x = left;
        for (k, f) in rows.iter().enumerate() {
            let w = width * f.count as f64 / total.max(1) as f64;
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"{}\"><title>{}: {} tickets</title></rect>",
                row - 4.0,
                PALETTE[k % PALETTE.len()],
                markup(&f.form),
                f.count
            );
            if w > 60.0 {
                let label: String = f.form.chars().take((w / 6.0) as usize).collect();
                let _ = write!(
                    out,
                    "<text x=\"{:.1}\" y=\"{}\" fill=\"#fff\">{}</text>",
                    x + 3.0,
                    y + 12.0,
                    markup(&label)
                );
            }
            x += w;
        }
    }
    out.push_str(
        "</svg>\n<table><tr><th>prize €</th><th class=\"l\">form</th><th>tickets</th></tr>",
    );
    for f in &b.forms {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"l\">{}</td><td>{}</td></tr>",
            markup(&f.prize),
            markup(&f.form),
            f.count
        );
    }
    out.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::markup;

    #[test]
    fn text_from_files_is_escaped() {
        assert_eq!(
            markup("<script>\"a\" & 'b'\u{1b}</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;\\u{1b}&lt;/script&gt;"
        );
        // A name that would reverse the page's text, or hide part of it.
        assert_eq!(
            markup("a\u{202e}b\u{2066}c\u{200b}d\u{7}"),
            "a\\u{202e}b\\u{2066}c\\u{200b}d\\u{7}"
        );
    }
}
