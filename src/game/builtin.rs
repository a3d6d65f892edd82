//! The game definitions shipped inside the binary.

/// Built-in definitions: (id, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("ruche-or", include_str!("../../games/ruche-or.toml")),
    (
        "maxi-ruche-or",
        include_str!("../../games/maxi-ruche-or.toml"),
    ),
    (
        "annee-chance",
        include_str!("../../games/annee-chance.toml"),
    ),
];

/// The text of the built-in definition `id`.
pub fn text(id: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(i, _)| *i == id).map(|(_, t)| *t)
}

/// The built-in ids.
pub fn ids() -> Vec<&'static str> {
    BUILTIN.iter().map(|(i, _)| *i).collect()
}
