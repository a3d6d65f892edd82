//! `show`: one ticket of a block as a player sees it, and how it decodes.
//!
//! The block's manifest and signature are checked as `verify` checks them, and the ticket's
//! own line (serial, prize column, SHA-256, layout decoding to the prize); the other tickets
//! are not read past the ticket shown. A ticket that fails a check is not drawn.
//!
//! The ticket is named by its index or serial (`--ticket`), or found (`--prize`, `--form`,
//! `--nth`): the first, or K-th, ticket of the block that wins the prize and shows the form,
//! the decoder's text of it or a near miss by its report name. Every line read up to it is
//! checked as the ticket's own is, so that the ticket chosen is counted among checked lines
//! only; when none matches, the error says what the block holds (the stake's prizes, or the
//! forms and near misses of the tickets of the prize asked, with their counts).

use super::{grouped, Exit, ShowArgs, WhenColour};
use anstyle::{AnsiColor, Color, Style};
use anyhow::{bail, Context, Result};
use emission_factory::block::CSV_HEADER;
use emission_factory::game::Stake;
use emission_factory::mechanic::explain::{
    Board, BonusStage, Clover, Explanation, Features, Hive, Month, MAX_NEAR, MONTH_NAMES,
};
use emission_factory::money::canonical;
use emission_factory::untrusted::{defanged, shown, shown_path, shown_text, SHOWN_CHARS};
use emission_factory::verify::{check_manifest_of, TicketCheck};
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::str::FromStr;

pub(super) fn run(args: ShowArgs) -> Result<Exit> {
    if let Some(svg) = &args.svg {
        svg.check(args.force, "--svg")?;
    }
    let options = super::trusted(args.public_key.as_deref(), args.game.as_deref())?;
    let csv = &args.block;
    let name = shown_path(csv);
    let (report, checked) = check_manifest_of(csv, &options);
    for w in &report.warnings {
        errln!("warning: {w}");
    }
    let Some(checked) = checked else {
        super::output::write_stderr_failed(format_args!("  {name}"));
        for p in &report.problems {
            errln!("  - {p}");
        }
        return Ok(Exit::Failed);
    };
    let (game, stake, manifest) = (&checked.game, &checked.stake, &checked.manifest);
    let tickets = TicketCheck::new(
        game,
        stake,
        manifest.emission().number(),
        manifest.id.number(),
    );
    // The game and stake were checked against the definition: the prefix is the block's.
    let prefix = manifest.id.serial_prefix();
    let count = manifest.tickets.min(game.block_size);
    let (index, line) = match &args.ticket {
        Some(ticket) => {
            let index = ticket_index(ticket, &prefix, count)?;
            let line = read_ticket_line(csv, index, manifest.csv.bytes, tickets.max_line())?;
            if let Err(problem) = tickets.check(&line, index) {
                super::output::write_stderr_failed(format_args!("  {name} {problem}"));
                return Ok(Exit::Failed);
            }
            (index, line)
        }
        None => {
            let search = Search::new(&args, stake)?;
            let mut lines = TicketLines::open(csv, manifest.csv.bytes, tickets.max_line())?;
            match search.find(&mut lines, &tickets, count)? {
                Ok(found) => found,
                Err(problem) => {
                    super::output::write_stderr_failed(format_args!("  {name} {problem}"));
                    return Ok(Exit::Failed);
                }
            }
        }
    };
    // Checked above: four fields, the layout valid UTF-8 and decoding to the prize column.
    let text = String::from_utf8_lossy(&line);
    let mut fields = text.split(',');
    let serial = fields.next().unwrap_or_default();
    let layout = fields.nth(1).unwrap_or_default();
    let explanation = stake
        .mechanic
        .explainer()
        .explain(layout)
        .map_err(|e| anyhow::anyhow!("{name} line {}: {e}", index + 2))?;
    let colour = match args.colour {
        WhenColour::Always => true,
        WhenColour::Never => false,
        WhenColour::Auto => super::output::stdout_colours(),
    };
    // The definition's name, escaped for the terminal (the picture escapes it by XML's rules).
    let title = format!(
        "{} · {} €",
        shown_text(&game.name, SHOWN_CHARS),
        canonical(stake.price)
    );
    let subtitle = format!(
        "{} (block {}, line {})",
        shown_text(serial, SHOWN_CHARS),
        manifest.id.number(),
        index + 2
    );
    // With `--svg -` the picture is standard output's, the drawing is left out.
    if args.svg != Some(super::output::Target::Stdout) && !args.quiet {
        outln!("{}", draw(&title, &subtitle, &explanation, colour))?;
    }
    if let Some(target) = &args.svg {
        let title = format!("{} · {} €", game.name, canonical(stake.price));
        let svg = emission_factory::picture::explanation_svg(&title, serial, &explanation);
        target.write(svg.as_bytes(), args.force, "--svg")?;
        if let Some(path) = target.path().filter(|_| !args.quiet) {
            errln!("picture written to {}", shown_path(path));
        }
    }
    Ok(Exit::Ok)
}

