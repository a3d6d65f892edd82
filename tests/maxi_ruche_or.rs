//! A full Maxi Ruche d'or block (7 500 000 tickets): emitted with a fixed seed by 1 and by 2
//! threads, byte-identical, and verified (with the forms each prize took).

mod common;
use common::*;

#[test]
fn full_block_verifies_and_is_the_same_with_1_and_2_threads() {
    let w = Workdir::new();
    let folder = emit_with_1_and_2_threads(&w, "maxi-ruche-or", "3");
    assert_pinned(
        &folder,
        "1ed33ceec5cf144de3a5f2af9dc5efda8d6a0b1c5b86eda4365f6da4457bf319",
        "776a9e1e14b122f6865664ae74f05b56a7f457236a2a4814893d369cc606bff1",
        "1962467d8675503aa925b5a264f3a8efbe32cd3767c2f07ef4acfc9b5918f2cf",
    );
    verify_with_forms(&w, &folder, "7 500 000");
    assert_article_3(
        &folder,
        &[
            ("100000", 3),
            ("5000", 15),
            ("500", 250),
            ("50", 50_000),
            ("20", 200_000),
            ("10", 187_500),
            ("5", 1_000_000),
            ("3", 1_000_000),
            ("0", 5_062_232),
        ],
        2_437_768,
        "16875000",
    );
}
