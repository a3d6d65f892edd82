//! Tickets as pictures: a self-contained SVG of one ticket as a player sees it, hexagonal cells
//! for the hive games, a calendar of twelve months and a four-leaf clover for Année de la
//! chance, with the winning parts marked and how the ticket decodes written below.
//!
//! `show --svg` writes one; `report --html` embeds sample tickets. The SVG uses no script, no
//! external font, image or style sheet; every text it holds is XML-escaped. It is drawn from
//! an [`Explanation`], so what it marks is what the decoder reads.

use crate::game::{Game, Stake};
use crate::mechanic::explain::{Board, BonusStage, Clover, Explanation, Hive, Month, MONTH_NAMES};
use crate::mechanic::LayoutError;
use crate::money::canonical;
use crate::untrusted::markup;
use std::fmt::Write as _;

/// A layout that cannot be drawn: the explainer refused it (the rule it breaks).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid layout: {0}")]
pub struct PictureError(pub LayoutError);

/// The SVG picture of a layout of this game and stake, titled with the game and stake.
pub fn ticket_svg(game: &Game, stake: &Stake, layout: &str) -> Result<String, PictureError> {
    let explanation = stake
        .mechanic
        .explainer()
        .explain(layout)
        .map_err(PictureError)?;
    Ok(explanation_svg(
        &format!("{} · {} €", game.name, canonical(stake.price)),
        "",
        &explanation,
    ))
}

/// The SVG picture of an explained ticket, with a title (the game) and a subtitle (e.g. the
/// serial; may be empty).
pub fn explanation_svg(title: &str, subtitle: &str, e: &Explanation) -> String {
    let mut body = String::new();
    let (width, content_height) = match &e.board {
        Board::Hives { hives, bonus } => draw_hives(&mut body, hives, bonus.as_ref()),
        Board::Calendar {
            months,
            clover,
            pictures,
        } => draw_calendar(&mut body, months, clover, pictures),
    };
    // The decoding, one line per winning part, then the total.
    let mut lines: Vec<String> = e.wins.clone();
    lines.push(format!("total {} € ({})", canonical(e.prize), e.form));
    let top = HEADER + content_height;
    let height = top + 16.0 + 20.0 * lines.len() as f64 + 14.0;
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="DejaVu Sans, Verdana, Arial, sans-serif">
<title>{}</title>
<defs><linearGradient id="paper" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#fff8e1"/><stop offset="1" stop-color="#ffe8a3"/></linearGradient></defs>
<rect class="ticket" x="2" y="2" width="{:.0}" height="{:.0}" rx="18" fill="url(#paper)" stroke="#7a4b12" stroke-width="4"/>
<rect x="2" y="2" width="{:.0}" height="56" rx="18" fill="#7a4b12"/>
<rect x="2" y="40" width="{:.0}" height="18" fill="#7a4b12"/>
<text x="{:.0}" y="32" text-anchor="middle" font-size="22" font-weight="bold" fill="#ffd54a">{}</text>
<text x="{:.0}" y="51" text-anchor="middle" font-size="12" fill="#ffeec2">{}</text>
"##,
        markup(&format!("{title} {subtitle}")),
        width - 4.0,
        height - 4.0,
        width - 4.0,
        width - 4.0,
        width / 2.0,
        markup(title),
        width / 2.0,
        markup(subtitle),
    );
    out.push_str(&body);
    let mut y = top + 20.0;
    let _ = writeln!(
        out,
        r##"<line x1="24" y1="{:.0}" x2="{:.0}" y2="{:.0}" stroke="#7a4b12" stroke-dasharray="6 4"/>"##,
        top + 2.0,
        width - 24.0,
        top + 2.0
    );
    for (i, line) in lines.iter().enumerate() {
        let last = i + 1 == lines.len();
        let _ = writeln!(
            out,
            r##"<text class="decoding" x="28" y="{y:.0}" font-size="15" {}fill="{}">{}</text>"##,
            if last { r#"font-weight="bold" "# } else { "" },
            if e.prize.is_zero() || !last {
                "#3b2508"
            } else {
                "#1b7a2b"
            },
            markup(line)
        );
        y += 20.0;
    }
    out.push_str("</svg>\n");
    out
}

/// Height of the title band.
const HEADER: f64 = 64.0;
/// Hexagon radius (centre to corner).
const R: f64 = 19.0;
/// Cells in the longest row.
const WIDEST: usize = 7;

fn hex_w() -> f64 {
    R * 3f64.sqrt()
}

