//! Ticket pictures (`picture::ticket_svg`, `show --svg`): the SVG is well-formed XML with the
//! cells a ticket has, and headless Chromium (Debian's `chromium`) renders it to a picture
//! that is not blank and shows the hive, the calendar and the winning marks.
//!
//! Without Chromium the rendering test says so and passes, unless `CI` is set: then it fails
//! (`.ci/run` installs it).

use crate::common;
use emission_factory::game::Game;
use emission_factory::mechanic::LayoutRng;
use emission_factory::picture::ticket_svg;
use rand::SeedableRng;
use rust_decimal::Decimal;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;

/// Fixed tickets: (game, stake, layout, hives, a winner?).
const TICKETS: [(&str, &str, &str, usize, bool); 4] = [
    (
        "ruche-or",
        "0.5",
        "5:PAHB/10:ABPAP/2.5:BPAHFA/1:PPPHBBA/25:ABABPH/0.5:FAPBF/7.5:ABFE|5:PAHB/10:ABPAB/2.5:BPAHPA/1:PPABFBA/25:ABABPF/0.5:PAPBF/7.5:ABFP",
        2,
        true,
    ),
    (
        "maxi-ruche-or",
        "3",
        "10#1:PAFB/2:ABP5P/5:BFAFPA/1:PPABFBA/20:ABABPF/3:FAPBF/2:EBFP|5#1:PAFB/2:ABPXP/5:BFAFPA/1:PPABFBA/20:ABABPF/3:FAQBF/2:ABFP",
        2,
        true,
    ),
    (
        "maxi-ruche-or",
        "3",
        "10#1:PAFB/2:ABP5P/5:BFAFPA/1:PPABFBA/20:ABABPF/3:FAPBF/2:ABFP+QQQ.........",
        1,
        false,
    ),
    (
        "annee-chance",
        "3",
        "AB:6/CC:10/AH:2/DE:3/FF:4/GA:5/HB:6/AC:2/BD:3/CE:4/DF:5/EG:6|4-12-13:20",
        0,
        true,
    ),
];

fn svg(game: &str, price: &str, layout: &str) -> String {
    let game = Game::builtin(game).unwrap();
    let stake = game.stake(Decimal::from_str(price).unwrap()).unwrap();
    ticket_svg(&game, stake, layout).unwrap_or_else(|e| panic!("{layout}: {e}"))
}

/// Elements named `tag` whose class list holds `class`.
fn count(doc: &roxmltree::Document, tag: &str, class: &str) -> usize {
    doc.descendants()
        .filter(|n| n.has_tag_name(tag))
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.split(' ').any(|w| w == class))
        })
        .count()
}

#[test]
fn pictures_are_xml_with_every_cell() {
    for (game, price, layout, hives, winner) in TICKETS {
        let text = svg(game, price, layout);
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        assert_eq!(
            doc.root_element().tag_name().namespace(),
            Some("http://www.w3.org/2000/svg")
        );
        if game == "annee-chance" {
            assert_eq!(count(&doc, "g", "month"), 12, "{game}");
            assert_eq!(count(&doc, "circle", "leaf"), 4, "{game}");
        } else {
            assert_eq!(count(&doc, "g", "hive"), hives, "{game}");
            assert_eq!(count(&doc, "polygon", "cell"), 37 * hives, "{game}");
        }
        assert_eq!(
            count(&doc, "polygon", "win") > 0,
            winner && game != "annee-chance"
        );
        // Self-contained: nothing is fetched, nothing runs.
        for n in doc.descendants() {
            assert!(!n.has_tag_name("script") && !n.has_tag_name("image"));
            for a in n.attributes() {
                assert!(!a.name().contains("href") && !a.value().contains("url(http"));
            }
        }
        // The decoding is written on the picture.
        let decoding: Vec<&str> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("decoding"))
            .filter_map(|n| n.text())
            .collect();
        assert!(
            decoding.last().unwrap().starts_with("total "),
            "{decoding:?}"
        );
    }
}

