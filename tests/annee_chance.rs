//! A full 2013 Année de la chance block (2 000 000 tickets): emitted with a fixed seed by 1
//! and by 2 threads, byte-identical, and verified (with the forms each prize took).

mod common;
use common::*;

#[test]
fn full_block_verifies_and_is_the_same_with_1_and_2_threads() {
    let w = Workdir::new();
    let folder = emit_with_1_and_2_threads(&w, "annee-chance", "3");
    assert_pinned(
        &folder,
        "faac20b747d22575db88523924ffd449116d1319186289f6de379b7da0b035a8",
        "1da7d7c2cd1a7eee654375797f2e9cfe8901f3db1036ffdfbeb3e535ae2b03c3",
        "526a220d07e60c7d78d27815763a94835a8a46db3075c00e862e8a42932833b4",
    );
    verify_with_forms(&w, &folder, "2 000 000");
    assert_article_3(
        &folder,
        &[
            ("40000", 2),
            ("1000", 18),
            ("100", 1_700),
            ("50", 8_000),
            ("20", 20_000),
            ("10", 117_000),
            ("6", 287_000),
            ("0", 1_566_280),
        ],
        433_720,
        "3960000",
    );
}