/// Draws the hives two by two and the bonus stage; returns (width, height used).
fn draw_hives(out: &mut String, hives: &[Hive], bonus: Option<&BonusStage>) -> (f64, f64) {
    let hive_w = 86.0 + WIDEST as f64 * hex_w() + 18.0;
    let hive_h = 44.0 + 6.0 * 1.5 * R + 2.0 * R + 36.0;
    let columns = if hives.len() > 1 { 2 } else { 1 };
    let width = 24.0 + columns as f64 * (hive_w + 16.0) + 8.0;
    let mut y = HEADER + 8.0;
    for (i, hive) in hives.iter().enumerate() {
        let x = 24.0 + (i % 2) as f64 * (hive_w + 16.0);
        let hy = y + (i / 2) as f64 * (hive_h + 12.0);
        draw_hive(out, hive, x, hy, hive_w, hive_h);
    }
    let rows = hives.len().div_ceil(2);
    y += rows as f64 * (hive_h + 12.0);
    if let Some(b) = bonus {
        y += draw_bonus(out, b, 24.0, y, width - 48.0);
    }
    (width, y - HEADER)
}

fn draw_hive(out: &mut String, hive: &Hive, x: f64, y: f64, w: f64, h: f64) {
    let _ = writeln!(
        out,
        r##"<g class="hive"><rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" rx="14" fill="#f2b632" stroke="#8a5a00" stroke-width="2.5"/>"##
    );
    let mut title = hive.name.clone();
    if let Some(bee) = hive.bee_amount {
        let _ = write!(title, " · bee {} €", canonical(bee));
    }
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{:.1}" font-size="15" font-weight="bold" fill="#4a2c00">{}</text>"##,
        x + 14.0,
        y + 22.0,
        markup(&title)
    );
    if hive.bee_wins {
        let _ = writeln!(
            out,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="13" font-weight="bold" fill="#1b5e20">bee wins!</text>"##,
            x + w - 14.0,
            y + 22.0
        );
    }
    let honey_wins = !hive.honey_win.is_zero();
    let cells_x = x + 86.0;
    for (r, row) in hive.rows.iter().enumerate() {
        let cy = y + 44.0 + R + r as f64 * 1.5 * R;
        let offset = (WIDEST - row.cells.len().min(WIDEST)) as f64 * hex_w() / 2.0;
        let wins = row.wins();
        // The row's amount, on a tag; a winning row's tag is green.
        let _ = writeln!(
            out,
            r##"<rect x="{:.1}" y="{:.1}" width="70" height="22" rx="11" fill="{}" stroke="#8a5a00"/><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13" font-weight="bold" fill="{}">{} €</text>"##,
            x + 10.0,
            cy - 11.0,
            if wins { "#2e7d32" } else { "#fff3c4" },
            x + 45.0,
            cy + 4.5,
            if wins { "#ffffff" } else { "#4a2c00" },
            canonical(row.amount)
        );
        for (c, &cell) in row.cells.iter().enumerate() {
            let cx = cells_x + offset + hex_w() / 2.0 + c as f64 * hex_w();
            let marked = (wins && (cell == 'P' || row.multiplier.is_some() && is_multiplier(cell)))
                || (honey_wins && cell == 'H')
                || (hive.bee_wins && cell == 'Q');
            hexagon(out, cx, cy, marked);
            symbol(out, cell, cx, cy);
        }
    }
    let mut foot = format!("honey pots: {}", hive.pots);
    if honey_wins {
        let _ = write!(foot, " → {} €", canonical(hive.honey_win));
    }
    if hive.bee_amount.is_some() {
        // Maxi has no honey: say what the rows won instead.
        foot = String::new();
    }
    if !foot.is_empty() {
        let _ = writeln!(
            out,
            r##"<text x="{:.1}" y="{:.1}" font-size="13" fill="#4a2c00"{}>{}</text>"##,
            x + 14.0,
            y + h - 12.0,
            if honey_wins {
                r#" font-weight="bold""#
            } else {
                ""
            },
            markup(&foot)
        );
    }
    out.push_str("</g>\n");
}

fn is_multiplier(c: char) -> bool {
    matches!(c, '2'..='6' | 'X')
}

