use super::*;

#[test]
fn builtin_games_load() {
    for (id, _) in BUILTIN {
        let g = Game::builtin(id).unwrap();
        assert_eq!(&g.id, id);
    }
}
