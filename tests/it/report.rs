//! `report` on real blocks of the mini game: the factory's own blocks pass every test; bad
//! blocks (rewritten from real ones and signed again with the test key) make the right test
//! fail and `report` exit 1; the HTML page renders in headless Chromium.

use crate::common;

use common::{cannot_run, data, fixed_test_key, sha256_file, text, Workdir, SEED};
use emission_factory::block::keys;
use emission_factory::block::manifest::Manifest;
use emission_factory::game::{Game, Stake};
use emission_factory::hash::merkle::MerkleRoot;
use emission_factory::progress::NoProgress;
use emission_factory::verify::{
    verify_block_observed, CheckedLine, PieceObserver, PiecePart, VerifyOptions,
};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Emits `blocks` blocks of the mini game, signed with the fixed test key; returns the
/// emission folder.
fn emit_mini(w: &Workdir, blocks: &str) -> PathBuf {
    common::emit_mini_signed(w, SEED, "out", blocks, &[])
}

/// Runs `report` on `paths` with the mini game and the test key, writing report.json;
/// requires exit status `code` and returns the JSON report and the text.
fn report(w: &Workdir, paths: &[&Path], code: i32) -> (serde_json::Value, String) {
    let game = data("mini-ruche.toml");
    let mut args = vec![
        "report",
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
        "--json",
        "report.json",
        "--quiet",
    ];
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    // Each report is a new file: the last one's is removed (report never replaces a file
    // without --force).
    let _ = std::fs::remove_file(w.path("report.json"));
    let out = w.run_expect(&args, code);
    let json = serde_json::from_slice(&common::read(&w.path("report.json"))).unwrap();
    (json, text(&out))
}

/// The tickets of a block: (prize, layout), in order.
fn tickets(folder: &Path, block: u32) -> Vec<(String, String)> {
    let csv = std::fs::read_to_string(folder.join(format!("block-{block:05}.csv"))).unwrap();
    csv.lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            (f[1].to_string(), f[2].to_string())
        })
        .collect()
}

/// Writes `tickets` as block `block` of `folder` (serials, hashes, the manifest's CSV size,
/// SHA-256 and Merkle root made anew) and signs its manifest with the test key: a block that
/// verifies, whatever its order.
fn rewrite(w: &Workdir, folder: &Path, block: u32, tickets: &[(String, String)]) {
    let manifest_path = folder.join(format!("block-{block:05}.manifest.json"));
    let mut manifest = Manifest::from_bytes(&std::fs::read(&manifest_path).unwrap()).unwrap();
    let mut csv = String::from("serial,prize,layout,sha256\n");
    let mut merkle = MerkleRoot::new();
    for (i, (prize, layout)) in tickets.iter().enumerate() {
        let body = format!("mini-ruche-200-0001-{block:05}-{i:07},{prize},{layout}");
        let hash: [u8; 32] = Sha256::digest(body.as_bytes()).into();
        merkle.push(&hash);
        csv.push_str(&format!("{body},{}\n", hex::encode(hash)));
    }
    std::fs::write(folder.join(format!("block-{block:05}.csv")), &csv).unwrap();
    manifest.csv.bytes = csv.len() as u64;
    manifest.csv.sha256 = hex::encode(Sha256::digest(csv.as_bytes()));
    manifest.tickets_root = hex::encode(merkle.root());
    let bytes = manifest.to_bytes();
    std::fs::write(&manifest_path, &bytes).unwrap();
    let key = keys::read_signing_key(&w.path("keys/signing-key.pem")).unwrap();
    std::fs::write(
        folder.join(format!("block-{block:05}.manifest.json.sig")),
        keys::sign(&key, &bytes),
    )
    .unwrap();
    // The bad block is a valid, signed block: only the report can object to it.
    w.ok(&[
        "verify",
        "--game",
        &data("mini-ruche.toml"),
        "--public-key",
        "keys/public-key.pem",
        folder
            .join(format!("block-{block:05}.csv"))
            .to_str()
            .unwrap(),
    ]);
}

/// The order tests that failed: "test" or "test (prize)".
fn failed_order_tests(json: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for b in json["blocks"].as_array().unwrap() {
        for t in b["order"]["tests"].as_array().into_iter().flatten() {
            if t["failed"] == true {
                out.push(t["test"].as_str().unwrap().to_string());
            }
        }
    }
    for e in json["emissions"].as_array().unwrap() {
        for t in e["cross_block"].as_array().unwrap() {
            if t["failed"] == true {
                out.push(t["test"].as_str().unwrap().to_string());
            }
        }
    }
    out
}