/// A pointy-top hexagonal cell; a winning one is green with a thick border.
fn hexagon(out: &mut String, cx: f64, cy: f64, marked: bool) {
    let mut points = String::new();
    for k in 0..6 {
        let a = std::f64::consts::PI / 180.0 * (60.0 * k as f64 - 90.0);
        let _ = write!(
            points,
            "{:.1},{:.1} ",
            cx + (R - 1.0) * a.cos(),
            cy + (R - 1.0) * a.sin()
        );
    }
    let (fill, stroke, width) = if marked {
        ("#a5e887", "#1b5e20", 3.0)
    } else {
        ("#fff6d6", "#a8740c", 1.5)
    };
    let _ = writeln!(
        out,
        r#"<polygon class="cell{}" points="{}" fill="{fill}" stroke="{stroke}" stroke-width="{width}"/>"#,
        if marked { " win" } else { "" },
        points.trim_end()
    );
}

/// The picture of a hive cell.
fn symbol(out: &mut String, cell: char, x: f64, y: f64) {
    let disc = |out: &mut String, fill: &str, letter: &str| {
        let _ = writeln!(
            out,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="10.5" fill="{fill}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="13" font-weight="bold" fill="#ffffff">{letter}</text>"##,
            y + 4.5
        );
    };
    match cell {
        'P' => disc(out, "#d62828", "P"),
        'A' => disc(out, "#1d4ed8", "A"),
        'B' => disc(out, "#7b2cbf", "B"),
        'H' => {
            // A honey pot: a jar with a lid and a drip.
            let _ = writeln!(
                out,
                r##"<rect x="{:.1}" y="{:.1}" width="18" height="15" rx="6" fill="#e09f3e" stroke="#7f4f24" stroke-width="1.5"/><rect x="{:.1}" y="{:.1}" width="20" height="5" rx="2" fill="#7f4f24"/><path d="M{:.1} {:.1} q2 5 4 0" fill="#ffd166"/>"##,
                x - 9.0,
                y - 5.0,
                x - 10.0,
                y - 10.0,
                x - 4.0,
                y - 5.0
            );
        }
        'E' => {
            let _ = writeln!(
                out,
                r##"<rect x="{:.1}" y="{:.1}" width="26" height="13" rx="4" fill="#db2777"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="7.5" font-weight="bold" fill="#ffffff">EXTRA</text>"##,
                x - 13.0,
                y - 6.5,
                y + 2.7
            );
        }
        'F' => {
            for k in 0..5 {
                let a = std::f64::consts::TAU * k as f64 / 5.0;
                let _ = write!(
                    out,
                    r##"<circle cx="{:.1}" cy="{:.1}" r="4.2" fill="#f9a8d4"/>"##,
                    x + 5.5 * a.cos(),
                    y + 5.5 * a.sin()
                );
            }
            let _ = writeln!(
                out,
                r##"<circle cx="{x:.1}" cy="{y:.1}" r="3.2" fill="#facc15"/>"##
            );
        }
        'Q' => bee(out, x, y, 1.0),
        '2'..='6' | 'X' => {
            let factor = if cell == 'X' {
                "10".to_string()
            } else {
                cell.to_string()
            };
            let _ = writeln!(
                out,
                r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="14" font-weight="bold" fill="#0f766e">×{factor}</text>"##,
                y + 5.0
            );
        }
        other => {
            let _ = writeln!(
                out,
                r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text>"##,
                y + 4.5,
                markup(&other.to_string())
            );
        }
    }
}

/// A bee: wings, a striped body.
fn bee(out: &mut String, x: f64, y: f64, scale: f64) {
    let s = scale;
    let _ = writeln!(
        out,
        r##"<g class="bee"><ellipse cx="{:.1}" cy="{:.1}" rx="{:.1}" ry="{:.1}" fill="#dbeafe" stroke="#64748b" stroke-width="0.8"/><ellipse cx="{:.1}" cy="{:.1}" rx="{:.1}" ry="{:.1}" fill="#dbeafe" stroke="#64748b" stroke-width="0.8"/><ellipse cx="{x:.1}" cy="{:.1}" rx="{:.1}" ry="{:.1}" fill="#facc15" stroke="#1f2937" stroke-width="1.2"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#1f2937" stroke-width="{:.1}"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#1f2937" stroke-width="{:.1}"/></g>"##,
        x - 4.0 * s,
        y - 6.0 * s,
        4.0 * s,
        3.0 * s,
        x + 4.0 * s,
        y - 6.0 * s,
        4.0 * s,
        3.0 * s,
        y + 1.0 * s,
        9.5 * s,
        6.5 * s,
        x - 2.5 * s,
        y - 4.5 * s,
        x - 2.5 * s,
        y + 6.5 * s,
        2.0 * s,
        x + 2.5 * s,
        y - 4.5 * s,
        x + 2.5 * s,
        y + 6.5 * s,
        2.0 * s,
    );
}

