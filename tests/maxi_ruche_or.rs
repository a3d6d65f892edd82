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
        "54910b264688d1c1b13bc8c879794ffc62fcbf23a5c2f31e37433a61d4115121",
        "18e5c167c74e5e4aaa955da3d92c2f4af13b860a2fb7a6aaa2ad4c6e02ba4da0",
        "e4e495e902a6ce8178c414a3c6a9348d1d75fdb0e17186098401cdf5a87ccf7d",
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
