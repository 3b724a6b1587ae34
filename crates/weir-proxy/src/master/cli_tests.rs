//! Unit tests of `cli.rs`.

use super::commands;

#[test]
fn commands_split_at_unescaped_semicolons() {
    assert_eq!(
        commands("@1 add acl f Mon\\ User\\ Agent\\;;@1 show acl f"),
        ["@1 add acl f Mon\\ User\\ Agent\\;", "@1 show acl f"]
    );
    assert_eq!(
        commands("@1; show info ;; show stat\n"),
        ["@1", "show info", "show stat"]
    );
    assert!(commands(" ; \n").is_empty());
}