/// Maxi's bonus stage: twelve cells, bees or empty; returns the height used.
fn draw_bonus(out: &mut String, b: &BonusStage, x: f64, y: f64, w: f64) -> f64 {
    let h = 78.0;
    let _ = writeln!(
        out,
        r##"<g class="bonus"><rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" rx="14" fill="#fde68a" stroke="#8a5a00" stroke-width="2.5"/>"##
    );
    let mut title = format!("bonus stage: {} bees", b.bees);
    if !b.win.is_zero() {
        let _ = write!(title, " → {} €", canonical(b.win));
    }
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{:.1}" font-size="15" font-weight="bold" fill="#4a2c00">{}</text>"##,
        x + 14.0,
        y + 22.0,
        markup(&title)
    );
    let step = ((w - 28.0) / b.cells.len().max(1) as f64).min(44.0);
    for (i, &cell) in b.cells.iter().enumerate() {
        let cx = x + 14.0 + step / 2.0 + i as f64 * step;
        let cy = y + 52.0;
        let won = cell == 'Q' && !b.win.is_zero();
        let _ = writeln!(
            out,
            r##"<circle class="bonus-cell" cx="{cx:.1}" cy="{cy:.1}" r="17" fill="{}" stroke="{}" stroke-width="{}"/>"##,
            if won { "#a5e887" } else { "#fff6d6" },
            if won { "#1b5e20" } else { "#a8740c" },
            if won { 3 } else { 1 }
        );
        if cell == 'Q' {
            bee(out, cx, cy, 1.2);
        }
    }
    out.push_str("</g>\n");
    h + 10.0
}

/// Colours of the calendar's symbols, in the order of the picture list.
const SYMBOL_COLOURS: [&str; 8] = [
    "#2f9e44", "#8d6e63", "#e03131", "#f59f00", "#d4a017", "#7048e8", "#f783ac", "#1c7ed6",
];

/// The twelve months as calendar pages, and the clover; returns (width, height used).
fn draw_calendar(
    out: &mut String,
    months: &[Month],
    clover: &Clover,
    pictures: &[(char, String)],
) -> (f64, f64) {
    let (page_w, page_h, gap) = (176.0, 116.0, 10.0);
    let width = 24.0 * 2.0 + 4.0 * page_w + 3.0 * gap;
    let top = HEADER + 14.0;
    for (m, month) in months.iter().enumerate() {
        let x = 24.0 + (m % 4) as f64 * (page_w + gap);
        let y = top + (m / 4) as f64 * (page_h + gap);
        let wins = month.wins();
        let _ = writeln!(
            out,
            r##"<g class="month"><rect x="{x:.1}" y="{y:.1}" width="{page_w}" height="{page_h}" rx="10" fill="{}" stroke="{}" stroke-width="{}"/><rect x="{x:.1}" y="{y:.1}" width="{page_w}" height="26" rx="10" fill="#c92a2a"/><rect x="{x:.1}" y="{:.1}" width="{page_w}" height="10" fill="#c92a2a"/><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="14" font-weight="bold" fill="#ffffff">{}</text>"##,
            if wins { "#d3f9d8" } else { "#ffffff" },
            if wins { "#1b5e20" } else { "#868e96" },
            if wins { 4.0 } else { 1.5 },
            y + 16.0,
            x + page_w / 2.0,
            y + 18.0,
            MONTH_NAMES.get(m).copied().unwrap_or("?")
        );
        for (k, &s) in month.symbols.iter().enumerate() {
            let cx = x + page_w / 2.0 + if k == 0 { -38.0 } else { 38.0 };
            calendar_symbol(out, s, cx, y + 56.0, pictures);
        }
        let _ = writeln!(
            out,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="17" font-weight="bold" fill="{}">{} €</text></g>"##,
            x + page_w / 2.0,
            y + page_h - 9.0,
            if wins { "#1b5e20" } else { "#343a40" },
            canonical(month.amount)
        );
    }
    let y = top + 3.0 * (page_h + gap) + 6.0;
    let h = draw_clover(out, clover, width / 2.0, y);
    // The legend: what each letter depicts.
    let mut ly = y + 22.0;
    for pair in pictures.chunks(2).take(6) {
        let text: Vec<String> = pair
            .iter()
            .map(|(letter, picture)| format!("{letter} {}", short(picture)))
            .collect();
        let _ = writeln!(
            out,
            r##"<text x="30" y="{ly:.1}" font-size="11.5" fill="#495057">{}</text>"##,
            markup(&text.join(" · "))
        );
        ly += 16.0;
    }
    (width, y + h - HEADER)
}

/// A picture name cut for the legend.
fn short(text: &str) -> String {
    cut(text, 22)
}

