//! `lua.<name>` in rules (pure): the fetches, converters, actions and
//! services a Lua script registers, kept by name with their arguments as
//! written; the runtime looks the name up and calls the script.

/// A call of a function a script registered: `lua.<name>(<args>)` as a
/// fetch or converter, `lua.<name> <args>` as an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LuaCall {
    pub name: String,
    pub args: Vec<String>,
}

/// The call `name` spells when it starts with `lua.` (the name keeps
/// every dot after the prefix: `lua.foo.http` names `foo.http`).
pub fn call(name: &str, args: &[String]) -> Option<Result<LuaCall, String>> {
    let n = name.strip_prefix("lua.")?;
    Some(if n.is_empty() {
        Err(format!("'{name}': missing Lua function name"))
    } else {
        Ok(LuaCall {
            name: n.to_string(),
            args: args.to_vec(),
        })
    })
}