/// The ticket's index in the block from `--ticket`: an index from 0, or the ticket's serial.
fn ticket_index(arg: &str, prefix: &str, tickets: u64) -> Result<u64> {
    let index = if !arg.is_empty() && arg.len() <= 7 && arg.bytes().all(|b| b.is_ascii_digit()) {
        arg.parse::<u64>()?
    } else {
        match arg.strip_prefix(prefix) {
            Some(digits) if digits.len() == 7 && digits.bytes().all(|b| b.is_ascii_digit()) => {
                digits.parse::<u64>()?
            }
            _ => bail!(
                "--ticket {}: give the ticket's index in the block (0 to {}) or its serial, {prefix}NNNNNNN",
                shown(arg),
                tickets.saturating_sub(1)
            ),
        }
    };
    if index >= tickets {
        bail!(
            "--ticket {}: the block holds {tickets} tickets, indexed 0 to {}",
            shown(arg),
            tickets.saturating_sub(1)
        );
    }
    Ok(index)
}

/// Reads the line of ticket `index` (line `index + 2`, after the header), without its line
/// end. Reads at most `file_bytes` (the manifest's size of the CSV) and refuses a line longer
/// than `max_line`: what is held is one line.
fn read_ticket_line(csv: &Path, index: u64, file_bytes: u64, max_line: usize) -> Result<Vec<u8>> {
    let mut lines = TicketLines::open(csv, file_bytes, max_line)?;
    loop {
        let Some(n) = lines.next_ticket()? else {
            bail!(
                "{}: the file ends at line {}, before ticket {index} (line {}): the block is damaged, run verify",
                lines.name,
                lines.read,
                index + 2
            );
        };
        if n == index {
            return Ok(std::mem::take(&mut lines.line));
        }
    }
}

/// The ticket lines of a block's CSV, one at a time, after its header (checked): at most the
/// manifest's size of the file is read, no line longer than the game's longest is held.
struct TicketLines {
    name: String,
    reader: std::io::Take<BufReader<std::io::Take<std::fs::File>>>,
    limit: u64,
    max_line: usize,
    /// Lines read so far, the header included.
    read: u64,
    /// The last ticket line read, without its line end.
    line: Vec<u8>,
}

impl TicketLines {
    fn open(csv: &Path, file_bytes: u64, max_line: usize) -> Result<Self> {
        let name = shown_path(csv);
        let file = emission_factory::fs::open::open_regular(csv)
            .with_context(|| format!("{name}: cannot read"))?;
        let limit = max_line.max(CSV_HEADER.len()) as u64 + 1;
        let reader = BufReader::with_capacity(1 << 20, file.take(file_bytes)).take(limit);
        let mut lines = TicketLines {
            name,
            reader,
            limit,
            max_line,
            read: 0,
            line: Vec::with_capacity(max_line + 1),
        };
        if !lines.next_line()? {
            bail!(
                "{}: the file is empty: the block is damaged, run verify",
                lines.name
            );
        }
        if lines.line != CSV_HEADER.as_bytes() {
            bail!(
                "{} line 1: the header is {}, it must be '{CSV_HEADER}'",
                lines.name,
                shown(&lines.line)
            );
        }
        Ok(lines)
    }