/// At most `n` characters of `text`, with an ellipsis if cut.
fn cut(text: &str, n: usize) -> String {
    let mut s: String = text.chars().take(n).collect();
    if text.chars().count() > n {
        s.push('…');
    }
    s
}

/// A calendar symbol: a coloured disc with its letter and, below, what it depicts.
fn calendar_symbol(out: &mut String, s: char, x: f64, y: f64, pictures: &[(char, String)]) {
    let rank = pictures.iter().position(|(l, _)| *l == s);
    let colour = rank
        .and_then(|i| SYMBOL_COLOURS.get(i))
        .copied()
        .unwrap_or("#495057");
    let name = rank.map(|i| cut(&pictures[i].1, 15)).unwrap_or_default();
    let _ = writeln!(
        out,
        r##"<circle cx="{x:.1}" cy="{y:.1}" r="20" fill="{colour}" stroke="#212529" stroke-width="1"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="20" font-weight="bold" fill="#ffffff">{}</text><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="9" fill="#495057">{}</text>"##,
        y + 7.0,
        markup(&s.to_string()),
        y + 32.0,
        markup(&name)
    );
}

/// The four-leaf clover: three numbers and the amount on its leaves; returns the height used.
fn draw_clover(out: &mut String, clover: &Clover, x: f64, y: f64) -> f64 {
    let (cx, cy) = (x + 150.0, y + 84.0);
    let _ = writeln!(
        out,
        r##"<g class="clover"><path d="M{cx:.1} {cy:.1} q 10 60 40 80" stroke="#2b8a3e" stroke-width="7" fill="none"/>"##
    );
    // Leaves up, right, down, left: the numbers on three, the amount on the fourth.
    let offsets = [(0.0, -42.0), (42.0, 0.0), (0.0, 42.0), (-42.0, 0.0)];
    for (i, (dx, dy)) in offsets.iter().enumerate() {
        let (lx, ly) = (cx + dx, cy + dy);
        let number = clover.numbers.get(i).copied();
        let winning = number == Some(13);
        let _ = writeln!(
            out,
            r##"<circle class="leaf" cx="{lx:.1}" cy="{ly:.1}" r="36" fill="{}" stroke="{}" stroke-width="{}"/>"##,
            if winning { "#94d82d" } else { "#40c057" },
            if winning { "#1b5e20" } else { "#2b8a3e" },
            if winning { 5 } else { 2 }
        );
        let label = match number {
            Some(n) => n.to_string(),
            None => format!("{} €", canonical(clover.amount)),
        };
        let _ = writeln!(
            out,
            r##"<text x="{lx:.1}" y="{:.1}" text-anchor="middle" font-size="{}" font-weight="bold" fill="#ffffff">{}</text>"##,
            ly + 8.0,
            if number.is_some() { 24 } else { 18 },
            markup(&label)
        );
    }
    let _ = writeln!(
        out,
        r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="12" fill="#2b8a3e"/><text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="13" font-weight="bold" fill="#1b5e20">{}</text></g>"##,
        cy + 104.0,
        if clover.wins {
            format!("Bonus: 13 wins {} €", canonical(clover.amount))
        } else {
            "Bonus".to_string()
        }
    );
    200.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_for_xml() {
        assert_eq!(
            markup("<b>&\"'\u{1b}é"),
            "&lt;b&gt;&amp;&quot;&#39;\\u{1b}é"
        );
        // XML cannot hold most control characters; none may reorder or hide the text.
        assert_eq!(
            markup("a\u{0}b\u{202e}c\u{2069}d\u{feff}\u{ffff}"),
            "a\\0b\\u{202e}c\\u{2069}d\\u{feff}\\u{ffff}"
        );
    }

    #[test]
    fn picture_names_of_a_definition_cannot_break_the_picture() {
        let text = include_str!("../tests/data/mini-annee.toml").replace(
            "picture = \"coccinelle\"",
            "picture = \"</text><script>alert(1)</script>\\u001b&amp;\"",
        );
        let game = Game::parse(&text, "test").unwrap();
        let layout = "AB:6/CC:10/AH:2/DE:3/FF:4/GA:5/HB:6/AC:2/BD:3/CE:4/DF:5/EG:6|4-12-13:20";
        let svg = ticket_svg(&game, &game.stakes[0], layout).unwrap();
        assert!(!svg.contains("<script"), "{svg}");
        assert!(!svg.contains('\u{1b}'));
        assert!(svg.contains("&lt;/text&gt;&lt;script&gt;"), "{svg}");
    }
}