fn flagged_leaks(json: &serde_json::Value) -> Vec<String> {
    json["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["leaks"].as_array().unwrap().clone())
        .filter(|l| l["flagged"] == true)
        .map(|l| l["feature"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_factorys_own_blocks_pass_every_test() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "3");
    let (json, said) = report(&w, &[&folder], 0);
    println!("{said}");
    assert_eq!(json["report_format"], 3);
    assert_eq!(json["failed"], false, "{said}");
    assert!(said.contains("every test passed"), "{said}");
    let blocks = json["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 3);
    for b in blocks {
        assert_eq!(b["verified"], true);
        assert_eq!(b["tickets"], 2000);
        // Article 3 recomputed from the tickets is the definition's.
        for row in b["prizes"].as_array().unwrap() {
            assert_eq!(row["count"], row["expected_count"]);
            assert_eq!(row["total"], row["expected_total"]);
        }
        assert_eq!(b["total_prizes"], "3900");
        // Every family of tests was run.
        let tests: Vec<&str> = b["order"]["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["test"].as_str().unwrap())
            .collect();
        for name in [
            "positions",
            "runs",
            "serial_win",
            "serial_amount",
            "gaps",
            "longest_losing_streak",
        ] {
            assert!(tests.contains(&name), "{name} missing: {tests:?}");
        }
        assert!(!b["leaks"].as_array().unwrap().is_empty());
        assert!(!b["near_misses"].as_array().unwrap().is_empty());
        assert!(!b["forms"].as_array().unwrap().is_empty());
        // Features seen outside the wins carry their share per part (what the leak check
        // compares), beside the share of tickets; near misses do not.
        let features = b["features"].as_array().unwrap();
        assert!(!features.is_empty());
        for f in features {
            for key in ["losers_share", "winners_share"] {
                let share = f[key].as_f64().unwrap_or_else(|| panic!("{key}: {f}"));
                assert!((0.0..=1.0).contains(&share), "{f}");
            }
        }
        for n in b["near_misses"].as_array().unwrap() {
            assert!(n["losers_share"].is_null(), "{n}");
        }
    }
    assert_eq!(
        json["emissions"][0]["cross_block"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // The text fits an 80-column terminal (file names aside).
    for line in said.lines().filter(|l| !l.contains("out/")) {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
}

#[test]
fn a_sorted_block_fails_the_position_and_runs_tests() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let mut t = tickets(&folder, 1);
    // Highest prizes first, as a careless (or dishonest) maker would leave them.
    t.sort_by(|a, b| {
        let amount = |s: &str| s.parse::<f64>().unwrap();
        amount(&b.0).total_cmp(&amount(&a.0))
    });
    rewrite(&w, &folder, 1, &t);
    let (json, said) = report(&w, &[&folder], 1);
    let failed = failed_order_tests(&json);
    for name in ["positions", "runs", "serial_win"] {
        assert!(
            failed.iter().any(|f| f == name),
            "{name} should fail: {said}"
        );
    }
    assert!(flagged_leaks(&json).is_empty(), "{said}");
    assert!(said.contains("FAILED"), "{said}");
}

#[test]
fn losers_that_never_show_extra_fail_the_leak_check() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let mut changed = 0;
    let t: Vec<(String, String)> = tickets(&folder, 1)
        .into_iter()
        .map(|(prize, layout)| {
            if prize == "0" && layout.contains('E') {
                // The main hive alone, its E turned into flowers: still a loser, no EXTRA.
                changed += 1;
                let main = layout.split('|').next().unwrap().replace('E', "F");
                (prize, main)
            } else {
                (prize, layout)
            }
        })
        .collect();
    assert!(changed > 100, "{changed}");
    rewrite(&w, &folder, 1, &t);
    let (json, said) = report(&w, &[&folder], 1);
    assert_eq!(flagged_leaks(&json), ["extra_symbols"], "{said}");
    assert!(failed_order_tests(&json).is_empty(), "{said}");
    assert!(said.contains("leak check: extra_symbols"), "{said}");
}

#[test]
fn a_planted_losing_streak_fails_the_longest_streak_test() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let all = tickets(&folder, 1);
    let (mut front, mut rest) = (Vec::new(), Vec::new());
    for t in all {
        if t.0 == "0" && front.len() < 150 {
            front.push(t);
        } else {
            rest.push(t);
        }
    }
    front.extend(rest);
    rewrite(&w, &folder, 1, &front);
    let (json, said) = report(&w, &[&folder], 1);
    let failed = failed_order_tests(&json);
    assert!(
        failed.iter().any(|f| f == "longest_losing_streak"),
        "{failed:?}\n{said}"
    );
    let block = &json["blocks"][0]["order"];
    assert!(block["longest_losing_streak"].as_u64().unwrap() >= 150);
    assert_eq!(block["longest_losing_streak_at"], 0);
    assert!(flagged_leaks(&json).is_empty(), "{said}");
}

#[test]
fn a_copy_of_another_block_fails_the_cross_block_test() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "3");
    // Block 3 is block 1 again, under block 3's serials and signed as block 3.
    let first = tickets(&folder, 1);
    rewrite(&w, &folder, 3, &first);
    let (json, said) = report(&w, &[&folder], 1);
    assert_eq!(failed_order_tests(&json), ["cross_block"], "{said}");
    let e = &json["emissions"][0];
    let pairs: Vec<(u64, u64, f64, bool)> = e["cross_block"]
        .as_array()
        .unwrap()
        .iter()
        .zip(e["correlations"].as_array().unwrap())
        .map(|(t, r)| {
            (
                t["blocks"][0].as_u64().unwrap(),
                t["blocks"][1].as_u64().unwrap(),
                r.as_f64().unwrap(),
                t["failed"] == true,
            )
        })
        .collect();
    assert!(pairs.contains(&(1, 3, 1.0, true)), "{pairs:?}");
    assert!(said.contains("blocks 1 and 3"), "{said}");
}

/// Per prize, the tickets whose layout is byte for byte an earlier ticket's of that prize.
fn exact_duplicates(tickets: &[(String, String)]) -> std::collections::BTreeMap<String, u64> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = std::collections::BTreeMap::new();
    for (prize, layout) in tickets {
        if !seen.insert((prize.clone(), layout.clone())) {
            *out.entry(prize.clone()).or_insert(0) += 1;
        }
    }
    out
}

/// The report's duplicates of its first block, per prize.
fn reported_duplicates(json: &serde_json::Value) -> std::collections::BTreeMap<String, u64> {
    json["blocks"][0]["duplicates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["prize"].as_str().unwrap().to_string(),
                d["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn planted_duplicate_layouts_are_counted_exactly() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let mut tickets = tickets(&folder, 1);
    let (json, said) = report(&w, &[&folder], 0);
    assert_eq!(
        reported_duplicates(&json),
        exact_duplicates(&tickets),
        "{said}"
    );
    // Two losers and two winners of the same prize made to show the same layout as an
    // earlier ticket of their prize (the report counts them; the block still verifies).
    let winning = tickets.iter().find(|t| t.0 != "0").unwrap().0.clone();
    for prize in ["0", "0", winning.as_str(), winning.as_str()] {
        let first = tickets.iter().position(|t| t.0 == prize).unwrap();
        let later = tickets
            .iter()
            .rposition(|t| t.0 == prize && t.1 != tickets[first].1)
            .unwrap();
        tickets[later].1 = tickets[first].1.clone();
    }
    rewrite(&w, &folder, 1, &tickets);
    let expected = exact_duplicates(&tickets);
    assert!(
        expected["0"] >= 2 && expected[&winning] >= 2,
        "{expected:?}"
    );
    let (json, said) = report(&w, &[&folder], 0);
    assert_eq!(reported_duplicates(&json), expected, "{said}");
}

/// Records, in the order `verify` folds them, the lines it gives (index, tier, layout).
#[derive(Default)]
struct Recorder {
    started: std::sync::Mutex<Option<String>>,
    lines: std::sync::Mutex<Vec<(u64, usize, String)>>,
}

impl PieceObserver for Recorder {
    fn start(&self, manifest: &Manifest, _: &Game, _: &Stake) {
        *self.started.lock().unwrap() = Some(manifest.emission().game().to_string());
    }

    fn piece(&self, lines: &[CheckedLine<'_>]) -> PiecePart {
        let seen: Vec<(u64, usize, String)> = lines
            .iter()
            .map(|l| {
                let layout = String::from_utf8(l.layout.to_vec()).unwrap();
                (l.index, l.tier, layout)
            })
            .collect();
        Box::new(seen)
    }

    fn fold(&self, part: PiecePart) {
        let seen = part.downcast::<Vec<(u64, usize, String)>>().unwrap();
        self.lines.lock().unwrap().extend(*seen);
    }
}

/// The hook `report` makes its tallies through: every valid line, once, in block order, with
/// its tier; a line that fails a check is not given.
#[test]
fn verify_gives_its_observer_every_valid_line_once_in_block_order() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let game = Game::resolve(&data("mini-ruche.toml")).unwrap();
    let options = VerifyOptions {
        public_key: Some(keys::read_public_key(&w.path("keys/public-key.pem")).unwrap()),
        game: Some(game.clone()),
        ..VerifyOptions::default()
    };
    let csv = folder.join("block-00001.csv");
    let tickets = tickets(&folder, 1);
    let tiers: Vec<String> = game.stakes[0]
        .tiers()
        .into_iter()
        .map(emission_factory::money::canonical)
        .collect();
    let recorder = Recorder::default();
    let verdict = verify_block_observed(&csv, &options, &NoProgress, Some(&recorder));
    assert!(verdict.ok(), "{:?}", verdict.problems);
    assert_eq!(
        recorder.started.lock().unwrap().as_deref(),
        Some("mini-ruche")
    );
    let seen = recorder.lines.into_inner().unwrap();
    assert_eq!(seen.len(), tickets.len());
    for (i, ((index, tier, layout), (prize, expected))) in seen.iter().zip(&tickets).enumerate() {
        assert_eq!(*index, i as u64);
        assert_eq!(&tiers[*tier], prize, "ticket {i}");
        assert_eq!(layout, expected, "ticket {i}");
    }
    // One line tampered with: the block fails, and that line is not given.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    // Line 1501, ticket 1499: the last hex digit of its hash changed.
    let last = if lines[1500].ends_with('a') { "b" } else { "a" };
    lines[1500].pop();
    lines[1500].push_str(last);
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let recorder = Recorder::default();
    let verdict = verify_block_observed(&csv, &options, &NoProgress, Some(&recorder));
    assert!(!verdict.ok());
    let seen = recorder.lines.into_inner().unwrap();
    assert_eq!(seen.len(), tickets.len() - 1);
    assert!(
        seen.iter().all(|s| s.0 != 1499),
        "the tampered ticket is not given"
    );
}

#[test]
fn a_block_that_fails_verification_is_not_analysed_and_fails_the_report() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let csv = folder.join("block-00001.csv");
    let mut bytes = std::fs::read(&csv).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 1;
    std::fs::write(&csv, bytes).unwrap();
    let (json, said) = report(&w, &[&csv], 1);
    assert_eq!(json["blocks"][0]["verified"], false);
    assert!(said.contains("FAILED VERIFICATION"), "{said}");
}

/// Headless Chromium, or `None` (a failure when `CI` is set: .ci/run installs it).
fn chromium() -> Option<&'static str> {
    let found = Command::new("chromium").arg("--version").output().is_ok();
    if !found {
        cannot_run("chromium is not installed (apt-get install -y chromium; .ci/run does it)");
        return None;
    }
    Some("chromium")
}

/// The HTML report of a game that is not built in draws its sample tickets from the
/// definition kept in the emission folder, as `verify` and `seal` read it: without `--game`
/// it drew none before.
#[test]
fn the_html_report_of_a_custom_game_draws_its_tickets_without_game() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "2");
    assert!(folder.join("emission.game.toml").exists());
    w.ok(&[
        "report",
        "--html",
        "report.html",
        "--quiet",
        folder.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(w.path("report.html")).unwrap();
    for block in 1..=2 {
        for prize in ["2000", "4", "0"] {
            let id = format!("id=\"ticket-{block}-{prize}-0\"");
            assert!(
                page.contains(&id),
                "block {block} prize {prize}: no sample ticket drawn"
            );
        }
    }
}

#[test]
fn the_html_page_is_self_contained_and_renders_its_plots() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "2");
    let game = data("mini-ruche.toml");
    w.ok(&[
        "report",
        "--game",
        &game,
        "--html",
        "report.html",
        "--quiet",
        folder.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(w.path("report.html")).unwrap();
    // One file: no script, nothing fetched.
    for banned in ["<script", "http://", "https://", "<link", "src=\"http"] {
        let outside_svg_namespace = page.replace("http://www.w3.org/2000/svg", "");
        assert!(
            !outside_svg_namespace.contains(banned),
            "{banned} in the page"
        );
    }
    for block in 1..=2 {
        for plot in ["prizes-along", "gaps", "features", "forms"] {
            let id = format!("<svg id=\"{plot}-{block}\"");
            assert_eq!(page.matches(&id).count(), 1, "{id}");
        }
        // Sample tickets of every prize of the block.
        for prize in ["2000", "100", "20", "4", "2", "0"] {
            assert!(
                page.contains(&format!("id=\"ticket-{block}-{prize}-0\"")),
                "block {block} prize {prize}: no sample ticket drawn"
            );
        }
    }
    let Some(browser) = chromium() else { return };
    let profile = tempfile::tempdir().unwrap();
    let shot = w.path("report.png");
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", profile.path().display()),
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,3000",
            &format!("file://{}", w.path("report.html").display()),
        ])
        .output()
        .unwrap();
    assert!(
        shot.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = common::read(&shot);
    // Not blank: a page of plots compresses far worse than a white page, and decodes to
    // many colours.
    let colours = distinct_colours(&png);
    assert!(colours > 20, "{colours} colours: blank page?");
    if let Ok(dir) = std::env::var("REPORT_SCREENSHOT") {
        std::fs::copy(&shot, dir).unwrap();
    }
}