    /// The next ticket's index in the block (its line is in `self.line`), `None` at the end.
    fn next_ticket(&mut self) -> Result<Option<u64>> {
        Ok(self.next_line()?.then(|| self.read - 2))
    }

    /// Reads the next line into `self.line`; `false` at the end of the file.
    fn next_line(&mut self) -> Result<bool> {
        if self.read.is_multiple_of(1 << 16) {
            emission_factory::interrupt::check()?;
        }
        self.line.clear();
        self.reader.set_limit(self.limit);
        let read = self
            .reader
            .read_until(b'\n', &mut self.line)
            .with_context(|| format!("{}: cannot read", self.name))?;
        if read == 0 {
            return Ok(false);
        }
        self.read += 1;
        if self.line.last() != Some(&b'\n') {
            if read as u64 == self.limit {
                bail!("{} line {}: longer than the longest line of this game ({} bytes): the block is damaged, run verify", self.name, self.read, self.max_line);
            }
            bail!(
                "{} line {}: the file ends without a line end: the block is damaged, run verify",
                self.name,
                self.read
            );
        }
        self.line.pop();
        Ok(true)
    }
}

/// What `--prize` and `--form` ask for.
struct Search<'a> {
    /// The prize's tier text (canonical, `0` for losers), if asked.
    prize: Option<String>,
    /// The form asked: the decoder's text, or a near miss (its index in the explainer's
    /// near-miss features).
    form: Option<FormQuery>,
    nth: u64,
    stake: &'a Stake,
}

enum FormQuery {
    Text(String),
    NearMiss(usize, &'static str),
}

impl<'a> Search<'a> {
    /// Reads --prize and --form; an amount that is no prize of the stake is refused here,
    /// naming the prizes the stake has and how many tickets of a block win each.
    fn new(args: &ShowArgs, stake: &'a Stake) -> Result<Self> {
        let prize = match &args.prize {
            None => None,
            Some(text) => {
                let amount = Decimal::from_str(text.trim())
                    .ok()
                    .filter(|a| !a.is_sign_negative() && a.scale() <= 2);
                let tier = amount.and_then(|a| stake.tiers().into_iter().find(|t| *t == a));
                match tier {
                    Some(t) => Some(canonical(t)),
                    None => bail!(
                        "--prize {}: no ticket of this stake ({} €) wins it; its prizes are {}, and 0 for the losers",
                        shown(text),
                        canonical(stake.price),
                        prize_list(stake)
                    ),
                }
            }
        };
        let explainer = stake.mechanic.explainer();
        let form = args.form.as_ref().map(|text| {
            let names = explainer.feature_names();
            match names.near.iter().position(|n| *n == text.as_str()) {
                Some(i) => FormQuery::NearMiss(i, names.near[i]),
                None => FormQuery::Text(text.clone()),
            }
        });
        Ok(Search {
            prize,
            form,
            nth: args.nth,
            stake,
        })
    }

    /// What is asked, in words: `ticket(s) winning 20 € with the form 'row'`.
    fn asked(&self, plural: bool) -> String {
        let mut what = String::from(if plural { "tickets" } else { "ticket" });
        if let Some(p) = &self.prize {
            what.push_str(&format!(" winning {p} €"));
        }
        match &self.form {
            Some(FormQuery::Text(t)) => what.push_str(&format!(" with the form {}", shown(t))),
            Some(FormQuery::NearMiss(_, n)) => what.push_str(&format!(" with a near miss {n}")),
            None => {}
        }
        what
    }

