//! The failpoint table syntax, exactly the `fail` crate's (0.5):
//! `name=actions;name=actions`, where `actions` is `action[->action…]` and
//! an action is `[p%][cnt*]task[(arg)]`, with `task` one of `off`,
//! `return`, `sleep(ms)`, `panic`, `print`, `pause`, `yield`, `delay(ms)`.
//!
//! The parser follows the `fail` crate's step by step (arguments first,
//! then the probability, then the count), so that a string one accepts
//! the other accepts, with the same meaning (tests/failpoints.rs compares
//! them). Differences: `pause` (block until reconfigured) is rejected, as
//! a profiler must not park the program's threads; a probability that is
//! not a number from 0 to 100 (`NaN%`, `inf%`, `-5%`, `101%`) is rejected
//! (the `fail` crate fires `NaN%` and `101%` on every call and panics on a
//! negative one).

/// What a triggered action does.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Task {
    /// Nothing (and later actions of the chain are not tried).
    Off,
    /// Return an [`Injected`](super::Injected) error from a
    /// `#[profile(fail)]` function, with the optional message.
    Return(Option<String>),
    /// Sleep this many milliseconds.
    Sleep(u64),
    /// Panic with the message (default `failpoint <name> panic`).
    Panic(Option<String>),
    /// Print the message to stderr (default `failpoint <name> executed.`).
    Print(Option<String>),
    /// Yield the thread.
    Yield,
    /// Busy-wait this many milliseconds.
    Delay(u64),
}

/// One action of a chain: a task with its probability and count.
#[derive(Debug)]
pub(crate) struct Action {
    pub(crate) task: Task,
    /// Probability in [0, 1] (1: always; the `fail` crate's `f32`).
    pub(crate) freq: f32,
    /// How many more times it may fire (`None`: unbounded).
    pub(crate) count: Option<core::sync::atomic::AtomicUsize>,
}

fn partition(s: &str, pattern: char) -> (&str, Option<&str>) {
    match s.split_once(pattern) {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    }
}

/// Parses one action, `[p%][cnt*]task[(arg)]`.
pub(crate) fn action(s: &str) -> Result<Action, String> {
    let mut remain = s.trim();
    let mut args = None;
    // Arguments first: they may contain `%` or `*`.
    let (first, second) = partition(remain, '(');
    if let Some(second) = second {
        remain = first;
        let Some(arg) = second.strip_suffix(')') else {
            return Err("parentheses do not match".to_owned());
        };
        args = Some(arg);
    }
    let mut freq = 1f32;
    let (first, second) = partition(remain, '%');
    if let Some(second) = second {
        remain = second;
        match first.parse::<f32>() {
            Err(e) => return Err(format!("failed to parse frequency: {e}")),
            Ok(f) if (0.0..=100.0).contains(&f) => freq = f / 100.0,
            Ok(_) => return Err(format!("probability {first}% is not from 0% to 100%")),
        }
    }
    let mut count = None;
    let (first, second) = partition(remain, '*');
    if let Some(second) = second {
        remain = second;
        match first.parse::<usize>() {
            Err(e) => return Err(format!("failed to parse count: {e}")),
            Ok(c) => count = Some(core::sync::atomic::AtomicUsize::new(c)),
        }
    }
    let millis = || match args {
        None => Err(format!("{remain} requires a time in milliseconds")),
        Some(t) => t
            .parse::<u64>()
            .map_err(|e| format!("failed to parse timeout: {e}")),
    };
    let task = match remain {
        "off" => Task::Off,
        "return" => Task::Return(args.map(str::to_owned)),
        "sleep" => Task::Sleep(millis()?),
        "panic" => Task::Panic(args.map(str::to_owned)),
        "print" => Task::Print(args.map(str::to_owned)),
        "yield" => Task::Yield,
        "delay" => Task::Delay(millis()?),
        "pause" => return Err("pause is not supported (it would park the thread)".to_owned()),
        _ => return Err(format!("unrecognized command {remain:?}")),
    };
    Ok(Action { task, freq, count })
}