/// The number of distinct RGB colours in a PNG (every other pixel of every fourth row).
fn distinct_colours(png: &[u8]) -> usize {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).expect("a PNG frame");
    let bpp = info.line_size / info.width as usize;
    let mut seen = std::collections::HashSet::new();
    for y in (0..info.height as usize).step_by(4) {
        let line = &pixels[y * info.line_size..(y + 1) * info.line_size];
        for x in (0..info.width as usize).step_by(2) {
            seen.insert(line[x * bpp..x * bpp + 3.min(bpp)].to_vec());
        }
    }
    seen.len()
}

/// The report's fast path ([`Explain::features`]) must say what the full explanation says, on
/// every ticket of a real block of each mechanic: the same observations in the same order, the
/// same near misses, the wins of the prize column, and one form text per form key.
#[test]
fn the_features_path_agrees_with_the_explanation_on_every_ticket_of_a_block_of_each_game() {
    use emission_factory::game::Game;
    use emission_factory::mechanic::explain::{Feature, Features};
    use std::collections::HashMap;
    for (game, price) in [("mini-ruche", "2"), ("mini-maxi", "3"), ("mini-annee", "3")] {
        let w = Workdir::new();
        fixed_test_key(&w);
        let definition = data(&format!("{game}.toml"));
        w.ok(&[
            "emit",
            "--game",
            &definition,
            "--price",
            price,
            "--seed",
            SEED,
            "--signing-key",
            "keys/signing-key.pem",
            "--out",
            "out",
            "--quiet",
        ]);
        let g = Game::from_path(Path::new(&definition)).unwrap();
        let stake = g.stake(price.parse().unwrap()).unwrap();
        let exp = stake.mechanic.explainer();
        let names = exp.feature_names();
        let folder = w.path(&format!("out/{game}/{price}/e0001"));
        let mut forms: HashMap<u64, String> = HashMap::new();
        let mut features = Features::default();
        let (mut winners, mut observations) = (0, 0);
        let all = tickets(&folder, 1);
        assert_eq!(all.len() as u64, g.block_size);
        for (prize, layout) in &all {
            let e = exp.explain(layout).unwrap();
            exp.features(layout.as_bytes(), &mut features).unwrap();
            let mut fast: Vec<Feature> = features
                .seen()
                .iter()
                .map(|&(f, code)| {
                    let f = usize::from(f);
                    Feature::seen(names.seen[f], exp.seen_value(f, code))
                })
                .collect();
            observations += fast.len();
            for (k, name) in names.near.iter().enumerate() {
                fast.push(Feature::near_miss(name, features.near[k]));
            }
            assert_eq!(fast, e.features, "{game}: {layout}");
            let cents = emission_factory::money::cents(prize.parse().unwrap()).unwrap();
            assert_eq!(features.won, cents, "{game}: {layout}");
            let text = forms.entry(features.form).or_insert_with(|| e.form.clone());
            assert_eq!(*text, e.form, "{game}: two forms share a key: {layout}");
            winners += usize::from(prize != "0");
        }
        // The block shows what the comparison needs: winners, losers, several forms.
        assert!(winners > 0 && winners < all.len(), "{game}");
        assert!(forms.len() > 3, "{game}: {forms:?}");
        assert!(observations > all.len(), "{game}");
    }
}

