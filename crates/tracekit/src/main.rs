//! `tracekit`: the command-line front end.

mod count;
mod print;
mod progress;
mod text;
mod timefmt;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Linux tracing and trace analysis: read, merge, print and count CTF (LTTng) traces.
#[derive(Parser)]
#[command(name = "tracekit", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print events as text, byte-identical to `babeltrace2 PATH...`.
    Print(print::PrintArgs),
    /// Decode every field of every event and count events per class.
    Count(count::CountArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Print(a) => print::run(&a),
        Command::Count(a) => count::run(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("tracekit: error: {e}");
            ExitCode::from(2)
        }
    }
}