#[test]
fn synthesized_tickets_of_every_game_make_pictures() {
    for (id, _) in emission_factory::game::BUILTIN {
        let game = Game::builtin(id).unwrap();
        for stake in &game.stakes {
            let synth = stake.synthesizer().unwrap();
            let mut rng = LayoutRng::seed_from_u64(3);
            for prize in stake.tiers() {
                let mut bytes = Vec::new();
                synth.synthesize(prize, &mut rng, &mut bytes).unwrap();
                let layout = String::from_utf8(bytes).unwrap();
                let text = ticket_svg(&game, stake, &layout).unwrap();
                let doc = roxmltree::Document::parse(&text).unwrap();
                let cells = count(&doc, "polygon", "cell");
                if game.mechanic == "calendar" {
                    assert_eq!(count(&doc, "g", "month"), 12);
                } else {
                    assert!(cells > 0 && cells.is_multiple_of(37), "{layout}: {cells}");
                    assert_eq!(cells / 37, layout.split('|').count());
                }
            }
        }
    }
}

/// The Chromium program, or `None` (a failure when `CI` is set).
fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser"] {
        if let Ok(out) = Command::new("which").arg(name).output() {
            if out.status.success() {
                let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
                if !path.is_empty() {
                    return Some(PathBuf::from(path));
                }
            }
        }
    }
    common::cannot_run(
        "chromium is not installed, the pictures are not rendered (apt-get install chromium; .ci/run does it)",
    );
    None
}

/// Renders an SVG file with headless Chromium into a PNG; returns (width, height, RGBA pixels).
fn render(chromium: &Path, svg: &Path, dir: &Path) -> (u32, u32, Vec<[u8; 4]>) {
    let png_path = dir.join("shot.png");
    let profile = tempfile::tempdir_in(dir).unwrap();
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg("--window-size=800,800")
        .arg(format!("file://{}", svg.display()))
        .output()
        .expect("chromium runs");
    assert!(
        png_path.exists(),
        "chromium wrote no screenshot (status {:?}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::fs::File::open(&png_path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = match info.color_type {
        png::ColorType::Rgba => 4,
        png::ColorType::Rgb => 3,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let pixels = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2], if channels == 4 { p[3] } else { 255 }])
        .collect();
    (info.width, info.height, pixels)
}

/// Pixels within a small distance of `rgb`.
fn near(pixels: &[[u8; 4]], rgb: [u8; 3]) -> usize {
    pixels
        .iter()
        .filter(|p| (0..3).all(|i| p[i].abs_diff(rgb[i]) <= 6))
        .count()
}

#[test]
fn chromium_renders_the_pictures() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (i, (game, price, layout, _, winner)) in TICKETS.into_iter().enumerate() {
        let path = dir.path().join(format!("ticket-{i}.svg"));
        std::fs::write(&path, svg(game, price, layout)).unwrap();
        let (w, h, pixels) = render(&chromium, &path, dir.path());
        assert_eq!((w, h), (800, 800));
        // Not blank: most of the window is the ticket, not the white page.
        let background = pixels[pixels.len() - 1];
        let drawn = pixels.iter().filter(|p| **p != background).count();
        assert!(
            drawn > pixels.len() / 4,
            "{game}: only {drawn} of {} pixels drawn",
            pixels.len()
        );
        // The ticket's own colours: its paper, the hive's gold or the months' red headers, and
        // the green of the winning cells.
        assert!(
            near(&pixels, [0x7a, 0x4b, 0x12]) > 1000,
            "{game}: no title band"
        );
        if game == "annee-chance" {
            assert!(
                near(&pixels, [0xc9, 0x2a, 0x2a]) > 1000,
                "{game}: no months"
            );
            assert!(
                near(&pixels, [0x40, 0xc0, 0x57]) > 1000,
                "{game}: no clover"
            );
        } else {
            assert!(near(&pixels, [0xf2, 0xb6, 0x32]) > 1000, "{game}: no hive");
        }
        let green = near(&pixels, [0xa5, 0xe8, 0x87]) + near(&pixels, [0xd3, 0xf9, 0xd8]);
        assert_eq!(green > 200, winner, "{game}: winning marks {green}");
        if std::env::var_os("EF_KEEP_SHOTS").is_some() {
            let keep = std::env::temp_dir().join(format!("ef-ticket-{i}.png"));
            std::fs::copy(dir.path().join("shot.png"), &keep).unwrap();
            eprintln!("screenshot kept: {}", keep.display());
        }
    }
}
