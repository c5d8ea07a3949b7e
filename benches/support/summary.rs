//! The table every benchmark prints at its end: each figure with its target and whether it
//! was met, so a reader sees the state at a glance. Targets are the issue's
//! (benches/README.md lists them).

use std::sync::Mutex;

struct Row {
    metric: String,
    value: String,
    target: String,
    met: Option<bool>,
}

static ROWS: Mutex<Vec<Row>> = Mutex::new(Vec::new());

fn number(value: f64) -> String {
    match value.abs() {
        v if v >= 100.0 => format!("{value:.0}"),
        v if v >= 10.0 => format!("{value:.1}"),
        _ => format!("{value:.2}"),
    }
}

fn push(metric: &str, value: String, target: String, met: Option<bool>) {
    let row = Row { metric: metric.to_string(), value, target, met };
    ROWS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(row);
}

/// A figure that should stay at or below `target`.
pub fn at_most(metric: &str, value: f64, target: f64, unit: &str) {
    let shown = format!("{} {unit}", number(value));
    push(metric, shown, format!("<= {} {unit}", number(target)), Some(value <= target));
}

/// A figure that should reach at least `target`.
pub fn at_least(metric: &str, value: f64, target: f64, unit: &str) {
    let shown = format!("{} {unit}", number(value));
    push(metric, shown, format!(">= {} {unit}", number(target)), Some(value >= target));
}

/// A figure reported without a target.
pub fn info(metric: &str, value: f64, unit: &str) {
    push(metric, format!("{} {unit}", number(value)), "-".to_string(), None);
}

/// Prints the table of everything recorded so far.
pub fn print(bench: &str) {
    let rows = ROWS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if rows.is_empty() {
        return;
    }
    let width = |f: fn(&Row) -> &str, title: &str| {
        rows.iter().map(|r| f(r).chars().count()).max().unwrap_or(0).max(title.len())
    };
    let (m, v, t) = (
        width(|r| &r.metric, "metric"),
        width(|r| &r.value, "value"),
        width(|r| &r.target, "target"),
    );
    println!("\n{bench}: summary");
    println!("{:m$}  {:>v$}  {:>t$}  result", "metric", "value", "target");
    for row in rows.iter() {
        let result = match row.met {
            Some(true) => "met",
            Some(false) => "MISSED",
            None => "",
        };
        println!("{:m$}  {:>v$}  {:>t$}  {result}", row.metric, row.value, row.target);
    }
}
