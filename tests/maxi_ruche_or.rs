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
        "49c999e9903431db9c54bf922ec716b003a4d76f7cee0348855e75cbec3d940c",
        "d63b71dd722859a00298cd9d8275a91832c2aaee36b1bd383901594cbe0673b2",
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