/// The first page of the text report: everything before its list of contents.
fn first_page(text: &str) -> &str {
    &text[..text.find("\nCONTENTS\n").expect("a list of contents")]
}

/// The first page of the HTML report.
fn html_first_page(page: &str) -> &str {
    let start = page
        .find("<section id=\"first-page\">")
        .expect("a first page");
    let end = start + page[start..].find("</section>").expect("its end");
    &page[start..end]
}

/// A number written in scientific notation (`1.00e0`, `3.2e-5`), anywhere in `text`.
fn scientific(text: &str) -> Option<String> {
    let b = text.as_bytes();
    for i in 1..b.len().saturating_sub(1) {
        let next = b[i + 1];
        let exponent =
            next.is_ascii_digit() || (next == b'-' && b.get(i + 2).is_some_and(u8::is_ascii_digit));
        if b[i] != b'e' || !exponent {
            continue;
        }
        // A mantissa before it: digits, a point, a digit (`1.00e0`).
        let digits = b[..i]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let point = i.checked_sub(digits + 1);
        if digits > 0 && point.is_some_and(|p| b[p] == b'.' && p > 0 && b[p - 1].is_ascii_digit()) {
            let from = i.saturating_sub(12);
            return Some(String::from_utf8_lossy(&b[from..(i + 6).min(b.len())]).into());
        }
    }
    None
}