/// Parses a chain, `action[->action…]`.
pub(crate) fn actions(s: &str) -> Result<Vec<Action>, String> {
    s.split("->").map(action).collect()
}

/// One `name=actions` entry of a table, or why it is bad.
pub(crate) struct Entry<'a> {
    /// The entry as written (trimmed), for warnings.
    pub(crate) text: &'a str,
    /// The failpoint name and its chain, or what is wrong.
    pub(crate) parsed: Result<(&'a str, Vec<Action>), String>,
}

/// Splits a table on `;` and parses each non-empty entry.
pub(crate) fn table(s: &str) -> Vec<Entry<'_>> {
    s.trim()
        .split(';')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|text| Entry {
            text,
            parsed: match partition(text, '=') {
                (_, None) => Err("expected name=actions".to_owned()),
                (name, Some(order)) => actions(order).map(|a| (name, a)),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> (Task, f32, Option<usize>) {
        let a = action(s).unwrap();
        (
            a.task,
            a.freq,
            a.count.map(core::sync::atomic::AtomicUsize::into_inner),
        )
    }

    #[test]
    fn every_task_and_prefix() {
        assert_eq!(one("off"), (Task::Off, 1.0, None));
        assert_eq!(one("return"), (Task::Return(None), 1.0, None));
        assert_eq!(
            one("return(x%y*z)"),
            (Task::Return(Some("x%y*z".into())), 1.0, None)
        );
        assert_eq!(one("sleep(5)"), (Task::Sleep(5), 1.0, None));
        assert_eq!(one("delay(7)"), (Task::Delay(7), 1.0, None));
        assert_eq!(one("panic"), (Task::Panic(None), 1.0, None));
        assert_eq!(
            one(" panic(boom) "),
            (Task::Panic(Some("boom".into())), 1.0, None)
        );
        assert_eq!(
            one("print(hi)"),
            (Task::Print(Some("hi".into())), 1.0, None)
        );
        assert_eq!(one("yield"), (Task::Yield, 1.0, None));
        assert_eq!(one("3*off"), (Task::Off, 1.0, Some(3)));
        assert_eq!(one("50%off"), (Task::Off, 0.5, None));
        assert_eq!(
            one("20%3*panic(msg)"),
            (Task::Panic(Some("msg".into())), 0.2, Some(3))
        );
    }

    #[test]
    fn bad_actions_say_what_is_wrong() {
        let err = |s: &str| action(s).err().unwrap();
        assert_eq!(err("panic(x"), "parentheses do not match");
        assert!(err("x%off").starts_with("failed to parse frequency"));
        assert!(err("x*off").starts_with("failed to parse count"));
        assert!(err("sleep(abc)").starts_with("failed to parse timeout"));
        assert_eq!(err("sleep"), "sleep requires a time in milliseconds");
        assert_eq!(err("explode"), "unrecognized command \"explode\"");
        assert!(err("pause").starts_with("pause is not supported"));
        for p in ["NaN", "nan", "inf", "-inf", "-5", "101", "100.5", "1e3"] {
            assert_eq!(
                err(&format!("{p}%print")),
                format!("probability {p}% is not from 0% to 100%")
            );
        }
        assert_eq!(one("0%print").1, 0.0);
        assert_eq!(one("100%print").1, 1.0);
        assert_eq!(one("-0%print").1, 0.0);
    }

    #[test]
    fn tables_split_on_semicolons_and_keep_bad_entries_apart() {
        let t = table(" a=panic ; ;b=1*off->return;c;d=boom");
        assert_eq!(t.len(), 4);
        assert_eq!(t[0].parsed.as_ref().unwrap().0, "a");
        assert_eq!(t[1].parsed.as_ref().unwrap().1.len(), 2);
        assert_eq!(t[2].text, "c");
        assert_eq!(t[2].parsed.as_ref().err().unwrap(), "expected name=actions");
        assert_eq!(
            t[3].parsed.as_ref().err().unwrap(),
            "unrecognized command \"boom\""
        );
    }
}