    /// Reads the block up to the --nth matching ticket, checking every line read as `verify`
    /// checks it: `Ok(Ok((index, line)))`, or `Ok(Err(problem))` for a line that fails (the
    /// ticket cannot be chosen from lines nobody vouches for), or an error naming what the
    /// block holds when no ticket matches.
    fn find(
        &self,
        lines: &mut TicketLines,
        tickets: &TicketCheck,
        count: u64,
    ) -> Result<Result<(u64, Vec<u8>), String>> {
        let explainer = self.stake.mechanic.explainer();
        let decoder = self.stake.decoder();
        let mut features = Features::default();
        let mut matched = 0u64;
        // Among the tickets of the prize asked (all without --prize): how many of each form
        // and near miss, for the error when none matches.
        let mut forms: BTreeMap<String, u64> = BTreeMap::new();
        let mut near = [0u64; MAX_NEAR];
        let mut of_prize = 0u64;
        while let Some(index) = lines.next_ticket()? {
            if index >= count {
                return Ok(Err(format!(
                    "line {}: the block has {count} tickets, the file holds more",
                    index + 2
                )));
            }
            if let Err(problem) = tickets.check(&lines.line, index) {
                return Ok(Err(problem.message));
            }
            // Checked: four fields, the layout valid and winning the prize column.
            let mut fields = lines.line.split(|&b| b == b',');
            let prize = fields.nth(1).unwrap_or_default();
            let layout = fields.next().unwrap_or_default();
            if self.prize.as_ref().is_some_and(|p| p.as_bytes() != prize) {
                continue;
            }
            of_prize += 1;
            let hit = match &self.form {
                None => true,
                Some(FormQuery::Text(text)) => {
                    let form = decoder
                        .form(layout)
                        .map_err(|e| anyhow::anyhow!("{} line {}: {e}", lines.name, index + 2))?;
                    let hit = form == *text;
                    *forms.entry(form).or_default() += 1;
                    hit
                }
                Some(FormQuery::NearMiss(i, _)) => {
                    features.clear();
                    explainer
                        .features(layout, &mut features)
                        .map_err(|e| anyhow::anyhow!("{} line {}: {e}", lines.name, index + 2))?;
                    for (k, n) in features.near.iter().enumerate() {
                        near[k] += u64::from(*n > 0);
                    }
                    features.near[*i] > 0
                }
            };
            if hit {
                matched += 1;
                if matched == self.nth {
                    return Ok(Ok((index, std::mem::take(&mut lines.line))));
                }
            }
        }
        let scope = match (&self.prize, of_prize) {
            (Some(p), 1) => format!("1 ticket wins {p} €"),
            (Some(p), n) => format!("{} tickets win {p} €", grouped(n)),
            (None, n) => format!("{} tickets", grouped(n)),
        };
        if matched > 0 {
            bail!(
                "--nth {}: the block holds {} {} ({scope}): give --nth 1 to {matched}",
                self.nth,
                grouped(matched),
                self.asked(matched > 1)
            );
        }
        let holds = match &self.form {
            None => String::new(),
            Some(FormQuery::Text(_)) => {
                let list: Vec<String> = forms
                    .iter()
                    .map(|(f, n)| format!("{} ({})", shown_text(f, SHOWN_CHARS), grouped(*n)))
                    .collect();
                format!(
                    "; their forms: {} (or a near miss: {})",
                    if list.is_empty() {
                        "none".into()
                    } else {
                        list.join(", ")
                    },
                    explainer.feature_names().near.join(", ")
                )
            }
            Some(FormQuery::NearMiss(..)) => {
                let names = explainer.feature_names().near;
                let list: Vec<String> = names
                    .iter()
                    .enumerate()
                    .map(|(k, n)| format!("{n} ({})", grouped(near[k])))
                    .collect();
                format!("; their near misses: {}", list.join(", "))
            }
        };
        bail!("no {} in this block: {scope}{holds}", self.asked(false))
    }
}

/// The prizes of a stake with their counts per block: `20000 € (1), 2000 € (2), ...`.
fn prize_list(stake: &Stake) -> String {
    stake
        .prizes
        .iter()
        .map(|p| format!("{} € ({})", canonical(p.amount), grouped(p.count)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Colours of the terminal drawing (none when off).
struct Paint {
    on: bool,
}

impl Paint {
    fn paint(&self, text: &str, style: Style) -> String {
        if self.on {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }
}

fn fg(c: AnsiColor) -> Style {
    Style::new().fg_color(Some(Color::Ansi(c)))
}

/// The style of a hive cell; `won` cells are reversed.
fn cell_style(cell: char, won: bool) -> Style {
    let base = match cell {
        'P' => fg(AnsiColor::BrightRed).bold(),
        'A' => fg(AnsiColor::Blue),
        'B' => fg(AnsiColor::Magenta),
        'H' => fg(AnsiColor::Yellow).bold(),
        'E' => fg(AnsiColor::BrightMagenta).bold(),
        'F' => fg(AnsiColor::Green),
        'Q' => fg(AnsiColor::BrightYellow).bold(),
        _ => fg(AnsiColor::Cyan).bold(),
    };
    if won {
        base.fg_color(Some(Color::Ansi(AnsiColor::Black)))
            .bg_color(Some(Color::Ansi(AnsiColor::BrightGreen)))
            .bold()
    } else {
        base
    }
}

/// The ticket as text: the hives as offset rows of cells with their amounts (winning cells in
/// brackets), or the months and the clover; then how it decodes.
pub fn draw(title: &str, subtitle: &str, e: &Explanation, colour: bool) -> String {
    let paint = Paint { on: colour };
    let mut out = String::new();
    out.push_str(&paint.paint(title, Style::new().bold()));
    out.push_str("  ");
    out.push_str(subtitle);
    out.push('\n');
    match &e.board {
        Board::Hives { hives, bonus } => {
            for hive in hives {
                draw_hive(&mut out, hive, &paint);
            }
            if let Some(b) = bonus {
                draw_bonus(&mut out, b, &paint);
            }
            let maxi = hives.iter().any(|h| h.bee_amount.is_some());
            out.push_str(if maxi {
                "\n  P your symbol · A B the other two · F flower · E EXTRA · Q bee · 2-6 X multipliers (X = ×10)\n"
            } else {
                "\n  P your symbol · A B the other two · H honey pot · E EXTRA · F flower\n"
            });
        }
        Board::Calendar {
            months,
            clover,
            pictures,
        } => draw_calendar(&mut out, months, clover, pictures, &paint),
    }
    out.push('\n');
    let total = format!("total {} €", canonical(e.prize));
    let mut decoding: Vec<String> = e.wins.iter().map(|w| defanged(w)).collect();
    decoding.push(paint.paint(&total, Style::new().bold()));
    out.push_str("  ");
    out.push_str(&decoding.join("; "));
    out.push_str(&format!("  ({})", defanged(&e.form)));
    out
}

fn draw_hive(out: &mut String, hive: &Hive, paint: &Paint) {
    out.push('\n');
    let mut head = format!("  {}", defanged(&hive.name));
    if let Some(bee) = hive.bee_amount {
        head.push_str(&format!(" · bee {} €", canonical(bee)));
        if hive.bee_wins {
            head.push_str(" · the bee wins");
        }
    }
    out.push_str(&paint.paint(&head, Style::new().bold()));
    out.push('\n');
    let honey_wins = !hive.honey_win.is_zero();
    let widest = hive.rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
    for (r, row) in hive.rows.iter().enumerate() {
        let wins = row.wins();
        let indent = " ".repeat(2 * (widest - row.cells.len().min(widest)));
        let mut cells = String::new();
        for &c in &row.cells {
            let won = (wins
                && (c == 'P' || row.multiplier.is_some() && matches!(c, '2'..='6' | 'X')))
                || (honey_wins && c == 'H')
                || (hive.bee_wins && c == 'Q');
            let text = if won {
                format!("[{c}]")
            } else {
                format!(" {c} ")
            };
            cells.push_str(&paint.paint(&text, cell_style(c, won)));
            cells.push(' ');
        }
        let amount = format!("{:>8} €", canonical(row.amount));
        let mark = if wins {
            let mut m = format!("← row {} wins {} €", r + 1, canonical(row.win));
            if let Some(f) = row.multiplier {
                m = format!(
                    "← row {} wins {} € × {f} = {} €",
                    r + 1,
                    canonical(row.amount),
                    canonical(row.win)
                );
            }
            paint.paint(&m, fg(AnsiColor::Green).bold())
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  {} {indent}{}  {mark}",
            if wins {
                paint.paint(&amount, Style::new().bold())
            } else {
                amount
            },
            cells.trim_end()
        ));
        // No trailing blanks: snapshots and copies stay clean.
        while out.ends_with(' ') {
            out.pop();
        }
        out.push('\n');
    }
    if hive.bee_amount.is_none() {
        let mut honey = format!("  honey pots: {}", hive.pots);
        if honey_wins {
            honey.push_str(&format!(" → {} €", canonical(hive.honey_win)));
            out.push_str(&paint.paint(&honey, fg(AnsiColor::Green).bold()));
        } else {
            out.push_str(&honey);
        }
        out.push('\n');
    }
}

fn draw_bonus(out: &mut String, b: &BonusStage, paint: &Paint) {
    out.push('\n');
    let won = !b.win.is_zero();
    let cells: Vec<String> = b
        .cells
        .iter()
        .map(|&c| {
            if c == 'Q' {
                paint.paint(if won { "[Q]" } else { " Q " }, cell_style('Q', won))
            } else {
                " . ".to_string()
            }
        })
        .collect();
    let mut line = format!("  bonus stage  {}  {} bees", cells.join(""), b.bees);
    if won {
        line.push_str(&format!(" → {} €", canonical(b.win)));
    }
    out.push_str(&line);
    out.push('\n');
}

fn draw_calendar(
    out: &mut String,
    months: &[Month],
    clover: &Clover,
    pictures: &[(char, String)],
    paint: &Paint,
) {
    out.push('\n');
    let cell = |m: usize| -> String {
        let Some(month) = months.get(m) else {
            return String::new();
        };
        let wins = month.wins();
        let [a, b] = month.symbols;
        let text = format!(
            "{:<10} {} {} {:>7} €{}",
            MONTH_NAMES.get(m).copied().unwrap_or("?"),
            a,
            b,
            canonical(month.amount),
            if wins { " ←" } else { "  " }
        );
        if wins {
            paint.paint(&text, fg(AnsiColor::Green).bold())
        } else {
            text
        }
    };
    for m in 0..6 {
        let line = format!("  {}    {}", cell(m), cell(m + 6));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
    let numbers: Vec<String> = clover
        .numbers
        .iter()
        .map(|&n| {
            if n == 13 {
                paint.paint(&format!("[{n}]"), fg(AnsiColor::Green).bold())
            } else {
                n.to_string()
            }
        })
        .collect();
    let mut line = format!(
        "  clover  {}  {} €",
        numbers.join(" "),
        canonical(clover.amount)
    );
    if clover.wins {
        line.push_str(&paint.paint(" ← 13 wins", fg(AnsiColor::Green).bold()));
    }
    out.push_str(&line);
    out.push('\n');
    // What each letter depicts, four to a line.
    for four in pictures.chunks(4) {
        let legend: Vec<String> = four
            .iter()
            .map(|(l, p)| format!("{l} {}", printable(p)))
            .collect();
        out.push_str("\n  ");
        out.push_str(&legend.join(" · "));
    }
    out.push('\n');
}

/// A game definition's text for the terminal (a picture's name): escaped as every text from
/// a file is (a definition given with --game is a file like any other), at most 40 characters.
fn printable(text: &str) -> String {
    shown_text(text, 40)
}

#[cfg(test)]
mod tests {
    //! Snapshots of the terminal drawing of fixed tickets of each game (no colour).

    use super::*;
    use emission_factory::game::Game;
    use rust_decimal::Decimal;
    use std::str::FromStr;

    fn drawn(game: &str, price: &str, layout: &str) -> String {
        let game = Game::builtin(game).unwrap();
        let stake = game.stake(Decimal::from_str(price).unwrap()).unwrap();
        let e = stake.mechanic.explainer().explain(layout).unwrap();
        draw(&game.name, "a fixed ticket", &e, false)
    }

    #[test]
    fn ruche_row_and_honey() {
        insta::assert_snapshot!(drawn(
            "ruche-or",
            "0.5",
            "5:PAHB/10:ABPAP/2.5:BPAHFA/1:PPPHBBA/25:ABABPH/0.5:FAPBF/7.5:ABFE|5:PAHB/10:ABPAB/2.5:BPAHPA/1:PPABFBA/25:ABABPF/0.5:PAPBF/7.5:ABFP"
        ));
    }

    #[test]
    fn ruche_loss() {
        insta::assert_snapshot!(drawn(
            "ruche-or",
            "2",
            "20:PAHB/40:ABPAB/10:BPAHPA/4:PPABHBA/100:ABABPF/2:PAPBF/30:ABFP"
        ));
    }

    #[test]
    fn maxi_multiplier_and_bee() {
        insta::assert_snapshot!(drawn(
            "maxi-ruche-or",
            "3",
            "10#1:PAFB/2:PBP5P/5:BFAFPA/1:PPABFBA/20:ABABPF/3:FAQBF/2:ABFP"
        ));
    }

    #[test]
    fn maxi_bonus_stage() {
        insta::assert_snapshot!(drawn(
            "maxi-ruche-or",
            "3",
            "10#1:PAFB/2:ABP5P/5:BFAFPA/1:PPABFBA/20:ABABPF/3:FAPBF/2:EBFP|5#1:PAFB/2:ABPXP/5:BFAFPA/1:PPABFBA/20:ABABPF/3:FAPBF/2:ABFP+QQQ.Q.QQ...."
        ));
    }

    #[test]
    fn annee_months_and_clover() {
        insta::assert_snapshot!(drawn(
            "annee-chance",
            "3",
            "AB:6/CC:10/AH:2/DE:3/FF:4/GA:5/HB:6/AC:2/BD:3/CE:4/DF:5/EG:6|4-12-13:20"
        ));
    }

    #[test]
    fn annee_loss() {
        insta::assert_snapshot!(drawn(
            "annee-chance",
            "3",
            "AB:6/CD:10/AH:2/DE:3/FG:4/GA:5/HB:6/AC:2/BD:3/CE:4/DF:5/EG:6|4-12-11:20"
        ));
    }

    #[test]
    fn colours_are_off_unless_asked() {
        let game = Game::builtin("ruche-or").unwrap();
        let e = game.stakes[0]
            .mechanic
            .explainer()
            .explain("5:PAHB/10:ABPAB/2.5:BPAHPA/1:PPPHBBA/25:ABABPF/0.5:PAPBF/7.5:ABFP")
            .unwrap();
        assert!(!draw("t", "s", &e, false).contains('\u{1b}'));
        assert!(draw("t", "s", &e, true).contains("\u{1b}["));
    }

    #[test]
    fn picture_names_cannot_reach_the_terminal_as_escapes() {
        assert_eq!(printable("pièce d'or"), "pièce d'or");
        assert_eq!(printable("a\u{1b}[2Jb\u{202e}"), "a\\u{1b}[2Jb\\u{202e}");
        assert_eq!(printable(&"x".repeat(50)), format!("{}…", "x".repeat(40)));
    }

    #[test]
    fn a_ticket_is_named_by_its_index_or_its_serial() {
        let prefix = "ruche-or-200-0001-00007-";
        assert_eq!(ticket_index("42", prefix, 900_000).unwrap(), 42);
        assert_eq!(
            ticket_index("ruche-or-200-0001-00007-0000042", prefix, 900_000).unwrap(),
            42
        );
        for bad in [
            "",
            "900000",
            "ruche-or-200-0001-00008-0000042",
            "ruche-or-200-0001-00007-42",
            "-1",
            "1e3",
        ] {
            let e = ticket_index(bad, prefix, 900_000).unwrap_err().to_string();
            assert!(e.starts_with("--ticket"), "{bad}: {e}");
        }
    }
}
