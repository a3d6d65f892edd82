//! `report` on real blocks of the mini game: the factory's own blocks pass every test; bad
//! blocks (rewritten from real ones and signed again with the test key) make the right test
//! fail and `report` exit 1; the HTML page renders in headless Chromium.

mod common;

use common::{cannot_run, data, fixed_test_key, text, Workdir, SEED};
use emission_factory::block::keys;
use emission_factory::block::manifest::Manifest;
use emission_factory::block::merkle::MerkleRoot;
use emission_factory::game::{Game, Stake};
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
    fixed_test_key(w);
    w.ok(&[
        "emit",
        "--game",
        &data("mini-ruche.toml"),
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--blocks",
        blocks,
        "--out",
        "out",
        "--quiet",
    ]);
    w.path("out/mini-ruche/2/e0001")
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
    assert_eq!(json["report_format"], 1);
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
        *self.started.lock().unwrap() = Some(manifest.game.clone());
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