/// Emits one block of the mini game under `seed` into `out`, with the test key.
fn emit_one(w: &Workdir, seed: &str, out: &str) -> PathBuf {
    common::emit_mini_signed(w, seed, out, "1", &[])
}

/// Runs `report` (text, JSON, HTML) on `folder`, with `extra` arguments; returns the three.
fn report_all(
    w: &Workdir,
    folder: &Path,
    extra: &[&str],
    code: i32,
) -> (String, serde_json::Value, String) {
    let game = data("mini-ruche.toml");
    for f in ["r.json", "r.html"] {
        let _ = std::fs::remove_file(w.path(f));
    }
    let mut args = vec![
        "report",
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
        "--json",
        "r.json",
        "--html",
        "r.html",
        "--quiet",
    ];
    args.extend(extra);
    let folder = folder.display().to_string();
    args.push(&folder);
    let out = w.run_expect(&args, code);
    let json = serde_json::from_slice(&common::read(&w.path("r.json"))).unwrap();
    let html = std::fs::read_to_string(w.path("r.html")).unwrap();
    (text(&out), json, html)
}

/// The report's first page ties it to the files it describes: the record's, manifest's and
/// CSV's SHA-256, the Merkle root, the seed commitment, the key fingerprint, the definition's
/// SHA-256, the kind, and the tool (its binary's SHA-256 among them); in the text, the JSON
/// and the HTML. Two emissions with the same table (the same game, another seed) have
/// different first pages. p-values are written as decimals.
#[test]
fn the_first_page_names_what_it_describes_and_two_emissions_with_one_table_differ() {
    let w = Workdir::new();
    let a = emit_one(&w, SEED, "a");
    let other_seed = "ff".repeat(32);
    let b = emit_one(&w, &other_seed, "b");
    let mut pages = Vec::new();
    for folder in [&a, &b] {
        let (said, json, html) = report_all(&w, folder, &[], 0);
        let manifest: serde_json::Value =
            serde_json::from_slice(&common::read(&folder.join("block-00001.manifest.json")))
                .unwrap();
        let expected = [
            ("record", sha256_file(&folder.join("emission.json"))),
            (
                "manifest",
                sha256_file(&folder.join("block-00001.manifest.json")),
            ),
            ("csv", sha256_file(&folder.join("block-00001.csv"))),
            (
                "merkle",
                manifest["tickets_root"].as_str().unwrap().to_string(),
            ),
            (
                "seed",
                manifest["seed_sha256"].as_str().unwrap().to_string(),
            ),
            (
                "key",
                manifest["public_key_sha256"].as_str().unwrap().to_string(),
            ),
            (
                "game",
                manifest["game_definition_sha256"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            ),
            (
                "binary",
                sha256_file(Path::new(env!("CARGO_BIN_EXE_emission-factory"))),
            ),
        ];
        let first = first_page(&said);
        let html_first = html_first_page(&html);
        for (what, sha) in &expected {
            assert!(
                first.contains(&format!("{what:<9}{sha}"))
                    || first.contains(&format!("{what} {sha}"))
                    || first.contains(sha.as_str()),
                "{what} {sha} not on the first page:\n{first}"
            );
            assert!(
                html_first.contains(sha.as_str()),
                "{what} {sha} not on the HTML first page"
            );
        }
        // The JSON carries the same fields.
        let e = &json["emissions"][0];
        assert_eq!(e["record_sha256"], expected[0].1.as_str());
        assert_eq!(e["seed_sha256"], expected[4].1.as_str());
        assert_eq!(e["public_key_sha256"], expected[5].1.as_str());
        assert_eq!(e["game_definition_sha256"], expected[6].1.as_str());
        assert_eq!(e["kind"], "test");
        assert_eq!(e["generator"], manifest["generator"]);
        assert_eq!(e["seal_status"], "not sealed");
        assert!(e["seal_sha256"].is_null());
        let blk = &json["blocks"][0];
        assert_eq!(blk["manifest_sha256"], expected[1].1.as_str());
        assert_eq!(blk["csv_sha256"], expected[2].1.as_str());
        assert_eq!(blk["merkle_root"], expected[3].1.as_str());
        let tool = &json["tool"];
        assert_eq!(tool["binary_sha256"], expected[7].1.as_str());
        assert_eq!(tool["version"], env!("CARGO_PKG_VERSION"));
        // The commit `--version --verbose` names.
        let version = text(&w.ok(&["--version", "--verbose"]));
        let commit = version
            .lines()
            .find_map(|l| l.strip_prefix("commit:"))
            .expect("a commit line")
            .trim();
        assert_eq!(tool["commit"], commit, "{version}");
        for key in ["commit", "host", "date"] {
            assert!(!tool[key].as_str().unwrap().is_empty(), "{key}");
        }
        // The verdict and the Article 3 tables (of the emission, and per block) come first.
        assert!(first.contains("EMISSION REPORT: PASSED"), "{first}");
        assert!(first.contains("Article 3 over the emission: every count matches"));
        assert!(first.contains("  block     tickets"), "{first}");
        assert!(html_first.contains("id=\"verdict\">PASSED"));
        assert!(html.contains("<nav id=\"contents\">"));
        // Tests in words, with their p before and after Holm, as decimals.
        for t in json["blocks"][0]["order"]["tests"].as_array().unwrap() {
            assert!(t["what"].as_str().unwrap().contains('?'), "{t}");
        }
        assert!(said.contains("p after Holm"), "{said}");
        assert!(html.contains("what is tested"));
        assert_eq!(scientific(&said), None, "a p-value in scientific notation");
        assert_eq!(scientific(&html), None, "a p-value in scientific notation");
        // The identity lines fit the terminal too.
        for line in first.lines().filter(|l| !l.contains("out/")) {
            assert!(line.chars().count() <= 80, "{line:?}");
        }
        pages.push((
            first.replace(&tool_lines(first), ""),
            html_first.to_string(),
            json,
        ));
    }
    // The same table ...
    assert_eq!(
        pages[0].2["emissions"][0]["prizes"],
        pages[1].2["emissions"][0]["prizes"]
    );
    // ... and yet not the same first page.
    assert_ne!(pages[0].0, pages[1].0);
    assert_ne!(pages[0].1, pages[1].1);
}

/// The lines of the tool (the date changes from one run to the next).
fn tool_lines(first: &str) -> String {
    first
        .lines()
        .filter(|l| l.starts_with("made "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A sealed emission's report gives the seal's SHA-256 and that it seals the blocks read; a
/// block replaced after sealing (a valid block, signed with the emission's key) is a failure.
#[test]
fn the_report_checks_the_blocks_against_the_seal() {
    let w = Workdir::new();
    let folder = emit_one(&w, SEED, "out");
    w.ok(&[
        "seal",
        "--game",
        &data("mini-ruche.toml"),
        "--signing-key",
        "keys/signing-key.pem",
        "--blocks",
        "1",
        folder.to_str().unwrap(),
    ]);
    let (said, json, html) = report_all(&w, &folder, &[], 0);
    let seal_sha = sha256_file(&folder.join("emission.seal.json"));
    let e = &json["emissions"][0];
    assert_eq!(e["seal_sha256"], seal_sha.as_str());
    assert!(
        e["seal_status"]
            .as_str()
            .unwrap()
            .contains("signature valid"),
        "{e}"
    );
    assert!(first_page(&said).contains(&seal_sha));
    assert!(html_first_page(&html).contains(&seal_sha));
    // The block is replaced by another valid, signed one: the seal does not list it.
    let mut t = tickets(&folder, 1);
    t.swap(0, 1);
    t.swap(2, 3);
    write_signed_block(&w, &folder, 1, &t);
    let (said, json, _) = report_all(&w, &folder, &[], 1);
    assert_eq!(json["failed"], true);
    let failures = json["failures"].to_string();
    assert!(
        failures.contains("does not seal the blocks read"),
        "{failures}"
    );
    let words: Vec<&str> = first_page(&said).split_whitespace().collect();
    assert!(
        words.join(" ").contains("does not seal the blocks read"),
        "{said}"
    );
}

/// [`rewrite`] without its `verify` (a sealed folder's verify rejects the new block).
fn write_signed_block(w: &Workdir, folder: &Path, block: u32, tickets: &[(String, String)]) {
    let manifest_path = folder.join(format!("block-{block:05}.manifest.json"));
    let mut manifest = Manifest::from_bytes(&std::fs::read(&manifest_path).unwrap()).unwrap();
    let mut csv = String::from("serial,prize,layout,sha256\n");
    let mut merkle = MerkleRoot::new();
    for (i, (prize, layout)) in tickets.iter().enumerate() {
        let body = format!("mini-ruche-200-0001-{block:05}-{i:07},{prize},{layout}");
        let hash: [u8; 32] = Sha256::digest(body.as_bytes()).into();
        merkle.push(&hash);
        csv.push_str(&format!("{body},{}\n", hex::encode(hash)));
    }
    std::fs::write(folder.join(format!("block-{block:05}.csv")), &csv).unwrap();
    manifest.csv.bytes = csv.len() as u64;
    manifest.csv.sha256 = hex::encode(Sha256::digest(csv.as_bytes()));
    manifest.tickets_root = hex::encode(merkle.root());
    let bytes = manifest.to_bytes();
    std::fs::write(&manifest_path, &bytes).unwrap();
    let key = keys::read_signing_key(&w.path("keys/signing-key.pem")).unwrap();
    std::fs::write(
        folder.join(format!("block-{block:05}.manifest.json.sig")),
        keys::sign(&key, &bytes),
    )
    .unwrap();
}

/// Every integer anywhere in a JSON value.
fn integers(value: &serde_json::Value, out: &mut std::collections::BTreeSet<u64>) {
    match value {
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_u64() {
                out.insert(i);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| integers(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| integers(v, out)),
        _ => {}
    }
}

/// Every key anywhere in a JSON value.
fn keys_of(value: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match value {
        serde_json::Value::Array(a) => a.iter().for_each(|v| keys_of(v, out)),
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                out.insert(k.clone());
                keys_of(v, out);
            }
        }
        _ => {}
    }
}

/// The full report says it is confidential, on every page; `--public` says nothing of where
/// the winners are: no serial of any winning ticket (read from the CSV) in its text, JSON or
/// HTML, no index of a top-prize ticket, no prizes along the block, no streak position, no
/// sample ticket of a winning prize; it keeps the tables, odds, payout and verdicts.
#[test]
fn the_public_report_says_nothing_of_where_the_winners_are() {
    let w = Workdir::new();
    let folder = emit_one(&w, SEED, "out");
    let csv = std::fs::read_to_string(folder.join("block-00001.csv")).unwrap();
    // Winners: (index, serial, prize).
    let winners: Vec<(u64, String, String)> = csv
        .lines()
        .skip(1)
        .enumerate()
        .filter_map(|(i, line)| {
            let f: Vec<&str> = line.split(',').collect();
            (f[1] != "0").then(|| (i as u64, f[0].to_string(), f[1].to_string()))
        })
        .collect();
    // The top prizes (2000 € and 100 €): few tickets, each with its index listed in the full report.
    let top: Vec<u64> = winners
        .iter()
        .filter(|w| w.2 == "2000" || w.2 == "100")
        .map(|w| w.0)
        .collect();
    assert!(!top.is_empty(), "no top prize in the block");

    let (said, json, html) = report_all(&w, &folder, &[], 0);
    // Confidential: said at the top and bottom of the text, on every printed page of the HTML
    // (a fixed element repeats on each page), and in the JSON.
    assert!(
        said.starts_with("*** CONFIDENTIAL UNTIL THE EMISSION IS SOLD OUT ***"),
        "{said}"
    );
    assert!(said
        .trim_end()
        .ends_with("*** CONFIDENTIAL UNTIL THE EMISSION IS SOLD OUT ***"));
    assert_eq!(
        json["confidentiality"],
        "Confidential until the emission is sold out"
    );
    assert_eq!(json["public"], false);
    assert!(
        html.contains("id=\"confidentiality\">Confidential until the emission is sold out</div>")
    );
    assert!(
        html.contains("@top-center{content:"),
        "no notice in the printed pages' margins"
    );
    // The full report does show where they are (what the public one must not).
    let mut full = std::collections::BTreeSet::new();
    integers(&json, &mut full);
    assert!(top.iter().all(|i| full.contains(i)), "{top:?}");
    assert!(html.contains("id=\"prizes-along-1\"") && said.contains("from ticket"));
    assert!(html.contains("id=\"ticket-1-2000-0\""));

    let (public_said, public, public_html) = report_all(&w, &folder, &["--public"], 0);
    assert_eq!(public["public"], true);
    assert!(
        public_said.starts_with("*** Public version"),
        "{public_said}"
    );
    assert!(public_html.contains("id=\"confidentiality\">Public version"));
    for (name, doc) in [
        ("text", &public_said),
        ("JSON", &public.to_string()),
        ("HTML", &public_html),
    ] {
        for (index, serial, prize) in &winners {
            assert!(
                !doc.contains(serial.as_str()),
                "{name}: serial {serial} ({prize} €)"
            );
            // The serial's ticket number, as written in it.
            let number = serial.rsplit('-').next().unwrap();
            assert!(
                !doc.contains(&format!("-{number}")),
                "{name}: ticket {index}"
            );
        }
        for index in &top {
            assert!(
                !doc.contains(&format!("ticket {index}")),
                "{name}: ticket {index}"
            );
        }
        assert!(!doc.contains("from ticket"), "{name}");
        assert!(!doc.contains("prizes-along"), "{name}");
    }
    let mut numbers = std::collections::BTreeSet::new();
    integers(&public, &mut numbers);
    let shown: Vec<&u64> = top.iter().filter(|i| numbers.contains(i)).collect();
    assert!(
        shown.is_empty(),
        "indexes of top-prize tickets in the public JSON: {shown:?}"
    );
    let mut keys = std::collections::BTreeSet::new();
    keys_of(&public, &mut keys);
    for positional in ["along", "positions", "segments", "longest_losing_streak_at"] {
        assert!(
            !keys.contains(positional),
            "{positional} in the public JSON"
        );
    }
    // No sample ticket of a winning prize; the losers' stay.
    for prize in ["2000", "100", "20", "4", "2"] {
        assert!(
            !public_html.contains(&format!("id=\"ticket-1-{prize}-")),
            "{prize}"
        );
    }
    assert!(public_html.contains("id=\"ticket-1-0-0\""));
    // What a regulator publishes stays: the tables, odds, payout, every test and its verdict.
    let (b, pb) = (&json["blocks"][0], &public["blocks"][0]);
    for key in [
        "prizes",
        "payout_ratio",
        "odds",
        "expected_odds",
        "leaks",
        "forms",
    ] {
        assert_eq!(b[key], pb[key], "{key}");
    }
    assert_eq!(b["order"]["tests"], pb["order"]["tests"]);
    assert_eq!(
        json["emissions"][0]["prizes"],
        public["emissions"][0]["prizes"]
    );
    assert!(public_html.contains("<h3>Order tests</h3>"));
}

/// `--samples N` draws N tickets per prize (the default is 1).
#[test]
fn samples_sets_the_tickets_drawn_per_prize() {
    let w = Workdir::new();
    let folder = emit_one(&w, SEED, "out");
    let (_, _, html) = report_all(&w, &folder, &[], 0);
    assert!(html.contains("id=\"ticket-1-0-0\"") && !html.contains("id=\"ticket-1-0-1\""));
    let (_, _, html) = report_all(&w, &folder, &["--samples", "3"], 0);
    assert!(html.contains("id=\"ticket-1-0-2\"") && !html.contains("id=\"ticket-1-0-3\""));
    let (_, _, html) = report_all(&w, &folder, &["--samples", "0"], 0);
    assert!(!html.contains("id=\"ticket-1-"));
    let out = w.run_expect(&["report", "--samples", "11", folder.to_str().unwrap()], 2);
    assert!(
        text(&out).contains("--samples takes a number of tickets from 0 to 10"),
        "{}",
        text(&out)
    );
}

/// Printed (headless Chromium to PDF), the full report says "Confidential until the emission
/// is sold out" on every page, and the public one says it is the public version on every page.
#[test]
fn every_printed_page_says_whether_the_report_is_confidential() {
    let Some(browser) = chromium() else { return };
    let found = Command::new("pdftotext").arg("-v").output().is_ok();
    if !found {
        cannot_run(
            "pdftotext is not installed (apt-get install -y poppler-utils; .ci/run does it)",
        );
        return;
    }
    let w = Workdir::new();
    let folder = emit_mini(&w, "2");
    for (extra, notice) in [
        (None, "Confidential until the emission is sold out"),
        (Some("--public"), "Public version"),
    ] {
        let (_, _, _) = report_all(&w, &folder, extra.as_slice(), 0);
        let profile = tempfile::tempdir().unwrap();
        let pdf = w.path("r.pdf");
        let _ = std::fs::remove_file(&pdf);
        let out = Command::new(browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-pdf-header-footer",
                &format!("--user-data-dir={}", profile.path().display()),
                &format!("--print-to-pdf={}", pdf.display()),
                &format!("file://{}", w.path("r.html").display()),
            ])
            .output()
            .unwrap();
        assert!(
            pdf.exists(),
            "no PDF: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // pdftotext separates pages with a form feed.
        let out = Command::new("pdftotext")
            .args([pdf.to_str().unwrap(), "-"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let pages: Vec<&str> = text
            .split('\u{c}')
            .filter(|p| !p.trim().is_empty())
            .collect();
        assert!(pages.len() > 3, "{} pages", pages.len());
        for (i, page) in pages.iter().enumerate() {
            // Once in the top margin, once in the bottom one.
            assert!(
                page.matches(notice).count() >= 2,
                "page {} of {} does not say {notice:?}:\n{page}",
                i + 1,
                pages.len()
            );
        }
    }
}

/// Blocks that claim one emission number but were made under different records (another seed)
/// are not one emission: the report fails and says which blocks.
#[test]
fn blocks_of_two_emissions_under_one_number_fail_the_report() {
    let w = Workdir::new();
    let a = emit_one(&w, SEED, "a");
    let b = emit_one(&w, &"ee".repeat(32), "b");
    let game = data("mini-ruche.toml");
    let _ = std::fs::remove_file(w.path("r.json"));
    let out = w.run_expect(
        &[
            "report",
            "--game",
            &game,
            "--public-key",
            "keys/public-key.pem",
            "--json",
            "r.json",
            "--quiet",
            a.join("block-00001.csv").to_str().unwrap(),
            b.join("block-00001.csv").to_str().unwrap(),
        ],
        1,
    );
    let json: serde_json::Value = serde_json::from_slice(&common::read(&w.path("r.json"))).unwrap();
    let problems = json["emissions"][0]["problems"].to_string();
    assert!(
        problems.contains("were not made under the same emission"),
        "{problems}\n{}",
        text(&out)
    );
    assert_eq!(json["failed"], true);
}

/// A block that fails verification: the full report lists its problems (they name the line
/// and serial); the public one only counts them.
#[test]
fn the_public_report_of_a_failed_block_names_no_ticket() {
    let w = Workdir::new();
    let folder = emit_one(&w, SEED, "out");
    let csv = folder.join("block-00001.csv");
    let text_csv = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = text_csv.lines().map(String::from).collect();
    let serial = lines[1500].split(',').next().unwrap().to_string();
    let last = if lines[1500].ends_with('a') { "b" } else { "a" };
    lines[1500].pop();
    lines[1500].push_str(last);
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let (said, json, html) = report_all(&w, &folder, &[], 1);
    assert!(json.to_string().contains(&serial), "{said}");
    let (said, json, html_public) = report_all(&w, &folder, &["--public"], 1);
    for doc in [&said, &json.to_string(), &html_public] {
        assert!(!doc.contains(&serial));
        assert!(!doc.contains("line 1501"));
    }
    assert!(html.contains(&serial));
    assert!(json["blocks"][0]["problems"][0]["message"]
        .as_str()
        .unwrap()
        .contains("listed in the confidential report only"));
    assert_eq!(json["blocks"][0]["problems"][0]["code"], "report.redacted");
}

/// The near-miss rates the definition asks for (the mini ruche keeps La ruche d'or's
/// defaults: 35 % of rows that do not win show two P, 16 % of hives without honey three
/// pots, 16 % of tickets an EXTRA hive) are printed beside those observed, per part, on
/// losers and winners, in the text, the JSON and the HTML, the public version too.
#[test]
fn the_near_miss_rates_asked_are_shown_beside_those_observed() {
    let w = Workdir::new();
    let folder = emit_one(&w, SEED, "out");
    for extra in [&[][..], &["--public"][..]] {
        let (said, json, html) = report_all(&w, &folder, extra, 0);
        let rows = json["blocks"][0]["near_misses_asked"].as_array().unwrap();
        let names: Vec<&str> = rows
            .iter()
            .map(|r| r["feature"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["near_miss_rows", "near_miss_honey", "near_miss_extra"],
            "{rows:?}"
        );
        for (row, asked) in rows.iter().zip([0.35, 0.16, 0.16]) {
            assert_eq!(row["asked"].as_f64().unwrap(), asked, "{row}");
            for group in ["losers", "winners"] {
                let observed = row[group].as_f64().unwrap();
                let parts = row[format!("{group}_parts")].as_u64().unwrap();
                assert!(parts > 100, "{row}");
                // Thousands of parts: the shares drawn are near those asked (a row with honey
                // pots has fewer cells for P, so fewer near misses).
                assert!((observed - asked).abs() < 0.06, "{group}: {row}");
            }
            assert!(!row["of"].as_str().unwrap().is_empty());
        }
        assert!(
            said.contains("near misses asked and observed (share of parts)"),
            "{said}"
        );
        assert!(said.contains("rows that do not win with two P"), "{said}");
        assert!(html.contains("Near misses: asked and observed"));
        assert!(
            html.contains("<td>35.00 %</td>"),
            "the asked rate in the HTML"
        );
    }
}
